"""The rules the tree keeps (ARCHITECTURE.md): imports only point down the layers, at module
level or inside a function; no import cycle; a module holds one idea (a guide, not a cap: one
over 500 lines fails, as a sign that it holds more than one); nothing below `cli/` and `output/`
prints, exits or imports typer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "plugman"
# Bottom to top; a module may import its own layer and any layer before it.
LAYERS = [
    "core",
    "manifest",
    "config",
    "runtime",
    "hookspecs",
    "extensions",
    "agents",
    "plugins",
    "commands",
    "doctor",
    "output",
    "cli",
    "__main__",
    "api",  # the extensions' public names (no plugman module imports it)
    "testing",  # the extensions' pytest plugin (likewise)
]
TOP = ("output", "cli", "__main__")


def _modules() -> dict[str, Path]:
    found = {}
    for file in ROOT.rglob("*.py"):
        parts = file.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = file
    return found


MODULES = _modules()


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of import nodes under `if TYPE_CHECKING:` (types only, never run)."""
    return {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }


def _imports(name: str) -> list[tuple[str, int, bool]]:
    """(imported plugman module, line, at module level) for every import `name` runs."""
    file = MODULES[name]
    tree = ast.parse(file.read_text(encoding="utf-8"))
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    skipped = _type_checking_only(tree)
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        # a package is loaded before its modules: importing an ancestor adds no edge
        found += [
            (t, node.lineno, id(node) in top)
            for t in targets
            if t in MODULES and not name.startswith(t + ".")
        ]
    return found


def _layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_imports_only_point_down() -> None:
    upward = []
    for name in MODULES:
        here = _layer(name)
        if here == "__init__":
            continue
        assert here in LAYERS, f"{name}: a package with no place in the layers"
        for target, line, _ in _imports(name):
            there = _layer(target)
            if there != "__init__" and LAYERS.index(there) > LAYERS.index(here):
                upward.append(f"{MODULES[name].relative_to(ROOT.parent)}:{line} imports {target}")
    assert upward == []


@pytest.mark.parametrize("module_level_only", [True, False])
def test_no_import_cycles(module_level_only: bool) -> None:
    edges = {
        name: {t for t, _, top in _imports(name) if t != name and (top or not module_level_only)}
        for name in MODULES
    }
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: list[str]) -> list[str] | None:
        state[name] = 1
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target] if target in path else [name, target]
            if target not in state and (cycle := visit(target, [*path, target])):
                return cycle
        state[name] = 2
        return None

    for name in sorted(MODULES):
        if name not in state and (cycle := visit(name, [name])):
            pytest.fail("import cycle: " + " -> ".join(cycle))


# A guide, not a cap: a module holds one idea; past ~500 lines it likely holds two.
MODULE_LINES = 500


def test_modules_hold_one_idea() -> None:
    long = {
        str(f.relative_to(ROOT.parent)): n
        for f in MODULES.values()
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert long == {}, (
        f"a module holds one idea; these are over {MODULE_LINES} lines, so split each where "
        f"its ideas part (not just to get under the line count): {long}"
    )


def test_only_cli_and_output_print_exit_or_import_typer() -> None:
    leaks = []
    for name, file in MODULES.items():
        if _layer(name) in TOP:
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                imported = [node.module or ""]
            else:
                imported = []
            called = ast.unparse(node.func) if isinstance(node, ast.Call) else ""
            if called in ("print", "sys.exit", "exit") or any(
                i.split(".")[0] in ("typer", "rich") for i in imported
            ):
                leaks.append(f"{file.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}")
    assert leaks == []
