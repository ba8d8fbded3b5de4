"""The packages a plugin's MCP servers launch, read from their launch commands, for the SBOM.

A stdio server started by a package runner names the package it runs: `npx -y pkg@1.2.3` (and
`npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`) an npm package, `uvx tool==2.0` (and `uv tool run`,
`pipx run`) a PyPI one, `docker run … image:tag` (and `podman run`) a container image (each
also behind Windows' `cmd /c`). Each becomes a `ServerPackage` with its package URL (purl); a
remote server (`url`) a `RemoteServer`. A server that runs a file of its own plugin (`node
${CLAUDE_PLUGIN_ROOT}/…`) or a program on the PATH launches no package: its code is the
plugin's, already in the SBOM by the plugin's content hash. Pure: reads the server entries it
is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from plugman.config import redact
from plugman.manifest.model import McpServer

Ecosystem = Literal["npm", "pypi", "docker"]


class ServerPackage(NamedTuple):
    """A package an MCP server's launch command runs."""

    server: str  # the server's name in its plugin
    ecosystem: Ecosystem
    name: str  # the package (npm `@scope/name`, PyPI name, image repository)
    version: str | None  # the exact version, tag or digest asked for; None: whatever is newest
    spec: str  # as written in the command (`pkg@^1`, `tool>=2`, `image:tag`)
    purl: str

    @property
    def pinned(self) -> bool:
        """Whether the command names one exact version (an image: a digest)."""
        if self.ecosystem == "docker":
            return "@sha256:" in self.spec
        return self.version is not None


class RemoteServer(NamedTuple):
    """A server the agent reaches at a URL (its query and credentials left out)."""

    server: str
    transport: str  # http, sse, ws
    url: str


class Launcher(NamedTuple):
    """A package runner: the words that start it, the options that take a value, and those
    whose value is the package (then the first other word is a command, not the package)."""

    words: tuple[str, ...]
    ecosystem: Ecosystem
    valued: frozenset[str]
    package_options: frozenset[str] = frozenset()


NPM_VALUED = frozenset({"-p", "--package", "-c", "--call", "--registry", "--cache", "--userconfig"})
NPM_PACKAGE = frozenset({"-p", "--package"})
UV_VALUED = frozenset(
    {"--from", "--with", "--with-editable", "--with-requirements", "--python", "-p", "--index",
     "--index-url", "--extra-index-url", "--default-index", "--find-links", "-f", "--directory",
     "--project", "--config-file", "--cache-dir", "--env-file", "--constraints", "--overrides",
     "-c", "-w"}
)  # fmt: skip
PIPX_VALUED = frozenset({"--spec", "--python", "--index-url", "--pip-args"})
DOCKER_VALUED = frozenset(
    {"-e", "--env", "--env-file", "-v", "--volume", "--mount", "-p", "--publish", "--name",
     "--network", "--net", "-w", "--workdir", "-u", "--user", "--entrypoint", "--platform",
     "-l", "--label", "--label-file", "--add-host", "--cpus", "-m", "--memory", "--pull",
     "-h", "--hostname", "--device", "--cap-add", "--cap-drop", "--security-opt", "--tmpfs",
     "--ulimit", "--shm-size", "--restart", "--log-driver", "--log-opt", "--dns", "--ipc",
     "--pid", "--runtime", "--gpus", "--stop-signal", "--cidfile", "--expose", "--link",
     "--volumes-from", "--group-add", "--ip", "--mac-address", "--health-cmd", "--userns",
     "--cgroupns", "--uts", "--attach", "-a", "--memory-swap", "--storage-opt"}
)  # fmt: skip
LAUNCHERS = (
    Launcher(("npx",), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("npm", "exec"), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("npm", "x"), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("pnpm", "dlx"), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("pnpx",), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("yarn", "dlx"), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("bunx",), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("bun", "x"), "npm", NPM_VALUED, NPM_PACKAGE),
    Launcher(("uvx",), "pypi", UV_VALUED, frozenset({"--from"})),
    Launcher(("uv", "tool", "run"), "pypi", UV_VALUED, frozenset({"--from"})),
    Launcher(("pipx", "run"), "pypi", PIPX_VALUED, frozenset({"--spec"})),
    Launcher(("docker", "run"), "docker", DOCKER_VALUED),
    Launcher(("podman", "run"), "docker", DOCKER_VALUED),
)
NPM_NAME = re.compile(r"^(?:@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$")
EXACT_NPM = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$")
PYPI = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(?:(==|@)([^=<>!~,;\s]+)|.*)$")
IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/:@-]*$")


def packages(servers: Iterable[McpServer]) -> list[ServerPackage | RemoteServer]:
    """What each server launches or reaches, in the servers' order; a server launching no
    package is left out."""
    found: list[ServerPackage | RemoteServer] = []
    for server in servers:
        url = server.entry.get("url")
        if isinstance(url, str):
            found.append(RemoteServer(server.name, server.transport, _plain_url(url)))
            continue
        command = server.entry.get("command")
        args = [str(a) for a in server.entry.get("args") or [] if isinstance(a, (str, int))]
        if isinstance(command, str):
            package = launched(server.name, [*command.split(), *args])
            found += [package] if package else []
    return found


def launched(server: str, argv: list[str]) -> ServerPackage | None:
    """The package `argv` (a command and its arguments) runs, if a package runner starts it."""
    if not argv:
        return None
    words = [_program(argv[0]), *argv[1:]]
    if words[0] == "cmd" and len(words) > 2 and words[1].lower() == "/c":  # Windows: cmd /c npx
        words = [_program(words[2]), *words[3:]]
    for launcher in LAUNCHERS:
        if tuple(words[: len(launcher.words)]) == launcher.words:
            spec = _package_word(launcher, words[len(launcher.words) :])
            return _package(server, launcher.ecosystem, spec) if spec else None
    return None


def _program(word: str) -> str:
    """A command's program name: `npx` for `/usr/bin/npx` or `C:\\…\\npx.cmd`."""
    return re.split(r"[\\/]", word)[-1].lower().removesuffix(".exe").removesuffix(".cmd")


def _package_word(launcher: Launcher, rest: list[str]) -> str | None:
    """The word naming the package: a package option's value, else the first plain word."""
    items = iter(rest)
    for word in items:
        if word == "--":
            return next(items, None)
        if not word.startswith("-") or word == "-":
            return word
        name, equals, value = word.partition("=")
        if not equals and name in launcher.valued:
            value = next(items, "")
        if name in launcher.package_options:
            return value or None
    return None


def _package(server: str, ecosystem: Ecosystem, spec: str) -> ServerPackage | None:
    if "${" in spec:  # a variable: what it names is known only when the agent starts it
        return None
    match ecosystem:
        case "npm":
            return _npm(server, spec)
        case "pypi":
            return _pypi(server, spec)
        case "docker":
            return _image(server, spec)


def _npm(server: str, spec: str) -> ServerPackage | None:
    # lazy: packageurl takes ~12 ms to import, only this path needs it
    from packageurl import PackageURL

    at = spec.rfind("@")
    name, version = (spec[:at], spec[at + 1 :]) if at > 0 else (spec, "")
    if not NPM_NAME.match(name):  # a folder, a tarball or git URL, an alias: not a registry name
        return None
    exact = version if EXACT_NPM.match(version) else None
    scope, _, short = name.rpartition("/")
    purl = PackageURL(type="npm", namespace=scope or None, name=short, version=exact)
    return ServerPackage(server, "npm", name, exact, spec, str(purl))


def _pypi(server: str, spec: str) -> ServerPackage | None:
    # lazy: packageurl takes ~12 ms to import, only this path needs it
    from packageurl import PackageURL

    found = PYPI.match(spec)
    if found is None or "://" in spec:
        return None
    name, version = found.group(1), found.group(4)
    exact = version if version and version != "latest" and "*" not in version else None
    normal = re.sub(r"[-_.]+", "-", name).lower()
    purl = PackageURL(type="pypi", name=normal, version=exact)
    return ServerPackage(server, "pypi", name, exact, spec, str(purl))


def _image(server: str, spec: str) -> ServerPackage | None:
    """`[REGISTRY/]REPOSITORY[:TAG][@DIGEST]`: with a digest `pkg:oci` (the purl type that
    pins by digest), else `pkg:docker` by tag."""
    # lazy: packageurl takes ~12 ms to import, only this path needs it
    from packageurl import PackageURL

    if not IMAGE.match(spec):
        return None
    rest, _, digest = spec.partition("@")
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    repository, tag = (rest[:colon], rest[colon + 1 :]) if colon > slash else (rest, "")
    first, _, path = repository.partition("/")
    registry = first if path and ("." in first or ":" in first or first == "localhost") else ""
    path = path if registry else repository
    namespace, _, name = path.rpartition("/")
    if digest:
        qualifiers = {"repository_url": f"{registry or 'docker.io'}/{path}"}
        qualifiers |= {"tag": tag} if tag else {}
        purl = PackageURL(type="oci", name=name, version=digest, qualifiers=qualifiers)
    else:
        where = {"repository_url": registry} if registry else {}
        purl = PackageURL("docker", namespace or None, name, tag or None, where)
    return ServerPackage(server, "docker", repository, digest or tag or None, spec, str(purl))


def _plain_url(url: str) -> str:
    """`url` without credentials or query: they may hold secrets; the host and path say where."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact.url(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
