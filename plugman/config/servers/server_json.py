"""The MCP Registry's `server.json` (schemas 2025-09-29, 2025-10-17 and 2025-12-11): read into
typed records, with every structural problem reported at its place (`file:line:col` and
`packages[0].transport.type`) before anything fails.

A registry API item (`{"server": {...}, "_meta": {...}}`, what `/v0.1/servers/NAME/versions/V`
answers) is read as the server it wraps."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from plugman.core.errors import PlugmanError
from plugman.manifest import jsonloc
from plugman.manifest.diagnostics import ERROR, KeyPath, Sink

DATES = ("2025-09-29", "2025-10-17", "2025-12-11")
SCHEMA = "https://static.modelcontextprotocol.io/schemas/{}/server.schema.json"
NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
REGISTRY_TYPES = ("npm", "pypi", "nuget", "oci", "mcpb")
TRANSPORTS = ("stdio", "streamable-http", "sse")
RANGE = re.compile(r"^\s*(?:[\^~<>=*]|latest$)|\.[x*](?:\.|$)")


class Input(NamedTuple):
    """An environment variable, header, argument or template variable the user may give."""

    name: str  # env var or header name, a named argument's flag, a positional's valueHint
    value: str | None  # fixed by the publisher; `{var}` names one of `variables`
    default: str | None
    required: bool
    secret: bool
    variables: dict[str, Input]


class Argument(NamedTuple):
    kind: str  # positional | named
    input: Input


class Transport(NamedTuple):
    kind: str  # stdio | streamable-http | sse
    url: str | None
    headers: tuple[Input, ...]
    variables: dict[str, Input]  # a remote's URL variables


class Package(NamedTuple):
    registry_type: str
    identifier: str
    version: str | None
    registry_base_url: str | None
    runtime_arguments: tuple[Argument, ...]
    package_arguments: tuple[Argument, ...]
    environment: tuple[Input, ...]
    transport: Transport


class ServerJson(NamedTuple):
    name: str
    version: str
    description: str | None
    packages: tuple[Package, ...]
    remotes: tuple[Transport, ...]


def load(text: str, where: str) -> ServerJson:
    """Parse and check a server.json; PlugmanError listing every located error."""
    try:
        doc = jsonloc.parse(text)
    except jsonloc.JsonSyntaxError as exc:
        raise PlugmanError(
            f"{where}:{exc.line}:{exc.column}: not valid JSON: {exc.message}",
            hint="a server.json is one JSON object (see the MCP Registry's server.schema.json)",
        ) from None
    sink = Sink(where, doc.locate)
    value: Any = doc.value
    prefix: KeyPath = ()
    if isinstance(value, dict) and isinstance(value.get("server"), dict) and "name" not in value:
        value, prefix = value["server"], ("server",)
    found = _Reader(sink.child(prefix)).server(value)
    errors = [d for d in sink.items if d.severity == ERROR]
    if errors or found is None:
        shown = "".join(
            f"\n  {d.file}:{d.line or 1}:{d.column or 1}: {d.path or '(top)'}: {d.message}"
            for d in errors
        )
        raise PlugmanError(
            f"{where} is not a valid server.json:{shown}",
            hint="fix it against https://static.modelcontextprotocol.io/schemas/2025-12-11/"
            "server.schema.json",
        )
    return found


class _Reader:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def text(self, data: dict[str, Any], key: str, path: KeyPath, required: bool) -> str | None:
        value = data.get(key)
        if value is None:
            if required:
                self.sink.error("schema-required", f"missing required key {key!r}", path)
            return None
        if not isinstance(value, str) or not value:
            self.sink.error("schema-type", f"{key!r} must be a non-empty string", (*path, key))
            return None
        return value

    def string(self, data: dict[str, Any], key: str, path: KeyPath) -> str | None:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            self.sink.error("schema-type", f"{key!r} must be a string", (*path, key))
            return None
        return value

    def flag(self, data: dict[str, Any], key: str, path: KeyPath) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.sink.error("schema-type", f"{key!r} must be true or false", (*path, key))
            return False
        return value

    def items(self, data: dict[str, Any], key: str, path: KeyPath) -> list[tuple[Any, KeyPath]]:
        value = data.get(key, [])
        if not isinstance(value, list):
            self.sink.error("schema-type", f"{key!r} must be an array", (*path, key))
            return []
        return [(item, (*path, key, index)) for index, item in enumerate(value)]

    def object(self, value: Any, path: KeyPath) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.sink.error("schema-type", "must be an object", path)
            return None
        return value

    def server(self, value: Any) -> ServerJson | None:
        data = self.object(value, ())
        if data is None:
            return None
        schema = data.get("$schema")
        if schema is not None and schema not in [SCHEMA.format(d) for d in DATES]:
            self.sink.warning(
                "unknown-schema", f"$schema {schema!r} is not one plugman knows", ("$schema",)
            )
        name = self.text(data, "name", (), True)
        if name is not None and not NAME.match(name):
            self.sink.error(
                "bad-name", f"name {name!r} is not reverse-DNS 'namespace/name'", ("name",)
            )
        version = self.text(data, "version", (), True)
        if version is not None and RANGE.search(version):
            self.sink.error("bad-version", f"version {version!r} is a range", ("version",))
        description = self.text(data, "description", (), True)
        packages = [self.package(item, path) for item, path in self.items(data, "packages", ())]
        remotes = [self.transport(item, path) for item, path in self.items(data, "remotes", ())]
        if not packages and not remotes:
            self.sink.error("nothing-to-run", "the server lists no packages and no remotes")
        return ServerJson(
            name or "",
            version or "",
            description,
            tuple(p for p in packages if p is not None),
            tuple(r for r in remotes if r is not None),
        )

    def package(self, value: Any, path: KeyPath) -> Package | None:
        data = self.object(value, path)
        if data is None:
            return None
        kind = self.text(data, "registryType", path, True)
        if kind is not None and kind not in REGISTRY_TYPES:
            self.sink.error(
                "schema-enum",
                f"registryType {kind!r} must be one of {', '.join(REGISTRY_TYPES)}",
                (*path, "registryType"),
            )
        identifier = self.text(data, "identifier", path, True)
        version = self.text(data, "version", path, kind not in ("oci", "mcpb"))
        if version is not None and RANGE.search(version):
            self.sink.error(
                "bad-version",
                f"package version {version!r} must be one exact version",
                (*path, "version"),
            )
        transport = self.transport(data.get("transport"), (*path, "transport"), package=True)
        if "transport" not in data:
            self.sink.error("schema-required", "missing required key 'transport'", path)
        runtime = [self.argument(i, p) for i, p in self.items(data, "runtimeArguments", path)]
        arguments = [self.argument(i, p) for i, p in self.items(data, "packageArguments", path)]
        env = [self.keyed(i, p) for i, p in self.items(data, "environmentVariables", path)]
        if kind is None or identifier is None or transport is None:
            return None
        return Package(
            kind,
            identifier,
            version,
            self.text(data, "registryBaseUrl", path, False),
            tuple(a for a in runtime if a is not None),
            tuple(a for a in arguments if a is not None),
            tuple(e for e in env if e is not None),
            transport,
        )

    def transport(self, value: Any, path: KeyPath, package: bool = False) -> Transport | None:
        data = self.object(value, path) if value is not None or not package else None
        if data is None:
            return None
        kind = self.text(data, "type", path, True)
        allowed = TRANSPORTS if package else TRANSPORTS[1:]
        if kind is not None and kind not in allowed:
            self.sink.error(
                "schema-enum",
                f"transport type {kind!r} must be one of {', '.join(allowed)}",
                (*path, "type"),
            )
            return None
        url = self.text(data, "url", path, kind in ("streamable-http", "sse"))
        headers = [self.keyed(i, p) for i, p in self.items(data, "headers", path)]
        variables = self.variables(data, path)
        if kind is None:
            return None
        return Transport(kind, url, tuple(h for h in headers if h is not None), variables)

    def argument(self, value: Any, path: KeyPath) -> Argument | None:
        data = self.object(value, path)
        if data is None:
            return None
        kind = self.text(data, "type", path, True)
        if kind not in (None, "positional", "named"):
            self.sink.error(
                "schema-enum", f"argument type {kind!r} must be positional or named", path
            )
            return None
        key = "name" if kind == "named" else "valueHint"
        name = self.text(data, key, path, kind == "named")
        if kind == "positional" and name is None and "value" not in data:
            self.sink.error(
                "schema-required", "a positional argument needs 'value' or 'valueHint'", path
            )
        found = self.input(data, path, name or "")
        return Argument(kind, found) if kind and found else None

    def keyed(self, value: Any, path: KeyPath) -> Input | None:
        data = self.object(value, path)
        name = self.text(data, "name", path, True) if data is not None else None
        return self.input(data, path, name) if data is not None and name else None

    def input(self, data: dict[str, Any], path: KeyPath, name: str) -> Input | None:
        return Input(
            name=name,
            value=self.string(data, "value", path),
            default=self.string(data, "default", path),
            required=self.flag(data, "isRequired", path),
            secret=self.flag(data, "isSecret", path),
            variables=self.variables(data, path),
        )

    def variables(self, data: dict[str, Any], path: KeyPath) -> dict[str, Input]:
        value = data.get("variables", {})
        if not isinstance(value, dict):
            self.sink.error("schema-type", "'variables' must be an object", (*path, "variables"))
            return {}
        found = {}
        for key, item in value.items():
            inner = self.object(item, (*path, "variables", key))
            made = self.input(inner, (*path, "variables", key), key) if inner is not None else None
            if made is not None:
                found[key] = made
        return found
