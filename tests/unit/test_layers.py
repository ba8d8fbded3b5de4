"""The rules the tree keeps (ARCHITECTURE.md), read from one parse of every module:

- imports only point down the layers, at module level or inside a function;
- a sub-package (a package inside a layer package: `plugman/plugins/sources/`) shows a face: its
  `__init__` names in `__all__` the submodules and names the rest of plugman may import; the
  rest of the sub-package is its own (tests may reach in);
- no import cycle, between modules or between packages (`_graph` says what counts);
- an import inside a function says why on its line or the line above (a measured start-up cost,
  a cycle it avoids): imports belong at the top of a module, so each exception is deliberate;
- a module holds one idea (a guide, not a cap: one over 500 lines fails, as a sign that it holds
  more than one);
- nothing below `cli/` and `output/` prints, exits or imports rich.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
PACKAGES = {name for name, file in MODULES.items() if file.name == "__init__.py"}
# plugman.<layer>.<name>/: a package inside a layer package (and any package inside one of those)
SUBPACKAGES = {name for name in PACKAGES if name.count(".") >= 2}


@dataclass(frozen=True)
class Source:
    name: str
    file: Path
    text: str
    lines: list[str]
    tree: ast.Module


@cache
def _source(name: str) -> Source:
    text = MODULES[name].read_text(encoding="utf-8")
    return Source(name, MODULES[name], text, text.splitlines(), ast.parse(text))


@dataclass(frozen=True)
class Import:
    """One import statement of a plugman module, resolved: `module` is what `import` names or
    what `from` imports from (absolute); `names` the names a `from` takes from it."""

    source: str
    module: str
    names: tuple[str, ...]
    line: int
    end: int
    in_function: bool
    type_checking: bool  # under `if TYPE_CHECKING:`: for the type checker only, never run

    def targets(self) -> set[str]:
        """The plugman modules whose code this import needs: `import a.b` needs a.b (its
        packages are loaded first, and need nothing of it); `from a import b` needs the module
        a.b where there is one, else a's `__init__`, where the name b lives."""
        if not self.names:
            return {self.module} & MODULES.keys()
        found = {f"{self.module}.{n}" for n in self.names} & MODULES.keys()
        if len(found) < len(self.names) and self.module in MODULES:
            found.add(self.module)
        return found

    def where(self) -> str:
        return f"{MODULES[self.source].relative_to(ROOT.parent)}:{self.line}"


def _statements(tree: ast.Module) -> Iterator[tuple[ast.stmt, bool, bool]]:
    """Every statement of `tree` (where imports are), with whether it is inside a function (run
    later, when called) and under `if TYPE_CHECKING:` (for the type checker only, never run)."""
    stack: list[tuple[ast.stmt, bool, bool]] = [(node, False, False) for node in tree.body]
    while stack:
        node, in_function, typing = stack.pop()
        yield node, in_function, typing
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        test = getattr(node, "test", None) if isinstance(node, ast.If) else None
        guarded = "TYPE_CHECKING" in (getattr(test, "id", ""), getattr(test, "attr", ""))
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, ()):
                stack.append((child, inner, typing or (guarded and field == "body")))


@cache
def _imports(name: str) -> tuple[Import, ...]:
    """Every import of `name`: at module level, in a function, under TYPE_CHECKING."""
    source = _source(name)
    package = name if source.file.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, in_function, typing in _statements(source.tree):
        if isinstance(node, ast.Import):
            pairs = [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            pairs = [(base, tuple(alias.name for alias in node.names))]
        else:
            continue
        end = node.end_lineno or node.lineno
        found += [
            Import(name, module, names, node.lineno, end, in_function, typing)
            for module, names in pairs
            if module.split(".")[0] == "plugman" or in_function
        ]
    return tuple(found)


def _plugman_imports(name: str, typing: bool = False) -> Iterator[Import]:
    """The imports of plugman modules `name` runs (and with `typing`, those for types only)."""
    for found in _imports(name):
        if found.module.split(".")[0] == "plugman" and (typing or not found.type_checking):
            yield found


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
        for found in _plugman_imports(name):
            for target in found.targets():
                there = _layer(target)
                if there != "__init__" and LAYERS.index(there) > LAYERS.index(here):
                    upward.append(f"{found.where()} imports {target}")
    assert upward == []


def _face(package: str) -> set[str]:
    """The names a sub-package's `__init__` lists in `__all__` (a list or tuple of strings)."""
    for node in _source(package).tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = ast.literal_eval(node.value) if node.value else ()
                return set(value)
    return set()


def test_every_subpackage_shows_a_face() -> None:
    faceless = sorted(p for p in SUBPACKAGES if not _face(p))
    assert faceless == [], (
        "a package inside a layer package names what the rest of plugman may use, as __all__ in "
        f"its __init__.py (its public submodules and re-exported names): {faceless}"
    )


def _reached_into(found: Import) -> list[str]:
    """What `found` takes from a sub-package it is outside of that its face does not show."""
    taken = [f"{found.module}.{n}" for n in found.names] if found.names else [found.module]
    reached = []
    for package in SUBPACKAGES:
        if found.source == package or found.source.startswith(package + "."):
            continue  # inside: all of it is its own
        for name in taken:
            if name.startswith(package + "."):
                first = name[len(package) + 1 :].split(".")[0]
                if first not in _face(package):
                    reached.append(f"{package}: {first}")
    return reached


def test_only_a_subpackages_face_is_used_outside_it() -> None:
    reaching = [
        f"{found.where()} uses {what}, not in its __all__"
        for name in MODULES
        for found in _plugman_imports(name, typing=True)
        for what in _reached_into(found)
    ]
    assert reaching == [], (
        "outside a sub-package, import only the package and what its __init__'s __all__ names "
        "(add a name there if it is meant to be used outside)"
    )


def _package(name: str) -> str:
    """The package a module stands for in the package graph: its own (a package's `__init__`,
    the package); a module beside the layers (`plugman.extensions`, `plugman.__main__`) is a
    layer of its own, so itself."""
    if name in PACKAGES or name.count(".") == 1:
        return name
    return name.rpartition(".")[0]


def test_the_face_rule_finds_a_reach_inside() -> None:
    def taking(source: str, module: str, *names: str) -> list[str]:
        return _reached_into(Import(source, module, names, 1, 1, False, False))

    assert "transport" not in _face("plugman.core.oci")  # core.oci's own
    assert taking("plugman.plugins.authoring.publish", "plugman.core.oci.transport") == [
        "plugman.core.oci: transport"
    ]
    assert taking("plugman.plugins.authoring.publish", "plugman.core.oci", "transport") == [
        "plugman.core.oci: transport"
    ]
    assert taking("plugman.plugins.authoring.publish", "plugman.core.oci", "client") == []
    assert taking("plugman.core.oci.client", "plugman.core.oci.transport") == []  # inside


def _graph(packages: bool) -> dict[str, set[str]]:
    """The import graph, from every import a module runs: at module level and in functions
    (a function's import runs too, later), not under `if TYPE_CHECKING:` (never run).

    Modules: an edge from each module to each module whose code an import of it needs
    (`Import.targets`; a module's packages, loaded before it, are no edge of it).
    Packages: each module stands for its package (a package's `__init__` for the package itself)
    and an edge joins two packages when a module of one imports a module of the other; an edge
    to a package's own ancestor counts too (a sub-package using its parent's modules, while a
    module of the parent uses the sub-package, is a cycle), except to the ancestor's `__init__`
    alone, which any module of a package may read (the ancestor's own modules are the cycle)."""
    edges: dict[str, set[str]] = {}
    for name in MODULES:
        here = _package(name) if packages else name
        for found in _plugman_imports(name):
            for target in found.targets():
                there = target
                if packages:
                    there = _package(target)
                    if target in PACKAGES and here.startswith(there + "."):
                        continue
                if there != here:
                    edges.setdefault(here, set()).add(there)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _path(edges: dict[str, set[str]], component: list[str]) -> str:
    """One cycle through a component, as `a -> b -> a`, for the failure message."""
    inside = set(component)
    start, path = component[0], [component[0]]
    seen = {start}
    while True:
        step = sorted(edges[path[-1]] & inside)
        back = start if start in step else next((s for s in step if s not in seen), step[0])
        path.append(back)
        if back in seen:
            return " -> ".join(path[path.index(back) :])
        seen.add(back)


def test_no_import_cycle_between_modules() -> None:
    edges = _graph(packages=False)
    assert [_path(edges, c) for c in _cycles(edges)] == []


def test_no_import_cycle_between_packages() -> None:
    edges = _graph(packages=True)
    assert [_path(edges, c) for c in _cycles(edges)] == []


def test_the_cycle_rule_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert [_path(edges, c) for c in _cycles(edges)] == ["a -> b -> c -> a"]


def test_an_import_inside_a_function_says_why() -> None:
    silent = set()
    for name in MODULES:
        source = _source(name)
        imports = _imports(name)
        starts = {i.end + 1: i.line for i in imports}  # a run of imports: one comment says why
        for found in imports:
            first = found.line
            while first in starts:
                first = starts[first]
            above = source.lines[first - 2].strip().startswith("#")
            said = above or any("#" in line for line in source.lines[first - 1 : found.end])
            if found.in_function and not found.type_checking and not said:
                silent.add(found.where())
    assert sorted(silent) == [], (
        "imports go at the top of the module; one kept inside a function (or a run of them) "
        "says why on its line or the line above (`# lazy: <what it costs which command>`)"
    )


# A guide, not a cap: a module holds one idea; past ~500 lines it likely holds two.
MODULE_LINES = 500


def test_modules_hold_one_idea() -> None:
    long = {
        str(MODULES[name].relative_to(ROOT.parent)): n
        for name in MODULES
        if (n := len(_source(name).lines)) > MODULE_LINES
    }
    assert long == {}, (
        f"a module holds one idea; these are over {MODULE_LINES} lines, so split each where "
        f"its ideas part (not just to get under the line count): {long}"
    )


def test_only_cli_and_output_print_exit_or_import_rich() -> None:
    leaks = []
    for name in MODULES:
        source = _source(name)
        if _layer(name) in TOP or not any(
            w in source.text for w in ("print", "exit", "typer", "rich")
        ):
            continue
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                imported = [node.module or ""]
            else:
                imported = []
            called = ""
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
                called = ast.unparse(node.func)
            if called in ("print", "sys.exit", "exit") or any(
                i.split(".")[0] in ("typer", "rich") for i in imported
            ):
                leaks.append(
                    f"{MODULES[name].relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
                )
    assert leaks == []
