"""A stored plugin loaded through a cache of its load: resolution loads every installed plugin at
every run, and the stored copy it loads is content-addressed and write-once, so what the load
gives (the plugin, its findings, the files it read) is written once to a small file (a JSON
header line, then the JSON body) in a folder kept for it (`<store>/.loaded/<sha256>/`, outside
the hashed tree) and read back after.

What the cache holds comes from the stored copy alone (and the marketplace entry that defines a
`strict: false` plugin, which is part of its key): a plugin's options, user config, policy and
scopes are applied to the loaded plugin afterwards, by the caller. A cache file is used only when
it names the same content address, stored path, entry, cache format and loader code (plugman's
version and the stamp of `plugman/manifest`'s own files) and its body still hashes to the sum in
its header; anything else, a damaged or unreadable file included, is a miss: the plugin is
loaded from its files as without a cache, and the cache written again (when the store allows)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from plugman import __version__
from plugman.core.jsonvalue import PluginFields
from plugman.manifest import plugin
from plugman.manifest.diagnostics import Diagnostic, Sink
from plugman.manifest.model import (
    Dependency,
    HookHandler,
    McpServer,
    Plugin,
    Skill,
    UserOption,
)
from plugman.manifest.reader import Report

FORMAT = 1
MANIFEST_DIR = Path(__file__).parent


class MissError(Exception):
    """A cache file that cannot be used (not what this load would give, or damaged)."""


def load(root: Path, report: Report, fields: PluginFields | None, folder: Path) -> Plugin | None:
    """The stored plugin at `root` as `plugin.load_as_installed` loads it (`fields`: the
    marketplace entry defining it), its findings added to `report`; through the cache files in
    `folder` (the one kept for `root`'s content address)."""
    header = _header(root, fields)
    file = folder / f"{header['entry'] or 'strict'}.load"  # a JSON header line, then the body
    try:
        loaded, diagnostics, files = read(file, header, root)
    except MissError:
        own = Report()  # this plugin's findings alone, whatever was loaded before it
        declaration = plugin.Declaration(fields, Sink(str(root))) if fields else None
        loaded = plugin.load(root, own, declaration, strict=fields is None)
        diagnostics, files = own.diagnostics, own.files
        write(file, header, encode(loaded, diagnostics, files))
    report.diagnostics.extend(diagnostics)
    report.add_files(files)
    return loaded


def _header(root: Path, fields: PluginFields | None) -> dict[str, Any]:
    entry = ""
    if fields is not None:
        text = json.dumps(fields, sort_keys=True, ensure_ascii=False)
        entry = "entry-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return {
        "format": FORMAT,
        "code": code_stamp(),
        "digest": root.name,
        "root": str(root),
        "entry": entry,
    }


@cache
def code_stamp() -> str:
    """plugman's version and the name, size and mtime of every file of `plugman/manifest` (the
    loader and its schemas): a changed loader is a miss, a released or a development tree."""
    digest = hashlib.sha256(__version__.encode())
    for folder in (MANIFEST_DIR, MANIFEST_DIR / "schemas"):
        with os.scandir(folder) as entries:
            for item in sorted(entries, key=lambda e: e.name):
                if item.is_file():
                    stat = item.stat()
                    digest.update(f"{item.name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def read(
    file: Path, header: dict[str, Any], root: Path
) -> tuple[Plugin | None, list[Diagnostic], list[str]]:
    """The load kept in `file`, or MissError."""
    try:
        data = file.read_bytes()
        head, _, body = data.partition(b"\n")
        found = json.loads(head)
        if not isinstance(found, dict) or found.pop("sum", None) != _sum(body):
            raise MissError
        if found != header:
            raise MissError
        return decode(json.loads(body), root)
    except (OSError, ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        raise MissError from exc


def write(file: Path, header: dict[str, Any], payload: list[Any] | None) -> None:
    """Keep a load in `file` (atomically); quietly nothing when it cannot be written or would not
    read back as it is."""
    if payload is None:
        return
    try:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
        if json.loads(body) != payload:  # a value JSON does not keep as it is: no cache
            return
        head = json.dumps({**header, "sum": _sum(body)}).encode()
        file.parent.mkdir(parents=True, exist_ok=True)
        part = file.with_name(f".{file.name}.{os.getpid()}")
        part.write_bytes(head + b"\n" + body)
        part.replace(file)
    except (OSError, ValueError, TypeError, RecursionError):
        return


def _sum(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def encode(
    loaded: Plugin | None, diagnostics: list[Diagnostic], files: list[str]
) -> list[Any] | None:
    """A load as JSON values; None when it holds something JSON cannot carry."""
    try:
        return [_plugin(loaded) if loaded else None, [list(d) for d in diagnostics], files]
    except TypeError:
        return None


def _plugin(p: Plugin) -> list[Any]:
    return [
        p.name,
        str(p.root),
        p.format,
        p.manifest,
        p.version,
        p.description,
        [[s.name, str(s.path), s.description, s.frontmatter] for s in p.skills],
        [str(path) for path in p.commands],
        [str(path) for path in p.agents],
        [list(h) for h in p.hooks],
        [list(s) for s in p.mcp_servers],
        [list(d) for d in p.dependencies],
        [list(d) for d in p.optional_dependencies],
        [list(o) for o in p.user_config],
    ]


def decode(value: Any, root: Path) -> tuple[Plugin | None, list[Diagnostic], list[str]]:
    """What `encode` gave, checked; MissError when it is not that."""
    raw, diagnostics, files = _list(value, 3)
    found = [
        Diagnostic(*_fields(d, _str, _str, _str, _str, _str, _int, _int, _ostr))
        for d in _list(diagnostics)
    ]
    names = [_str(name) for name in _list(files)]
    return (None if raw is None else _decode_plugin(raw, root)), found, names


def _decode_plugin(value: Any, root: Path) -> Plugin:
    (name, where, kind, manifest, version, description, skills, commands, agents, hooks,
     servers, deps, optional, options) = _list(value, 14)  # fmt: skip
    if where != str(root):
        raise MissError
    return Plugin(
        _str(name),
        root,
        _str(kind),
        _obj(manifest),
        _ostr(version),
        _ostr(description),
        tuple(_skill(item) for item in _list(skills)),
        tuple(Path(_str(path)) for path in _list(commands)),
        tuple(Path(_str(path)) for path in _list(agents)),
        tuple(HookHandler(*_fields(h, _str, _ostr, _str, _obj)) for h in _list(hooks)),
        tuple(McpServer(*_fields(s, _str, _str, _obj)) for s in _list(servers)),
        tuple(_dependency(item) for item in _list(deps)),
        tuple(_dependency(item) for item in _list(optional)),
        tuple(_option(item) for item in _list(options)),
    )


def _skill(value: Any) -> Skill:
    name, path, description, frontmatter = _list(value, 4)
    return Skill(_str(name), Path(_str(path)), _ostr(description), _obj(frontmatter))


def _dependency(value: Any) -> Dependency:
    return Dependency(*_fields(value, _str, _ostr, _ostr))


def _option(value: Any) -> UserOption:
    key, kind, title, text, sensitive, required, default, multiple, low, high = _list(value, 10)
    return UserOption(
        _str(key),
        _str(kind),
        _str(title),
        _str(text),
        _bool(sensitive),
        _bool(required),
        default,
        _bool(multiple),
        _number(low),
        _number(high),
    )


def _fields(value: Any, *checks: Callable[[Any], Any]) -> list[Any]:
    """The items of the list `value`, one for each check, each checked."""
    items = _list(value, len(checks))
    return [check(item) for check, item in zip(checks, items, strict=True)]


def _list(value: Any, size: int | None = None) -> list[Any]:
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise MissError
    return value


def _obj(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MissError
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise MissError
    return value


def _ostr(value: Any) -> str | None:
    return None if value is None else _str(value)


def _int(value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise MissError


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise MissError
    return value


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise MissError
