"""The docs name modules that exist: ARCHITECTURE.md, README.md and docs/*.md stay true as
the code moves.

Checked in every one of them: each `plugman/...` path (a file, a folder, or a glob that
matches one) and each dotted `plugman.x.y` name (a module or package, optionally followed by
a name it defines: `plugman.cli.invoke`, `plugman.core.sources.LockedSource`). ARCHITECTURE.md
also names modules relative to the package, as the codemap does: a backticked path under a
layer (`plugins/catalog/registry.py`, `runtime/launch/`) or a backticked dotted name starting
with a layer (`agents.deploy.refresh`, `config.trust`) must exist the same way.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO

ROOT = REPO / "plugman"
LAYERS = sorted(
    {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    | {p.stem for p in ROOT.glob("*.py") if p.stem not in ("__init__", "__main__")}
)
# Named like a module but none: plugman's site, the gateway's logger, a git setting.
NOT_MODULES = {"plugman.dev", "plugman.gateway", "core.sshCommand"}

FULL_PATH = re.compile(r"(?<![\w./~<>-])plugman/[\w./*-]*")
FULL_DOTTED = re.compile(r"(?<![\w./-])plugman(?:\.[A-Za-z_]\w*)+")
TICKED = re.compile(r"`([^`\s]+)`")
LAYER_PATH = re.compile(rf"^(?:{'|'.join(LAYERS)})/[\w./*-]*$")
LAYER_DOTTED = re.compile(rf"^(?:{'|'.join(LAYERS)})(?:\.[A-Za-z_]\w*)+$")
LAYER_FILE = re.compile(rf"^(?:{'|'.join(LAYERS)})\.py$")  # `hookspecs.py`, `api.py`
# A file an agent or plugman reads, named like a layer: Codex's `config.toml`.
DATA_FILE = re.compile(r"\.(toml|json|jsonc|md|lock|ya?ml|sarif)$")


def _docs() -> list[Path]:
    return [REPO / "ARCHITECTURE.md", REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _path_exists(relative: str) -> bool:
    """`relative` (under plugman/) names a file or folder, or a glob matches one; a module may
    be named without `.py`, and with a name it defines after a dot (`plugins/lifecycle/updates.
    outdated`)."""
    relative = relative.rstrip(".").rstrip("/")
    if "*" in relative:
        return any(ROOT.glob(relative))
    if (ROOT / relative).exists() or (ROOT / f"{relative}.py").exists():
        return True
    folder, _, last = relative.rpartition("/")
    if "." in last and not last.endswith(".py"):
        module, _, name = last.partition(".")
        return _defines(ROOT / folder / f"{module}.py", name.split(".")[0])
    return False


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    if (base / "__init__.py").exists():
        return base / "__init__.py"
    if base.with_suffix(".py").exists():
        return base.with_suffix(".py")
    return None


def _defines(file: Path, name: str) -> bool:
    """The module at `file` defines, imports or lists `name` at its top (inside an `if` or a
    `try` there too: a name imported under TYPE_CHECKING for a lazy `__getattr__`)."""
    return file.exists() and name in _top_names(file)


@cache
def _top_names(file: Path) -> frozenset[str]:
    names: set[str] = set()
    body = list(ast.parse(file.read_text()).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                if isinstance(value, ast.List | ast.Tuple):
                    names.update(
                        e.value
                        for e in value.elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    )
        elif isinstance(node, ast.If | ast.Try):
            body += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            body += [n for h in getattr(node, "handlers", []) for n in h.body]
    return frozenset(names)


def _dotted_exists(dotted: str) -> bool:
    """`config.trust` or `agents.deploy.refresh` (without `plugman.`): the longest prefix that is
    a module, then at most two names, the first of which that module defines."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        file = _module_file(parts[:cut])
        if file is not None:
            rest = parts[cut:]
            return not rest or (len(rest) <= 2 and _defines(file, rest[0]))
    return False


def _unreal(doc: Path) -> list[str]:
    text = doc.read_text()
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        named = [(m, _path_exists(m.removeprefix("plugman/"))) for m in FULL_PATH.findall(line)]
        named += [
            (m, _dotted_exists(m.removeprefix("plugman.")))
            for m in FULL_DOTTED.findall(line)
            if m not in NOT_MODULES and not DATA_FILE.search(m)
        ]
        for tick in TICKED.findall(line):
            tick = tick.rstrip(".,;:")
            if tick in NOT_MODULES or DATA_FILE.search(tick):
                continue  # Claude's `plugins/installed_plugins.json`, a plugin's `commands/x.md`
            if LAYER_PATH.match(tick) or LAYER_FILE.match(tick):
                named.append((tick, _path_exists(tick)))
            elif LAYER_DOTTED.match(tick):
                named.append((tick, _dotted_exists(tick)))
        found += [f"{doc.name}:{number}: {name}" for name, real in named if not real]
    return found


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: p.name)
def test_every_module_a_doc_names_exists(doc: Path) -> None:
    unreal = _unreal(doc)
    assert not unreal, "names no module of plugman:\n" + "\n".join(unreal)


def test_the_check_finds_a_module_that_is_gone(tmp_path: Path) -> None:
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text(
        "`plugman/runtime/gateway_run.py`, plugman.plugins.install, `plugins/updates.outdated`,\n"
        "`agents.deploy.nothing_of_that_name`; but `plugman/runtime/launch/`, plugman.cli.invoke,\n"
        "`agents.deploy.refresh`, `plugins/lifecycle/updates.outdated` and plugman.toml are real.\n"
    )
    assert _unreal(doc) == [
        "ARCHITECTURE.md:1: plugman/runtime/gateway_run.py",
        "ARCHITECTURE.md:1: plugman.plugins.install",
        "ARCHITECTURE.md:1: plugins/updates.outdated",
        "ARCHITECTURE.md:2: agents.deploy.nothing_of_that_name",
    ]
