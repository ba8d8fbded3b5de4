"""What one agent does that no `AgentSpec` field says: each a small function a spec names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from plugman.agents.targets.model import Location, Place
from plugman.agents.targets.refs import Form, exact_reference

Entry = dict[str, Any]
BEARER = re.compile(r"^Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
# The variables that move plugman's home, secret store and managed policy: a launcher an agent
# starts must see what the plugman that wrote its entry saw (a deny rule included).
RELOCATE = ("PLUGMAN_HOME", "PLUGMAN_SECRETS", "PLUGMAN_MANAGED_DIR")
GATEWAY_ARGS = ["mcp", "serve"]  # how every gateway entry ends (export_entries.gateway_entry)


def runs_gateway(entry: Entry) -> bool:
    """Does this server entry start plugman's gateway?"""
    return list(entry.get("args", []))[-2:] == GATEWAY_ARGS


def same_name(env: dict[str, Any]) -> list[str]:
    """The variables whose value is exactly a reference to the same name: `TOKEN=${TOKEN}`."""
    return [key for key, value in env.items() if exact_reference(value) == key]


def codex_by_name(given: Entry) -> tuple[Entry, Entry]:
    """Codex expands no `${}` but looks secrets up by name: `TOKEN=${TOKEN}` goes in `env_vars`,
    `Authorization: Bearer ${VAR}` in `bearer_token_env_var`, a header that is exactly `${VAR}`
    in `env_http_headers`. Codex starts a server with only a few of its own variables (HOME,
    PATH, ...): an entry naming `plugman` on PATH (a committed project file's launcher or
    gateway) asks by name for those that relocate plugman's home, secret store and policy, so each
    teammate's own setting of them reaches the plugman it starts (an unset one is not passed).

    The gateway (`mcp serve`) is `required`: Codex 0.169 starts its first turn without waiting
    for an optional server (`mcp_optional_startup_grace_ms`, under a second), and never lists
    again, so it would see no tool at all; it waits for a required one (and says so if it cannot
    start), and the gateway answers its first list complete (plugman.runtime.gateway.server)."""
    rest: Entry = dict(given)
    by_name: Entry = {}
    if given.get("command") == "plugman":
        by_name["env_vars"] = list(RELOCATE)
    if runs_gateway(given):
        by_name["required"] = True
    if "env" in given:
        names = same_name(given["env"])
        if names:
            by_name["env_vars"] = [*by_name.get("env_vars", []), *names]
        rest["env"] = {k: v for k, v in given["env"].items() if k not in names}
    if "headers" in given:
        headers: dict[str, str] = {}
        by_header: dict[str, str] = {}
        for key, value in given["headers"].items():
            bearer = BEARER.match(value) if key.lower() == "authorization" else None
            if bearer:
                by_name["bearer_token_env_var"] = bearer.group(1)
            elif (var := exact_reference(value)) is not None:
                by_header[key] = var
            else:
                headers[key] = value
        if by_header:
            by_name["env_http_headers"] = by_header
        rest["headers"] = headers
    return rest, by_name


def goose_env_keys(given: Entry) -> tuple[Entry, Entry]:
    """Goose looks up the variables listed in `env_keys` itself: `TOKEN=${TOKEN}` goes there."""
    keys = same_name(given.get("env", {}))
    if not keys:
        return given, {}
    return {**given, "env": {k: v for k, v in given["env"].items() if k not in keys}}, {
        "env_keys": keys
    }


def input_id(var: str) -> str:
    return var.lower().replace("_", "-")


def password_inputs(inputs: dict[str, Entry]) -> Form:
    """VS Code: a reference in a secret becomes `${input:var}`, backed by a `promptString`
    input with `password: true`."""

    def form(var: str, default: str | None) -> str:
        inputs.setdefault(
            input_id(var),
            {"type": "promptString", "id": input_id(var), "description": var, "password": True},
        )
        return "${input:" + input_id(var) + "}"

    return form


def claude_files(place: Place) -> dict[str, Location]:
    """Claude Code: servers in `.mcp.json` (project) or `~/.claude.json` (user: top level;
    local: under `projects[<project>]`); hooks in the scope's settings file. CLAUDE_CONFIG_DIR
    moves both user files."""
    given = place.env.get("CLAUDE_CONFIG_DIR")
    config = Path(given) if given else place.home / ".claude"
    state = config / ".claude.json" if given else place.home / ".claude.json"
    settings = place.project / ".claude"
    found = {
        "user": {"mcp": Location(state), "settings": Location(config / "settings.json")},
        "project": {
            "mcp": Location(place.project / ".mcp.json"),
            "settings": Location(settings / "settings.json"),
        },
        "local": {
            "mcp": Location(state, ("projects", str(place.project))),
            "settings": Location(settings / "settings.local.json"),
        },
    }
    return found.get(place.scope, {})
