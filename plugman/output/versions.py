"""How versions read in the catalog commands' output: what an update moves across (`outdated`,
`update`), and which version `info` and `search` show when the catalog entry and the plugin's
plugin.json disagree."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plugman.plugins.catalog.listings import Info
    from plugman.plugins.lifecycle.installed import PluginChange

COMMIT = re.compile(r"^[0-9a-f]{40}$")


MOVED = ("from_version", "from_content_hash", "from_pin", "pin")


def change_json(change: PluginChange) -> dict[str, Any]:
    """A change as JSON; what an update moved from only for an update."""
    doc = change._asdict()
    return doc if change.from_version is not None else {k: doc[k] for k in doc if k not in MOVED}


def moved(
    version: str,
    to: str | None,
    pins: tuple[str | None, str | None],
    hashes: tuple[str | None, str | None] = (None, None),
) -> str:
    """What an update moves a plugin across, in a user's words: `1.0.0 -> 1.1.0`, or, for
    new content under the same version, the commit (or digest, else content hash) from and to."""
    if to != version:
        return f"{version} -> {to}"
    pinned = bool(pins[0] and pins[1] and pins[0] != pins[1])
    pin, to_pin = pins if pinned else hashes
    if not (pin and to_pin):
        return f"new content, same version {version}"
    what = "commit" if COMMIT.match(pin) else "digest" if pinned else "content"
    return f"new content, same version {version} ({what} {_short(pin)} -> {_short(to_pin)})"


def _short(pin: str) -> str:
    """A commit as git shortens it (7 digits); a digest or content hash to 12."""
    if COMMIT.match(pin):
        return pin[:7]
    kind, _, value = pin.rpartition(":")
    return f"{kind}:{value[:12]}" if kind else value[:12]


def catalog_says(version: str | None, catalog: str | None) -> str:
    """After the version install would install: what the catalog says, where it differs."""
    return f" (catalog: {catalog})" if catalog and version and catalog != version else ""


def version_line(found: Info) -> list[str]:
    """Where the catalog entry and plugin.json disagree, or plugin.json is not read yet: which
    version install takes (plugin.json's wins, as in Claude Code)."""
    own, listed = found.plugin_json_version, found.catalog_version
    if own and listed and own != listed:
        return [f"version:    {own} from its plugin.json (the catalog entry says {listed})"]
    if listed and not own and found.source and found.source.kind != "path":
        return [
            f"version:    {listed} per the catalog entry (install takes the version in the "
            "plugin's plugin.json instead, if it names one)"
        ]
    return []
