"""What `plugman mcp add` and `add-json` mean: the entry from the command line or JSON, checked.

`mcp add NAME -- CMD ARGS` is a stdio server, `mcp add NAME URL` a remote one (http unless
`--transport` says sse or ws); names are `[A-Za-z0-9_-]+` and not reserved
(docs/claude-format.md#mcp-server-entries).
Entries are checked against the MCP config schema and plugman's per-transport rules.
"""

from __future__ import annotations

import json
import re
import shlex

from plugman.config import redact
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.jsonvalue import ServerEntry
from plugman.manifest import schema
from plugman.manifest.diagnostics import ERROR, Diagnostic, Sink
from plugman.manifest.mcp import server_entry
from plugman.manifest.names import RESERVED_SERVERS

NAME = re.compile(r"^[A-Za-z0-9_-]+$")
TRANSPORTS = ("stdio", "http", "sse", "ws")


def check_name(name: str) -> None:
    if not NAME.match(name):
        raise UsageError(
            f"invalid MCP server name {name!r}",
            hint="use only letters, digits, '_' and '-', e.g. 'my-server'",
        )
    if name in RESERVED_SERVERS:
        raise UsageError(
            f"MCP server name {name!r} is reserved",
            hint="choose another name; reserved: " + ", ".join(sorted(RESERVED_SERVERS)),
        )


def pairs(items: list[str], sep: str, option: str, example: str) -> dict[str, str]:
    """`K=V` (env) or `K: V` (headers) arguments as a dict; a malformed one is a usage error."""
    found: dict[str, str] = {}
    for item in items:
        key, hit, value = item.partition(sep)
        key = key.strip()
        if not hit or not key:
            raise UsageError(f"malformed {option} {item!r}", hint=f"write it as {example}")
        found[key] = value.strip() if sep == ":" else value
    return found


def stdio_entry(command: list[str], env: list[str], headers: list[str]) -> ServerEntry:
    if headers:
        raise UsageError("-H/--header is for remote servers", hint="use -e KEY=VALUE for stdio")
    if not command:
        raise UsageError("no command for the stdio server", hint="plugman mcp add NAME -- CMD ARGS")
    entry: ServerEntry = {"type": "stdio", "command": command[0]}
    if command[1:]:
        entry["args"] = command[1:]
    found = pairs(env, "=", "-e/--env", "-e KEY=VALUE")
    if found:
        entry["env"] = found
    return entry


SCHEMES = {"http": ("http", "https"), "sse": ("http", "https"), "ws": ("ws", "wss")}


def remote_entry(url: str, transport: str, headers: list[str]) -> ServerEntry:
    if "://" not in url and "${" not in url:
        raise UsageError(f"{url!r} is not a URL", hint="e.g. https://mcp.example.com/mcp")
    scheme = url.partition("://")[0].lower()
    allowed = SCHEMES.get(transport, ())
    if "://" in url and "${" not in scheme and scheme not in allowed:
        example = "wss://mcp.example.com/ws" if transport == "ws" else "https://mcp.example.com/mcp"
        raise UsageError(
            f"{transport} server URLs start with {' or '.join(f'{a}://' for a in allowed)}, "
            f"not {scheme}://",
            hint=f"e.g. {example}"
            + ("" if transport == "ws" else " (a WebSocket server: --transport ws)"),
        )
    entry: ServerEntry = {"type": transport, "url": url}
    found = pairs(headers, ":", "-H/--header", '-H "Name: value"')
    if found:
        entry["headers"] = found
    return entry


def build_entry(
    target: list[str],
    command: list[str] | None,
    transport: str | None,
    env: list[str],
    headers: list[str],
) -> ServerEntry:
    """The entry `mcp add` means: `-- CMD ARGS` is stdio, one URL is remote (http by default)."""
    if transport is not None and transport not in TRANSPORTS:
        raise UsageError(f"unknown transport {transport!r}", hint="use stdio, http, sse or ws")
    if command is not None:
        if transport not in (None, "stdio") or target:
            raise UsageError(
                "a server is either a URL or '-- CMD ARGS', not both",
                hint="plugman mcp add NAME URL, or plugman mcp add NAME -- CMD ARGS",
            )
        return stdio_entry(command, env, headers)
    remote = len(target) == 1 and "://" in target[0]
    if transport == "stdio" or (transport is None and not remote):
        if remote:
            raise UsageError(
                f"--transport stdio takes a command, not the URL {target[0]!r}",
                hint="use --transport http (or sse, ws), or plugman mcp add NAME -- CMD ARGS",
            )
        return stdio_entry(target, env, headers)
    if env:
        raise UsageError("-e/--env is for stdio servers", hint='use -H "Name: value" for a URL')
    if len(target) != 1:
        raise UsageError("a remote server takes one URL", hint="plugman mcp add NAME URL")
    return remote_entry(target[0], transport or "http", headers)


def parse_json(name: str, text: str) -> ServerEntry:
    """`add-json`'s entry, as JSON."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        where = getattr(exc, "lineno", None), getattr(exc, "colno", None)
        raise UsageError(
            f"invalid JSON for MCP server {name!r}: {getattr(exc, 'msg', exc)} "
            f"(line {where[0]}, column {where[1]})",
            hint='quote the entry as one argument: \'{"type": "http", "url": "https://…"}\'',
        ) from None
    if isinstance(value, dict) and "mcpServers" in value:
        raise UsageError(
            "add-json takes one server's entry, not the mcpServers wrapper",
            hint=f"pass the value of mcpServers.{name} alone",
        )
    if not isinstance(value, dict):
        raise UsageError("an MCP server entry must be a JSON object", hint='e.g. {"command": "x"}')
    return value


def check_entry(name: str, entry: ServerEntry) -> list[str]:
    """Schema and transport checks; the warnings, or a PlugmanError listing every error."""
    sink = Sink(f"MCP server {name!r}")
    schema.validate(entry, "mcp-config.schema.json#/$defs/server", sink)
    server_entry(name, entry, sink, ())
    errors = [d for d in sink.items if d.severity == ERROR]
    if errors:
        raise PlugmanError(
            f"invalid MCP server entry for {name!r}:"
            + "".join(f"\n  - {_text(d)}" for d in errors),
            hint=next((d.hint for d in errors if d.hint), None)
            or "stdio needs 'command'; http, sse and ws need 'type' and 'url'",
        )
    return [_text(d) for d in sink.items]


def _text(d: Diagnostic) -> str:
    return f"{d.path or '(entry)'}: {d.message}"


def refuse_literal_secrets(name: str, entry: ServerEntry, where: str) -> None:
    """A literal credential never goes into a committed file (`where`: the project's
    `.mcp.json`): refused, naming each field (never its value), with the commands that keep
    the value in the secret store and write a `${VAR}` reference instead."""
    fixed, found = redact.keep_out(name, entry)
    if not found:
        return
    fields = ", ".join(f.field for f in found)
    variables = sorted({f.variable for f in found})
    steps = [f"plugman mcp vars set {v}" for v in variables] + [add_command(name, fixed)]
    raise UsageError(
        f"MCP server {name!r}: {fields} holds a literal credential, and {where} is committed "
        "with the project",
        hint="keep the value out of it: "
        + "; then ".join(steps)
        + " (mcp vars keeps each value in plugman's secret store, where plugman mcp run and "
        "the gateway put it in; an agent reading the file itself takes ${VAR} from its "
        "environment)",
    )


def add_command(name: str, entry: ServerEntry, scope: str = "project") -> str:
    """The `plugman mcp add` (or `add-json`) command line that adds `entry` as `name`."""
    head = ["plugman", "mcp", "add", name, "--scope", scope]
    kind = entry.get("type") or ("stdio" if "command" in entry else "http")
    simple = set(entry) <= {"type", "command", "args", "env", "url", "headers"}
    env, headers = entry.get("env") or {}, entry.get("headers") or {}
    if simple and kind == "stdio" and isinstance(entry.get("command"), str):
        words = [*head, *(f"--env={k}={v}" for k, v in env.items())]
        words += ["--", entry["command"], *map(str, entry.get("args") or [])]
        return shlex.join(words)
    if simple and isinstance(entry.get("url"), str):
        words = [*head, "--transport", str(kind), entry["url"]]
        words += [f"--header={k}: {v}" for k, v in headers.items()]
        return shlex.join(words)
    return shlex.join(["plugman", "mcp", "add-json", name, "--scope", scope, json.dumps(entry)])
