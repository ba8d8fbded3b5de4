"""VS Code `.vscode/mcp.json`: `servers` + `inputs`.

Secret env and header values that reference `${VAR}` become `${input:var}` backed by a
`promptString` input with `password: true`; other references become `${env:VAR}`.
"""

from __future__ import annotations

from typing import Any

from plugman.redact import is_secret_name
from plugman.targets import Rendered, Servers, Target, extras, json_text, kind, substitute

STDIO = ("type", "command", "args", "env", "envFile")
REMOTE = ("type", "url", "headers")


def input_id(var: str) -> str:
    return var.lower().replace("_", "-")


def _values(values: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    def secret(var: str) -> str:
        inputs.setdefault(
            input_id(var),
            {"type": "promptString", "id": input_id(var), "description": var, "password": True},
        )
        return "${input:" + input_id(var) + "}"

    return {k: substitute(v, secret if is_secret_name(k) else _env) for k, v in values.items()}


def _env(var: str) -> str:
    return "${env:" + var + "}"


def entry(
    name: str, server: dict[str, Any], inputs: dict[str, dict[str, Any]], unsupported: list[str]
) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http", "sse"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by VS Code; skipped")
        return None
    fields = STDIO if transport == "stdio" else REMOTE
    unsupported += extras(name, server, fields, "VS Code")
    result: dict[str, Any] = {"type": transport}
    for key in fields[1:]:
        if key in server:
            value = server[key]
            result[key] = _values(value, inputs) if key in ("env", "headers") else value
    return substitute(result, _env)  # type: ignore[no-any-return]


def render(servers: Servers) -> Rendered:
    unsupported: list[str] = []
    inputs: dict[str, dict[str, Any]] = {}
    found = {name: entry(name, s, inputs, unsupported) for name, s in servers.items()}
    document = {
        "servers": {name: e for name, e in found.items() if e is not None},
        "inputs": list(inputs.values()),
    }
    return Rendered(json_text(document), unsupported)


TARGET = Target("vscode", ".vscode/mcp.json", render)
