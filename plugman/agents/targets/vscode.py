"""VS Code `.vscode/mcp.json` (user: the profile's `mcp.json`): `servers` + `inputs`.

References in secret env and header values become `${input:var}`, backed by a `promptString`
input with `password: true`; other references become `${env:VAR}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Form,
    Part,
    Rendered,
    Source,
    Target,
    accept,
    fields,
    in_config_home,
    one_file,
    rewrite,
    syntax,
)
from plugman.config.redact import is_secret_name

STDIO = ("type", "command", "args", "env", "envFile")
REMOTE = ("type", "url", "headers")


def input_id(var: str) -> str:
    return var.lower().replace("_", "-")


def _secret_form(inputs: dict[str, dict[str, Any]]) -> Form:
    def form(var: str, default: str | None) -> str:
        inputs.setdefault(
            input_id(var),
            {"type": "promptString", "id": input_id(var), "description": var, "password": True},
        )
        return "${input:" + input_id(var) + "}"

    return form


def entry(
    name: str,
    server: dict[str, Any],
    env: Mapping[str, str],
    inputs: dict[str, dict[str, Any]],
    notes: list[str],
) -> dict[str, Any] | None:
    accepted = accept(name, server, "VS Code", ("stdio", "http", "sse"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
    plain = {
        k: {n: v for n, v in value.items() if not is_secret_name(n)}
        if k in ("env", "headers")
        else value
        for k, value in server.items()
    }
    found = fields(name, plain, keep, syntax(env, lambda v: "${env:" + v + "}"), "VS Code", notes)
    if found is None:
        return None
    for key in ("env", "headers"):
        secret = {n: v for n, v in server.get(key, {}).items() if is_secret_name(n)}
        if secret:
            merged = {**found.get(key, {}), **rewrite(secret, _secret_form(inputs))}
            found[key] = {n: merged[n] for n in server[key] if n in merged}
    return {"type": transport, **found}


def render(source: Source) -> Rendered:
    notes: list[str] = []
    inputs: dict[str, dict[str, Any]] = {}
    found = {n: entry(n, s, source.env, inputs, notes) for n, s in source.servers.items()}
    parts = [Part(("servers",), {n: e for n, e in found.items() if e is not None})]
    if inputs:
        parts.append(Part(("inputs",), inputs, listed=True))
    return Rendered({"mcp": parts}, notes)


TARGET = Target(
    "vscode",
    "json",
    render,
    one_file(in_config_home("Code", "User", "mcp.json"), ".vscode/mcp.json"),
)
