"""What a broken file leaves out of the resolution (`plugman.config.scopes` reads them): each
server entry its errors make unusable is dropped as `invalid`, with the first error about it
(so `mcp list`, `mcp get` and `config explain NAME` show it); a file with no readable server map
leaves out every server in it, which a `left-out` warning after its errors says. A broken
plugman.toml is said by `declarations.broken`."""

from __future__ import annotations

import json
from pathlib import Path

from plugman.config.merge import Dropped, Origin, Server
from plugman.manifest.diagnostics import ERROR, WARNING, Diagnostic, KeyPath, format_path
from plugman.manifest.reader import MAX_FILE_BYTES, Report


def declared(file: Path) -> tuple[list[str] | None, KeyPath]:
    """The server names an MCP config file declares, and where its map is (None: the file
    cannot be read as one, so none of its servers is)."""
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return None, ()
        doc = json.loads(file.read_bytes())
    except (OSError, ValueError, RecursionError):  # a file too deep to read is not read
        return None, ()
    if not isinstance(doc, dict):
        return None, ()
    for key in ("mcpServers", "servers"):
        if key in doc:
            return (list(doc[key]), (key,)) if isinstance(doc[key], dict) else (None, ())
    return [key for key in doc if key != "$schema"], ()


def left_out(
    names: list[str] | None,
    prefix: KeyPath,
    kept: list[Server],
    origin: Origin,
    report: Report,
    since: int,
    invalid: list[Dropped],
) -> list[Diagnostic]:
    """What the errors found since `since` leave out: each entry they make unusable (dropped as
    `invalid`, with the first error about it); when the file has no readable server map, every
    server in it (a `left-out` warning, returned)."""
    errors = [d for d in report.diagnostics[since:] if d.severity == ERROR]
    if names is None:
        message = "left out: every MCP server in this file (the rest is resolved without them)"
        every = errors and not kept  # a tolerant read may still have found some
        return [Diagnostic(WARNING, "left-out", message, origin.file)] if every else []
    have = {s.name for s in kept}
    for name in names:
        where = format_path((*prefix, name))
        about = [
            d for d in errors if d.path == where or d.path.startswith((f"{where}.", f"{where}["))
        ]
        if name not in have and about:
            at = f"line {about[0].line}: " if about[0].line else ""
            detail = f"{at}{about[0].path}: {about[0].message}"
            invalid.append(Dropped("server", name, origin, "invalid", detail))
    return []
