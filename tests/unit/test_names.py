from __future__ import annotations

import pytest

from plugman.manifest.diagnostics import Sink
from plugman.manifest.names import (
    check_plugin_name,
    impersonates,
    is_reserved_plugin,
    unsafe_reason,
)

# Verdicts observed from `claude plugin validate` 2.1.328 on throwaway plugins.
RESERVED = [
    "claude-x",
    "anthropic-x",
    "anthropics-x",
    "cc-plugin-x",
    "claude",
    "anthropic",
    "claude-code",
    "claude-mods",
    "official-claude-tools",
    "anthropic-official",
    "claude_x",
    "Claude-X",
    "claude.x",
    "x-claude-official",
    "officialclaude",
    "my-official-anthropic",
    "anthropics",
    "ccplugin-x",
]
ALLOWED = [
    "myclaude-x",
    "x-claude",
    "claudex",
    "cc-plugin",
    "cc-plugins-x",
    "official-x-claude",
    "anthropicx",
    "code-review",
]


@pytest.mark.parametrize("name", RESERVED)
def test_reserved_plugin_names(name: str) -> None:
    assert is_reserved_plugin(name)


@pytest.mark.parametrize("name", ALLOWED)
def test_allowed_plugin_names(name: str) -> None:
    assert not is_reserved_plugin(name)


def test_official_marketplaces_may_use_reserved_plugin_names() -> None:
    sink = Sink("m.json")
    check_plugin_name("claude-code-setup", sink, ("name",), official=True)
    assert sink.items == []
    check_plugin_name("claude-code-setup", sink, ("name",))
    assert [d.code for d in sink.items] == ["reserved-name"]


@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("official-claude-plugins", True),
        ("anthropic-plugins-v2", True),
        ("anthropic-official-x", True),
        ("claude-tools", False),
        ("my-anthropic-market", False),
        ("claude-plugins-official", False),
        ("Claude-Plugins-Official", False),  # a reserved name: checked against its source
        ("org", False),
        # Claude Code 2.1.328's rule (its marketplace.json schema), beyond the cases above
        ("claude-plugins-extra", True),
        ("Claude_Marketplace", True),
        ("--claude-directory", True),
        ("claudeplugins", True),
        ("claude.code.official", False),
        ("my-agent-skills", False),
        ("claude-code-marketplace-2", False),
        ("healthcare-tools", False),
        ("café", True),
    ],
)
def test_marketplace_impersonation(name: str, verdict: bool) -> None:
    assert impersonates(name) is verdict


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../../../.ssh", "contains a path separator"),
        ("..", "is a relative path"),
        ("a\x00b", "contains a control character"),
        ("a\u202eb", "invisible character U+202E"),
        ("-rf", "starts with '-'"),
        ("", "is empty"),
        ("x" * 129, "longer than 128"),
    ],
)
def test_unsafe_names(name: str, reason: str) -> None:
    found = unsafe_reason(name)
    assert found is not None
    assert reason in found
