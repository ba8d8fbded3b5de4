"""`plugman mcp add NAME --from SERVER_JSON`: one package or remote of an MCP Registry
server.json (plugman.config.servers.server_json) as a server entry of the scope.

A package runs through its ecosystem's runner, pinned to its exact version: npm as
`npx -y ID@VERSION`, PyPI as `uvx ID==VERSION`, NuGet as `dnx ID@VERSION --yes`, OCI as
`docker run -i --rm [-e VAR]... IMAGE`, with `runtimeArguments` before the package and
`packageArguments` after it. A remote is an `http` (streamable-http) or `sse` entry.

What the user gives is never written as a value: every environment variable, header,
argument or URL variable without a fixed `value` becomes a `${VAR}` reference (`${VAR:-default}`
when it has a default and is not secret), which `plugman config resolve`, probe and the gateway
expand from the environment (an unset one drops the server as `missing-variable`, naming it),
and which an export writes as the agent's own reference. An environment variable keeps its own
name (the server reads it); headers, arguments and template variables are named
`<SERVER>_<KEY>` (upper case), so two servers never share one by accident. A literal value the
publisher marked secret is not copied either.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from plugman.config.servers.server_json import Argument, Input, Package, ServerJson, Transport, load
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.jsonvalue import ServerEntry

PLACE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
MAX_BYTES = 8 * 1024 * 1024
PREFER = ("npm", "pypi", "nuget", "oci", "remote")


class Pick(NamedTuple):
    package: int | None = None  # 1-based
    remote: int | None = None  # 1-based
    prefer: str | None = None  # a registryType, or "remote"


class Imported(NamedTuple):
    entry: ServerEntry  # the server entry (a JSON value)
    chosen: str  # which package or remote, in words
    needs: list[str]  # the variables it references that have no default
    notes: list[str]


def read(source: str) -> tuple[str, str]:
    """The text of a server.json at a path or an http(s) URL, and where it was read."""
    if source.startswith(("https://", "http://")):
        # lazy: core.download takes ~37 ms to import, only this path needs it
        from plugman.core.download import read as fetch

        return fetch(source, limit=MAX_BYTES).decode("utf-8", "replace"), source
    path = Path(source).expanduser()
    try:
        if path.stat().st_size > MAX_BYTES:
            raise PlugmanError(f"{source} is larger than 8 MiB", hint="is it a server.json?")
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read server.json {source!r}: {getattr(exc, 'strerror', None) or exc}",
            hint="give the path or the https:// URL of a server.json",
        ) from None


def imported(source: str, name: str, pick: Pick) -> Imported:
    """The entry `mcp add NAME --from SOURCE` writes."""
    text, where = read(source)
    return entry_from(load(text, where), name, pick)


def entry_from(server: ServerJson, name: str, pick: Pick) -> Imported:
    chosen = choose(server, pick)
    renderer = _Renderer(name)
    if isinstance(chosen, Package):
        entry, words = _package(chosen, renderer), _package_words(chosen)
    else:
        entry, words = _remote(chosen, renderer), f"remote {chosen.kind} {chosen.url}"
    needs = list(dict.fromkeys(renderer.needs))
    return Imported(entry, f"{server.name} {server.version}: {words}", needs, renderer.notes)


def offered(server: ServerJson) -> str:
    packages = [f"--package {i}: {_package_words(p)}" for i, p in enumerate(server.packages, 1)]
    remotes = [f"--remote {i}: {r.kind} {r.url}" for i, r in enumerate(server.remotes, 1)]
    return "; ".join(packages + remotes)


def choose(server: ServerJson, pick: Pick) -> Package | Transport:
    """The package or remote asked for: by number, by preference, else the first package,
    else the first remote."""
    if sum(x is not None for x in pick) > 1:
        raise UsageError("give one of --package, --remote and --prefer", hint=offered(server))
    if pick.package is not None or pick.remote is not None:
        many = server.packages if pick.package is not None else server.remotes
        index = pick.package if pick.package is not None else pick.remote
        what = "package" if pick.package is not None else "remote"
        if index is None or not 1 <= index <= len(many):
            raise UsageError(
                f"{server.name} has no {what} {index} ({len(many)} offered)",
                hint=offered(server) or "it offers nothing to run",
            )
        return many[index - 1]
    if pick.prefer is not None:
        if pick.prefer not in PREFER:
            raise UsageError(f"--prefer {pick.prefer!r}", hint=f"one of {', '.join(PREFER)}")
        found: list[Package | Transport] = (
            list(server.remotes)
            if pick.prefer == "remote"
            else [p for p in server.packages if p.registry_type == pick.prefer]
        )
        if not found:
            raise UsageError(
                f"{server.name} offers no {pick.prefer} package"
                if pick.prefer != "remote"
                else f"{server.name} offers no remote",
                hint=offered(server),
            )
        return found[0]
    return server.packages[0] if server.packages else server.remotes[0]


def _package_words(package: Package) -> str:
    version = f" {package.version}" if package.version else ""
    return f"{package.registry_type} {package.identifier}{version} ({package.transport.kind})"


def _package(package: Package, r: _Renderer) -> ServerEntry:
    if package.transport.kind != "stdio":
        raise PlugmanError(
            f"package {package.identifier} serves {package.transport.kind}: something has to "
            "start it before anyone connects, which an MCP entry cannot say",
            hint="pick a stdio package or a remote (--package N, --remote N)",
        )
    runtime = r.arguments(package.runtime_arguments)
    arguments = r.arguments(package.package_arguments)
    env = {e.name: v for e in package.environment if (v := r.value(e, e.name)) is not None}
    kind, ident, version = package.registry_type, package.identifier, package.version
    base = (package.registry_base_url or "").rstrip("/")
    if kind == "npm":
        registry = [f"--registry={base}"] if base and "registry.npmjs.org" not in base else []
        command, args = "npx", ["-y", *registry, *runtime, f"{ident}@{version}", *arguments]
    elif kind == "pypi":
        if base and "pypi.org" not in base:
            r.notes.append(f"the package's index is {base}; give uvx --index yourself")
        command, args = "uvx", [*runtime, f"{ident}=={version}", *arguments]
    elif kind == "nuget":
        command, args = "dnx", [*runtime, f"{ident}@{version}", "--yes", *arguments]
    elif kind == "oci":
        passed = [part for key in env for part in ("-e", key)]
        image = _image(ident, version, base)
        command, args = "docker", ["run", "-i", "--rm", *runtime, *passed, image, *arguments]
    else:
        raise PlugmanError(
            f"{kind} packages ({ident}) are not supported: plugman would have to download and "
            "unpack the bundle",
            hint="pick another package or a remote (--package N, --remote N)",
        )
    entry: ServerEntry = {"type": "stdio", "command": command, "args": args}
    if env:
        entry["env"] = env
    return entry


def _image(identifier: str, version: str | None, base: str) -> str:
    """The full image reference (older schemas split registry, name and tag)."""
    host = base.split("://", 1)[-1]
    image = identifier
    if host and host not in ("docker.io", "index.docker.io") and not image.startswith(host):
        image = f"{host}/{image}"
    last = image.rsplit("/", 1)[-1]
    if version and ":" not in last and "@" not in image:
        image = f"{image}:{version}"
    return image


def _remote(remote: Transport, r: _Renderer) -> ServerEntry:
    url = r.template(remote.url or "", remote.variables)
    entry: ServerEntry = {"type": "http" if remote.kind == "streamable-http" else "sse"}
    entry["url"] = url
    headers = {h.name: v for h in remote.headers if (v := r.value(h, r.var(h.name))) is not None}
    if headers:
        entry["headers"] = headers
    return entry


class _Renderer:
    """Inputs into values and `${VAR}` references, remembering what must be set."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.needs: list[str] = []
        self.notes: list[str] = []

    def var(self, key: str) -> str:
        return re.sub(r"\W+", "_", f"{self.server}_{key}").strip("_").upper()

    def value(self, given: Input, var: str) -> str | None:
        """A fixed value (its templates put in), else a reference to `var`; None when the
        input is optional and has no default (it is left out, with a note)."""
        literal_secret = given.secret and given.value is not None and not PLACE.search(given.value)
        if given.value is not None and not literal_secret:
            return self.template(given.value, given.variables)
        if literal_secret:
            self.notes.append(f"{given.name}: the secret value in server.json is not copied")
        if given.default is not None or given.required or literal_secret:
            return self.reference(var, given)
        self.notes.append(f"optional {given.name or var} left out (no default)")
        return None

    def reference(self, var: str, given: Input) -> str:
        if given.default is not None and not given.secret and "}" not in given.default:
            return "${" + var + ":-" + given.default + "}"
        self.needs.append(var)
        return "${" + var + "}"

    def template(self, text: str, variables: dict[str, Input]) -> str:
        def put(match: re.Match[str]) -> str:
            found = variables.get(match.group(1))
            if found is None:
                return match.group(0)  # as the schema says: left unchanged
            if found.value is not None and not found.secret:
                return found.value
            return self.reference(self.var(match.group(1)), found)

        return PLACE.sub(put, text)

    def arguments(self, arguments: tuple[Argument, ...]) -> list[str]:
        found: list[str] = []
        for index, argument in enumerate(arguments, 1):
            given = argument.input
            key = given.name.lstrip("-") or f"arg{index}"
            value = self.value(given, self.var(key))
            if value is None:
                continue
            found += [given.name, value] if argument.kind == "named" else [value]
        return found
