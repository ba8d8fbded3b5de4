"""Policies for tests, written with the rules as managed-settings.toml spells them and parsed
as plugman parses that file (`plugman.config.policy.parse`)."""

from __future__ import annotations

from typing import Any

from plugman.config.policy import Policy, parse

KEYS = {
    "allowed": "allowedMcpServers",
    "denied": "deniedMcpServers",
    "known_marketplaces": "strictKnownMarketplaces",
    "blocked_marketplaces": "blockedMarketplaces",
    "allow_all_claude_ai": "allowAllClaudeAiMcps",
    "allow_managed_hooks_only": "allowManagedHooksOnly",
}


def ruled(**fields: Any) -> Policy:
    """`ruled(denied=({"serverName": "fs"},))`: the fields of `Policy`, rules as tables."""
    settings = {KEYS[key]: value for key, value in fields.items() if value is not None}
    return parse({k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()})
