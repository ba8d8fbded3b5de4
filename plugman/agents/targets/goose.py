"""Goose `config.yaml`: an `extensions` map; stdio is `cmd` + `args` + `envs`, remote is
`type: streamable_http` + `uri` + `headers`; every entry is enabled with a 300 s timeout.
An env value that is exactly `${SAME_NAME}` goes in `env_keys` (Goose looks it up itself);
other variables are written as their values here (secret ones are reported)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugman.agents.targets import (
    Rendered,
    Source,
    Target,
    accept,
    exact_reference,
    fields,
    in_config_home,
    literal,
    one_file,
    render_map,
)

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")
TIMEOUT = 300


def entry(
    name: str, server: dict[str, Any], env: Mapping[str, str], notes: list[str]
) -> dict[str, Any] | None:
    accepted = accept(name, server, "Goose", ("stdio", "http"), (STDIO, REMOTE), notes)
    if accepted is None:
        return None
    transport, keep = accepted
    if transport == "http":
        found = fields(name, server, keep, literal(env), "Goose", notes)
        if found is None:
            return None
        return {
            "name": name,
            "type": "streamable_http",
            "uri": found["url"],
            "headers": found.get("headers", {}),
            "enabled": True,
            "timeout": TIMEOUT,
        }
    given = server.get("env", {})
    keys = [k for k, v in given.items() if exact_reference(v) == k]
    plain = {"env": {k: v for k, v in given.items() if k not in keys}}
    found = fields(name, {**server, **plain}, keep, literal(env), "Goose", notes)
    if found is None:
        return None
    result = {
        "name": name,
        "type": "stdio",
        "cmd": found["command"],
        "args": found.get("args", []),
        "envs": found.get("env", {}),
        "enabled": True,
        "timeout": TIMEOUT,
    }
    if keys:
        result["env_keys"] = keys
    return result


def render(source: Source) -> Rendered:
    return render_map("extensions", entry, source)


TARGET = Target(
    "goose",
    "yaml",
    render,
    one_file(in_config_home("goose", "config.yaml"), None),
    ("user",),
)
