"""plugman.lock: the exact pins of a project's plugins (machine-written, deterministic)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugman.config.declarations import load
from plugman.core.errors import PlugmanError

HEADER = "This file is written by plugman (plugman lock / install). Do not edit it by hand."
FORMAT = 1


def render(pins: list[dict[str, Any]]) -> bytes | None:
    """The lock file for these pins (sorted by id); None when there are none."""
    if not pins:
        return None
    import tomlkit  # ~10 ms: only a project's install writes a lock

    doc = tomlkit.document()
    doc.add(tomlkit.comment(HEADER))
    doc.add("format", FORMAT)
    plugins = tomlkit.aot()
    for pin in sorted(pins, key=lambda p: str(p["id"])):
        entry = tomlkit.table()
        for key in ("id", "name", "marketplace", "version", "content_hash"):
            entry.add(key, pin[key])
        source = tomlkit.inline_table()
        source.update(dict(sorted(pin["source"].items())))
        entry.add("source", source)
        if pin.get("hidden_text"):  # let in by --allow-hidden-text: sync lets it in again
            entry.add("hidden_text", pin["hidden_text"])
        if pin.get("signer"):  # its signer, pinned: update and sync refuse another
            entry.add("signer", pin["signer"])
        plugins.append(entry)
    doc.add("plugins", plugins)
    return tomlkit.dumps(doc).encode()


def read(path: Path) -> list[dict[str, Any]]:
    """The pins in a lock file; empty when there is none."""
    data = load(path).unwrap()
    if data.get("format", FORMAT) != FORMAT:
        raise PlugmanError(
            f"{path} has format {data.get('format')!r}; this plugman reads {FORMAT}",
            hint="use the plugman version that wrote it, or run: plugman lock",
        )
    plugins = data.get("plugins", [])
    return [dict(p) for p in plugins] if isinstance(plugins, list) else []
