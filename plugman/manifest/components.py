"""Component path fields (`skills`, `commands`, `hooks`, …): relative, inside the root, present."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from plugman.core.jsonvalue import PluginFields
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


# Claude Code 2.1.328's shapes for the path fields of plugin.json and a marketplace entry: every
# path starts with './' ('.' too for skills), and these end in a suffix (a folder of agents is
# refused: list its files). A path that breaks either makes Claude refuse the whole plugin.
PATH_FIELDS = {
    "agents": (".md",),
    "commands": (),
    "skills": (),
    "hooks": (".json",),
    "mcpServers": (".json", ".mcpb", ".dxt"),
    "lspServers": (".json",),
    "outputStyles": (),
    "themes": (),
    "workflows": (),
}


def claude_path(rel: str, key: str) -> bool:
    """Whether Claude Code accepts `rel` as a path of the field `key`."""
    return rel.startswith("./") or (key == "skills" and rel == ".")


def escapes(rel: str, container: str) -> str:
    """`' and leaves the <container> root'` when `rel` is absolute or climbs out, else ''."""
    normal = os.path.normpath(rel.replace("\\", "/"))
    out = rel.startswith(("/", "\\", "~")) or normal == ".." or normal.startswith("../")
    return f" and leaves the {container} root" if out else ""


def check_paths(fields: PluginFields, sink: Sink) -> None:
    """Report each path of a component field Claude Code refuses (see PATH_FIELDS)."""
    for key, suffixes in PATH_FIELDS.items():
        for rel, where in as_list(fields.get(key), (key,)):
            if is_remote(rel) and key == "mcpServers":
                continue
            if not claude_path(rel, key):
                sink.error(
                    "path-not-relative",
                    f"{key} path {rel!r} does not start with './'{escapes(rel, 'plugin')}",
                    where,
                    f"write it as './{rel.lstrip('./')}' (Claude Code refuses the plugin)",
                )
            elif suffixes and not rel.endswith(suffixes):
                sink.error(
                    "path-suffix",
                    f"{key} path {rel!r} does not end in {' or '.join(suffixes)}",
                    where,
                    "list each agent file ('./agents/x.md'), not a folder"
                    if key == "agents"
                    else f"name a {suffixes[0]} file",
                )


def check_commands(value: Any, sink: Sink) -> None:
    """The object form of `commands`: each command has a `source` or a `content`, not both."""
    if not isinstance(value, dict):
        return
    for name, command in value.items():
        if not isinstance(command, dict):
            continue  # the schema says what is wrong
        source = command.get("source")
        if isinstance(source, str) and not claude_path(source, "commands"):
            sink.error(
                "path-not-relative",
                f"command {name!r} source {source!r} does not start with './'"
                + escapes(source, "plugin"),
                ("commands", name, "source"),
                f"write it as './{source.lstrip('./')}' (Claude Code refuses the plugin)",
            )
        given = [key for key in ("source", "content") if key in command]
        if len(given) != 1:
            sink.error(
                "schema-required",
                f"command {name!r} has {' and '.join(given) or 'neither source nor content'}",
                ("commands", name),
                "give a 'source' (a markdown file) or a 'content' (inline markdown), not both",
            )


def resolve_paths(
    value: Any, root: Path, sink: Sink, path: KeyPath, what: str, folders: bool = False
) -> list[Path]:
    """Every existing target of a path field (only folders with `folders`); escaping or
    missing paths are reported (a path Claude Code refuses, by `check_paths`, is skipped)."""
    found: list[Path] = []
    key = str(path[0]) if path else ""
    for rel, where in as_list(value, path):
        if is_remote(rel) or (key in PATH_FIELDS and not claude_path(rel, key)):
            continue
        target = inside(root, rel, sink, where, what)
        if target is None:
            continue
        if not target.exists():
            sink.error(
                "missing-file",
                f"{what} path {rel!r} does not exist",
                where,
                f"create {target} or fix the path",
            )
            continue
        if folders and not target.is_dir():
            sink.error(
                "not-a-folder",
                f"{what} path {rel!r} is a file, not a folder",
                where,
                f"name the folder holding it: './{Path(rel).parent.as_posix().lstrip('./')}'",
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


def relative(path: object) -> str:
    """A component path's plain relative form: `./skills/x/` -> `skills/x`, `./` -> ``."""
    parts = [p for p in str(path).replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


def only_listed_skills(fields: PluginFields) -> list[str] | None:
    """The `skills` an entry lists, when they are all a plugin gets: Claude Code 2.1.328 loads
    only the listed skills of an entry whose `source` is its marketplace's root (anthropics/
    skills' `document-skills` lists 4 of the repository's 17), and its default `skills/`
    folder only when listed (as `skills` or the root). None: the default folder loads too."""
    source = fields.get("source")
    if "skills" not in fields or not isinstance(source, str) or relative(source) != "":
        return None
    given = fields["skills"]
    listed = [relative(p) for p in (given if isinstance(given, list) else [given])]
    if not listed or any(p in ("", "skills") for p in listed):
        return None
    return listed
