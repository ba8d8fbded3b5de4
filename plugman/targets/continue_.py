"""Continue `.continue/config.yaml`: `mcpServers` is a YAML list, each item carrying its
`name`; stdio is `command` + `args` + `env`, remote is `type: streamable-http` + `url`."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, kind

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url")


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by Continue; skipped")
        return None
    if transport == "stdio":
        unsupported += extras(name, server, STDIO, "Continue")
        return {"name": name, **{k: server[k] for k in STDIO[1:] if k in server}}
    unsupported += extras(name, server, REMOTE, "Continue")
    return {"name": name, "type": "streamable-http", "url": server["url"]}


def render(servers: Servers) -> Rendered:
    import yaml  # lazy, as the TOML writer is: only paid when this target renders

    unsupported: list[str] = []
    found = [entry(name, s, unsupported) for name, s in servers.items()]
    document = {"mcpServers": [e for e in found if e is not None]}
    return Rendered(yaml.safe_dump(document, sort_keys=False), unsupported)


TARGET = Target("continue", ".continue/config.yaml", render)
