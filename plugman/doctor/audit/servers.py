"""The audit's `unpinned-server` check: every MCP server `config resolve` reads (a plugin's, the
user's own in any scope, an administrator's) launches what it downloads at one exact version.
The launch command is read by the parser `plugman lock export` uses for the SBOM
(`plugins.sbom_servers.launched`: npx, npm exec / x, pnpm dlx, pnpx, yarn dlx, bunx / bun x,
uvx, uv tool run, pipx run, docker / podman run, also behind Windows' `cmd /c`), and pinned as
it says (`ServerPackage.pinned`): npm `pkg@1.2.3` (not `@latest`, a range or a dist-tag), PyPI
`pkg==1.2.3` (or uvx's `pkg@1.2.3`), an image by its digest. A folder, URL or git source, or a
`${VAR}`, names no registry package and is not judged. A finding names the server, whose it is
and where it is declared (a plugin's line in plugman.lock, or the line of the file declaring
it), and how a pinned launch is spelled."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from plugman.config.resolution import resolve
from plugman.core.fs import read_bytes
from plugman.core.jsonvalue import ServerEntry
from plugman.core.state import as_scope
from plugman.doctor.audit.model import Finding, Given, Lock
from plugman.plugins.supply_chain.sbom_servers import launched

# How a pinned launch names its package, per ecosystem.
_PINNED = {"npm": "{}@VERSION", "pypi": "{}==VERSION", "docker": "{}@sha256:DIGEST"}


class Unpinned(NamedTuple):
    launch: str  # the launch as written: `npx -y some-server`
    package: str  # what it downloads, as written: `some-server`, `mcp-server-time>=1`
    pin: str  # how a pinned one is spelled: `some-server@VERSION`


def unpinned(name: str, entry: ServerEntry) -> Unpinned | None:
    """Server `name`'s launch when it downloads a package without an exact version; None when
    it is pinned or launches no package."""
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str):
        return None
    given = args if isinstance(args, list) else []
    words = [*command.split(), *(str(a) for a in given if isinstance(a, (str, int)))]
    package = launched(name, words)
    if package is None or package.pinned:
        return None
    return Unpinned(" ".join(words), package.spec, _PINNED[package.ecosystem].format(package.name))


def unpinned_servers(given: Given) -> list[Finding]:
    """Every MCP server launched at one exact version of what it downloads."""
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
        launch = unpinned(server.name, server.entry)
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
