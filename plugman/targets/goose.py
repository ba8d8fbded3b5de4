"""Goose `config.yaml`: an `extensions` map; stdio is `cmd` + `args` + `envs`, remote is
`type: streamable_http` + `uri` + `headers`; every entry is enabled with a 300 s timeout."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, kind

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")
TIMEOUT = 300


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by Goose; skipped")
        return None
    if transport == "stdio":
        unsupported += extras(name, server, STDIO, "Goose")
        return {
            "name": name,
            "type": "stdio",
            "cmd": server["command"],
            "args": server.get("args", []),
            "envs": server.get("env", {}),
            "enabled": True,
            "timeout": TIMEOUT,
        }
    unsupported += extras(name, server, REMOTE, "Goose")
    return {
        "name": name,
        "type": "streamable_http",
        "uri": server["url"],
        "headers": server.get("headers", {}),
        "enabled": True,
        "timeout": TIMEOUT,
    }


def render(servers: Servers) -> Rendered:
    import yaml  # lazy, as the TOML writer is: only paid when this target renders

    unsupported: list[str] = []
    found = {name: entry(name, s, unsupported) for name, s in servers.items()}
    document = {"extensions": {name: e for name, e in found.items() if e is not None}}
    return Rendered(yaml.safe_dump(document, sort_keys=False), unsupported)


TARGET = Target("goose", "~/.config/goose/config.yaml", render)
