"""OpenCode `opencode.json`: `mcp`; stdio is `type: local` with `command` as one array
(command + args) and `environment`; remote is `type: remote` + `url` + `headers`."""

from __future__ import annotations

from typing import Any

from plugman.targets import Rendered, Servers, Target, extras, json_text, kind

STDIO = ("type", "command", "args", "env")
REMOTE = ("type", "url", "headers")


def entry(name: str, server: dict[str, Any], unsupported: list[str]) -> dict[str, Any] | None:
    transport = kind(server)
    if transport not in ("stdio", "http"):
        unsupported.append(f"{name}: transport {transport!r} is not supported by OpenCode; skipped")
        return None
    if transport == "stdio":
        unsupported += extras(name, server, STDIO, "OpenCode")
        result: dict[str, Any] = {
            "type": "local",
            "command": [server["command"], *server.get("args", [])],
        }
        if "env" in server:
            result["environment"] = server["env"]
    else:
        unsupported += extras(name, server, REMOTE, "OpenCode")
        result = {"type": "remote", **{k: server[k] for k in REMOTE[1:] if k in server}}
    result["enabled"] = True
    return result


def render(servers: Servers) -> Rendered:
    unsupported: list[str] = []
    found = {name: entry(name, s, unsupported) for name, s in servers.items()}
    document = {"mcp": {name: e for name, e in found.items() if e is not None}}
    return Rendered(json_text(document), unsupported)


TARGET = Target("opencode", "opencode.json", render)
