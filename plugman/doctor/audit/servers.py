"""The audit's `unpinned-server` check: every MCP server `config resolve` reads (a plugin's, the
user's own in any scope, an administrator's) launches what it downloads at one exact version,
as `pins.unpinned` judges it; a finding names the server, whose it is and where it is declared
(a plugin's line in plugman.lock, or the line of the file declaring it)."""

from __future__ import annotations

from pathlib import Path

from plugman.core.fs import read_bytes
from plugman.core.state import as_scope
from plugman.doctor.audit.model import Finding, Given, Lock
from plugman.doctor.audit.pins import unpinned


def unpinned_servers(given: Given) -> list[Finding]:
    """Every MCP server launched at one exact version of what it downloads."""
    from plugman.config.resolution import resolve

    only = given.scopes[0] if len(given.scopes) == 1 else None
    resolution = resolve(given.paths, given.env, references=True, only=only)
    scope_of = {plugin.id: plugin.scope for plugin in resolution.plugins}
    lock = Lock.read(given)
    found = []
    managed = resolution.layers.managed if only is None else None
    for server in [*(managed or ()), *resolution.layers.servers]:
        origin = server.origin
        scope = scope_of.get(origin.plugin) if origin.plugin else as_scope(origin.scope)
        if (scope is None and origin.scope != "managed") or (scope and scope not in given.scopes):
            continue
        launch = unpinned(server.entry)
        if launch is None:
            continue
        pinned = launch.launch.replace(launch.package, launch.pin, 1)
        text = f"launches `{launch.launch}` without a pinned version (each start runs "
        text += f"whatever {launch.package} is that day)"
        if origin.plugin and scope:
            name = origin.plugin.partition("@")[0]
            message = f"MCP server {server.name!r} of plugin {origin.plugin} ({scope} scope) {text}"
            fix = (
                f"the plugin must pin it ({launch.pin}): once its source does, run: plugman "
                f"update {name} --scope {scope} (installed from a folder or URL: install it "
                f"again), or disable it: plugman disable {name} --scope {scope}"
            )
            file, line = lock.at(given, origin.plugin, scope)
        else:
            whose = f"{scope} scope" if scope else "managed by your administrator"
            message = f"MCP server {server.name!r} ({whose}) {text}"
            fix = f"pin it where it is declared ({origin.file}): `{pinned}`"
            file, line = origin.file, _line_of(Path(origin.file), server.name)
        found.append(Finding("unpinned-server", message, fix, file, line))
    return found


def _line_of(file: Path, name: str) -> int | None:
    """The line declaring server `name` in a JSON or TOML file, when one plainly does."""
    text = (read_bytes(file) or b"").decode("utf-8", "replace").splitlines()
    keys = (f'"{name}"', f"{name} =", f".{name}]", f'."{name}"]')
    return next((n for n, line in enumerate(text, 1) if any(k in line for k in keys)), None)
