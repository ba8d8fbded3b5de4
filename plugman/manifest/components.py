"""Component path fields (`skills`, `commands`, `hooks`, …): relative, inside the root, present."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from plugman.manifest.diagnostics import KeyPath, Sink


def as_list(value: Any, path: KeyPath) -> list[tuple[str, KeyPath]]:
    """The strings of a `string | string[]` field with their key paths (other types skipped)."""
    if isinstance(value, str):
        return [(value, path)]
    if isinstance(value, list):
        return [(item, (*path, i)) for i, item in enumerate(value) if isinstance(item, str)]
    return []


def is_remote(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def inside(
    root: Path, rel: str, sink: Sink, path: KeyPath, what: str, container: str = "plugin"
) -> Path | None:
    """`rel` joined to `root` when it stays inside it; otherwise report `path-escape`."""
    if rel.startswith(("/", "\\", "~")) or (len(rel) > 1 and rel[1] == ":"):
        sink.error(
            "path-escape",
            f"{what} path {rel!r} is absolute",
            path,
            f"use a path relative to the {container} root that starts with './'",
        )
        return None
    normal = os.path.normpath(rel.replace("\\", "/"))
    if normal == ".." or normal.startswith("../"):
        sink.error(
            "path-escape",
            f"{what} path {rel!r} leaves the {container} root",
            path,
            f"only the {container} folder is installed; move the file inside it",
        )
        return None
    target = root / normal
    try:
        linked = target.is_symlink() or any(
            p.is_symlink() for p in target.parents if root in p.parents
        )
    except OSError as exc:  # ENAMETOOLONG: no such file can exist
        sink.error(
            "missing-file",
            f"{what} path {rel!r} cannot exist: {exc.strerror or exc}",
            path,
            "fix the path",
        )
        return None
    if linked:
        real, base = target.resolve(), root.resolve()
        if real != base and base not in real.parents:
            sink.error(
                "path-escape",
                f"{what} path {rel!r} points outside the {container} through a symbolic link",
                path,
                "replace the link with the file itself",
            )
            return None
    return target


def resolve_paths(
    value: Any, root: Path, sink: Sink, path: KeyPath, what: str, suffix: str | None = None
) -> list[Path]:
    """Every existing target of a path field; bad, escaping or missing paths are reported."""
    found: list[Path] = []
    for rel, where in as_list(value, path):
        if is_remote(rel):
            continue
        target = inside(root, rel, sink, where, what)
        if target is None:
            continue
        if not (rel.startswith("./") or rel == "."):
            sink.warning(
                "path-not-relative",
                f"{what} path {rel!r} does not start with './'",
                where,
                f"write it as './{rel.lstrip('./')}'",
            )
        if suffix and not rel.endswith(suffix) and not target.is_dir():
            sink.warning("path-suffix", f"{what} path {rel!r} should end in {suffix}", where)
        if not target.exists():
            sink.error(
                "missing-file",
                f"{what} path {rel!r} does not exist",
                where,
                f"create {target} or fix the path",
            )
            continue
        found.append(target)
    return found


def markdown_files(paths: list[Path]) -> list[Path]:
    """The `.md` files among `paths`, expanding directories (one level, sorted)."""
    files: list[Path] = []
    for target in paths:
        if target.is_dir():
            files.extend(sorted(p for p in target.glob("*.md") if p.is_file()))
        elif target.suffix == ".md":
            files.append(target)
    return files
