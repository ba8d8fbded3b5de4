"""Fuzz seeds: the real files of tests/corpus/manifests, by the kind of loader that reads them."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from tests.conftest import CORPUS

MAX_SEED_BYTES = 256 * 1024
MARKDOWN_BODY = 200  # bytes of Markdown body kept after the front matter: the loaders skip it
MARKETPLACE_PLUGINS = 12  # entries kept of a large marketplace: a mutation costs its size


def _kind(path: Path) -> str | None:
    name, parent = path.name, path.parent.name
    if name == "plugin.json":
        return "plugin"
    if name == "marketplace.json":
        return "marketplace"
    if name == "gemini-extension.json":
        return "gemini"
    if name == "SKILL.md":
        return "skill"
    if name.endswith(".md") and parent in ("agents", "commands"):
        return "markdown"
    if name.endswith(".json") and "hook" in name.lower():
        return "hooks"
    if name.endswith(".json") and "mcp" in name.lower():
        return "mcp"
    return None


def _trim_markdown(data: bytes) -> bytes:
    """Front matter plus the start of the body."""
    end = data.find(b"\n---", 4) if data.startswith(b"---") else -1
    return data[: (end + 4 if end >= 0 else 0) + MARKDOWN_BODY]


def _trim_marketplace(data: bytes) -> bytes:
    """A large marketplace with its first entries only."""
    value = json.loads(data)
    if len(value.get("plugins", ())) <= MARKETPLACE_PLUGINS:
        return data
    value["plugins"] = value["plugins"][:MARKETPLACE_PLUGINS]
    return json.dumps(value, indent=2, ensure_ascii=False).encode()


@cache
def _files() -> tuple[Path, ...]:
    found = []
    for folder, dirs, files in os.walk(CORPUS):
        dirs.sort()
        found += [Path(folder) / f for f in sorted(files)]
    assert len(found) > 800, f"the corpus is missing at {CORPUS}"
    return tuple(found)


@cache
def seeds(kind: str) -> tuple[bytes, ...]:
    """Every corpus file of `kind` (`json`: every JSON file), as bytes, in a fixed order."""
    found = []
    for path in _files():
        file_kind = _kind(path)
        if kind == "json" and path.suffix != ".json":
            continue
        if kind != "json" and file_kind != kind:
            continue
        if path.stat().st_size > MAX_SEED_BYTES:
            continue
        data = path.read_bytes()
        if kind in ("skill", "markdown"):
            data = _trim_markdown(data)
        elif kind == "marketplace":
            data = _trim_marketplace(data)
        found.append(data)
    assert found, f"no {kind} seeds in {CORPUS}"
    return tuple(found)


@cache
def plugin_folders() -> tuple[tuple[tuple[str, bytes], ...], ...]:
    """Real plugin folders (each a tuple of (relative path, bytes) of the files plugman reads),
    at most 16 files each."""
    roots = sorted({p.parent.parent for p in _files() if p.match("*/.claude-plugin/plugin.json")})
    found = []
    for root in roots:
        files: list[tuple[str, bytes]] = []
        prefix = f"{root}{os.sep}"
        for path in _files():
            if not str(path).startswith(prefix) or path.stat().st_size > MAX_SEED_BYTES:
                continue
            rel = path.relative_to(root)
            nested = [p for p in rel.parents if (root / p / ".claude-plugin").is_dir()]
            if any(str(p) != "." for p in nested):
                continue  # a plugin inside this one
            kind = _kind(path)
            if kind is not None and kind != "marketplace":
                data = path.read_bytes()
                files.append((str(rel), _trim_markdown(data) if rel.suffix == ".md" else data))
        found.append(tuple(files[:16]))
    return tuple(found)
