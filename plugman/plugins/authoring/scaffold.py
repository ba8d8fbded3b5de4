"""`plugman new`: a new plugin or marketplace folder that `plugman validate --strict` passes.

The folder is built beside its place under a temporary name and renamed into place at the
end, so a failure leaves nothing behind and never touches an existing folder (one that is
there and not empty is refused)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from plugman.core import fs
from plugman.core.errors import UsageError
from plugman.manifest.diagnostics import Sink
from plugman.manifest.names import check_marketplace_name, check_plugin_name
from plugman.plugins.authoring import templates

ALIASES = {f"{part}s": part for part in templates.COMPONENTS} | {"hooks": "hook"}
DEFAULT_VERSION = "0.1.0"


class Scaffolded(NamedTuple):
    kind: str  # plugin | marketplace
    name: str
    root: Path
    files: tuple[str, ...]  # what was written, relative to `root`


def components(values: Iterable[str]) -> tuple[str, ...]:
    """The components `--with` names (comma-separated, repeatable; plurals too), in the
    canonical order; UsageError for an unknown one."""
    wanted = set()
    for value in values:
        for word in (w.strip().lower() for w in value.split(",")):
            part = ALIASES.get(word, word)
            if part not in templates.COMPONENTS:
                raise UsageError(
                    f"--with: unknown component {word!r}",
                    hint=f"choose from {', '.join(templates.COMPONENTS)} (comma-separated)",
                )
            wanted.add(part)
    return tuple(part for part in templates.COMPONENTS if part in wanted)


def new_plugin(
    name: str,
    folder: Path | None = None,
    parts: Iterable[str] = (),
    *,
    description: str | None = None,
    author: str | None = None,
    version: str = DEFAULT_VERSION,
) -> Scaffolded:
    """Write a new plugin `name` into `folder` (default: ./name) with the components `parts`."""
    _check_name(name, "plugin")
    chosen = components(parts)
    about = description or f"The {name} plugin (describe what it does in one line)."
    files = templates.plugin_files(name, version, about, author, chosen)
    return _write("plugin", name, folder or Path(name), files)


def new_marketplace(
    name: str,
    folder: Path | None = None,
    *,
    description: str | None = None,
    owner: str | None = None,
) -> Scaffolded:
    """Write a new marketplace `name` into `folder` (default: ./name): its marketplace.json
    with no plugins yet, and the `plugins/` folder its plugins go in."""
    _check_name(name, "marketplace")
    about = description or f"The {name} plugin marketplace."
    files = templates.marketplace_files(name, about, owner or name)
    return _write("marketplace", name, folder or Path(name), files)


def _check_name(name: str, kind: str) -> None:
    """The errors and warnings `validate --strict` would give the name, as a UsageError."""
    sink = Sink("")
    if kind == "plugin":
        check_plugin_name(name, sink, ())
    else:
        check_marketplace_name(name, sink, ())
    if sink.items:
        found = sink.items[0]
        raise UsageError(
            found.message,
            hint=found.hint or f"choose another {kind} name",
        )


def _write(kind: str, name: str, folder: Path, files: dict[str, str]) -> Scaffolded:
    folder = folder.absolute()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(
            f"{folder} already exists" + (" and is not empty" if folder.is_dir() else ""),
            hint="choose another name or folder (--dir), or remove that one first",
        )
    made = _missing_parents(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".new", dir=folder.parent))
    try:
        for rel, text in files.items():
            mode = 0o755 if rel in templates.EXECUTABLE else 0o644
            fs.atomic_write(temp / rel, text.encode("utf-8"), mode=mode)
        for path in sorted({p for p in temp.rglob("*") if p.is_dir()} | {temp}):
            path.chmod(0o755)
        temp.replace(folder)  # an empty folder there is replaced; a full one was refused
        fs.sync_dir(folder.parent)
    except BaseException:
        fs.remove_tree(temp)
        for parent in made:
            parent.rmdir()
        raise
    return Scaffolded(kind, name, folder, tuple(sorted(files)))


def _missing_parents(folder: Path) -> list[Path]:
    """The parents of `folder` that do not exist yet, deepest first (to remove on failure)."""
    missing = []
    for parent in folder.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing
