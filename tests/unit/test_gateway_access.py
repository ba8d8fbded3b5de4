"""gatewayAccess: parsing the managed rules (a broken one fails closed, located) and the decision
the gateway asks per caller (plugman.config.gateway_access)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, cast

import pytest

from plugman.config import policy
from plugman.config.gateway_access import NO_RULES, Access, verdict
from plugman.config.policy_rules import AccessRule, Policy
from plugman.core.paths import Paths
from plugman.manifest.diagnostics import Sink

RULES = """
gatewayAccess = [
  { groups = ["eng"], servers = ["notes", "tickets"] },
  { groups = ["support"], servers = ["tickets"], tools = ["get_*", "search"] },
  { groups = ["*"], servers = ["time"] },
  { groups = ["ops"], servers = ["*"], tools = ["status"] },
]
"""


def parsed(text: str) -> tuple[Policy, Sink]:
    sink = Sink("managed-settings.toml")
    return policy.parse(tomllib.loads(text), sink), sink


def found(sink: Sink) -> list[tuple[str, str, str]]:
    return [(d.severity, d.code, d.path) for d in sink.items]


def test_rules_parse_with_their_origin_and_tools_default_to_every_tool() -> None:
    rules, sink = parsed(RULES)
    assert sink.items == []
    assert rules.gateway_access is not None
    first = rules.gateway_access[0]
    assert first == AccessRule(
        ("eng",), ("notes", "tickets"), ("*",), "managed-settings.toml: gatewayAccess[0]"
    )
    assert rules.gateway_access[1].tools == ("get_*", "search")


def test_no_rules_is_none_and_everyone_gets_everything() -> None:
    rules, _ = parsed("")
    assert rules.gateway_access is None
    access = Access(rules.gateway_access)
    assert access.open
    assert verdict(None, (), "notes", "delete_note") == policy.Verdict(True, NO_RULES)


@pytest.mark.parametrize(
    ("rule", "code", "path"),
    [
        ('{ servers = ["notes"] }', "policy-type", "gatewayAccess[0].groups"),
        ('{ groups = "eng", servers = ["notes"] }', "policy-type", "gatewayAccess[0].groups"),
        ('{ groups = [], servers = ["notes"] }', "policy-type", "gatewayAccess[0].groups"),
        ('{ groups = [""], servers = ["notes"] }', "policy-type", "gatewayAccess[0].groups"),
        ('{ groups = ["eng"], servers = "notes" }', "policy-type", "gatewayAccess[0].servers"),
        (
            '{ groups = ["eng"], servers = ["notes"], tools = 1 }',
            "policy-type",
            "gatewayAccess[0].tools",
        ),
        ('{ groups = ["eng*"], servers = ["notes"] }', "policy-pattern", "gatewayAccess[0].groups"),
        ('{ groups = ["eng"], servers = ["no*"] }', "policy-pattern", "gatewayAccess[0].servers"),
        ('"eng"', "policy-type", "gatewayAccess[0]"),
    ],
)
def test_a_broken_rule_is_located_and_left_out_so_it_grants_nothing(
    rule: str, code: str, path: str
) -> None:
    rules, sink = parsed(f'gatewayAccess = [{rule}, {{ groups = ["ops"], servers = ["time"] }}]')
    assert ("error", code, path) in found(sink)
    assert ("error", "policy-unreadable", "gatewayAccess[0]") in found(sink)
    assert all(
        "until this rule is fixed, it allows nothing" in d.message
        for d in sink.items
        if d.code == "policy-unreadable"
    )
    assert rules.gateway_access is not None
    assert [r.groups for r in rules.gateway_access] == [("ops",)]  # the broken one: left out
    grant = Access(rules.gateway_access).grant(("eng",))
    assert not grant.server("notes") and not grant.tool("notes", "echo")


def test_a_value_that_is_not_a_list_grants_nothing_to_anyone() -> None:
    rules, sink = parsed('gatewayAccess = { groups = ["eng"], servers = ["notes"] }')
    assert found(sink) == [("error", "policy-type", "gatewayAccess")]
    assert "until it is fixed, it allows nothing" in sink.items[0].message
    assert rules.gateway_access == ()
    access = Access(rules.gateway_access)
    assert not access.open
    for groups in [(), ("eng",), ("*",)]:
        assert not access.grant(groups).server("notes")


def test_an_unknown_key_is_a_warning_and_the_rule_still_counts() -> None:
    rules, sink = parsed(
        'gatewayAccess = [{ groups = ["eng"], servers = ["notes"], tool = ["x"] }]'
    )
    assert found(sink) == [("warning", "unknown-key", "gatewayAccess[0].tool")]
    assert rules.gateway_access is not None and len(rules.gateway_access) == 1


def test_a_caller_gets_the_union_of_its_groups_rules_and_nothing_else() -> None:
    rules, _ = parsed(RULES)
    access = Access(rules.gateway_access)
    eng, support, both = (
        access.grant(["eng"]),
        access.grant(["support"]),
        access.grant(["eng", "support"]),
    )
    assert eng.tool("notes", "delete_note") and eng.tool("tickets", "close")
    assert not support.tool("notes", "get_note") and not support.server("notes")
    assert support.tool("tickets", "get_ticket") and support.tool("tickets", "search")
    assert not support.tool("tickets", "close")
    assert both.tool("notes", "echo") and both.tool("tickets", "close")
    # the `*` group: every caller, one with no groups too; `*` servers: every server
    assert access.grant(()).tool("time", "now") and not access.grant(()).server("notes")
    ops = access.grant(("ops",))
    assert ops.tool("anything", "status") and not ops.tool("anything", "restart")
    assert ops.tool("time", "now")  # its `*` group rule adds to what `*` servers give
    # an unknown group: only the `*` rule
    stranger = access.grant(("finance",))
    assert stranger.server("time") and not stranger.server("notes")


def test_tool_patterns_match_the_whole_name_exactly() -> None:
    rules, _ = parsed(
        'gatewayAccess = [{ groups = ["g"], servers = ["s"], tools = ["get_*", "a.b", "x"] }]'
    )
    grant = Access(rules.gateway_access).grant(("g",))
    assert grant.tool("s", "get_") and grant.tool("s", "get_note")
    for refused in ["forget_x", "GET_note", "Get_note", "a_b", "axb", "xx", "X", "get", "x\n"]:
        assert not grant.tool("s", refused), refused
    assert grant.tool("s", "a.b") and grant.tool("s", "x")
    assert not grant.tool("S", "x") and not grant.tool("s ", "x")  # servers: exact too


def test_groups_are_exact_names_and_a_string_is_not_a_list_of_them() -> None:
    rules, _ = parsed('gatewayAccess = [{ groups = ["eng"], servers = ["notes"] }]')
    access = Access(rules.gateway_access)
    for groups in [("Eng",), ("eng ",), ("e", "n", "g"), ("*",), ("eng\u200b",)]:
        assert not access.grant(groups).server("notes"), groups
    for hostile in ["eng", "engineering", b"eng"]:  # a claim that came as one string
        assert not access.grant(cast(Any, hostile)).server("notes")
    hostile: Any = "eng"
    assert not verdict(rules.gateway_access, hostile, "notes").allowed
    assert access.grant(("eng",)).server("notes")


def test_grants_are_compiled_once_per_set_of_groups() -> None:
    rules, _ = parsed(RULES)
    access = Access(rules.gateway_access)
    assert access.grant(("eng", "support")) is access.grant(["support", "eng"])


def test_the_verdict_names_the_rule_and_file_that_decided() -> None:
    rules, _ = parsed(RULES)
    given = rules.gateway_access
    allowed = verdict(given, ("support",), "tickets", "get_ticket")
    assert allowed.allowed and allowed.origin == "managed-settings.toml: gatewayAccess[1]"
    assert "groups=['support'], servers=['tickets'], tools=['get_*', 'search']" in allowed.why
    refused = verdict(given, ("support",), "tickets", "close")
    assert not refused.allowed and refused.origin == "managed-settings.toml: gatewayAccess"
    assert (
        refused.why
        == "no gatewayAccess rule grants groups ['support'] tool 'close' of server 'tickets'"
    )
    alone = verdict(given, (), "notes")
    assert alone.why == "no gatewayAccess rule grants a caller with no groups server 'notes'"
    assert verdict(given, (), "time", "now").origin == "managed-settings.toml: gatewayAccess[2]"


def test_only_plugmans_managed_settings_hold_rules(isolated_home: Path) -> None:
    paths = Paths.from_env(project=isolated_home / "project")
    paths.managed_settings.parent.mkdir(parents=True)
    paths.managed_settings.write_text(RULES)
    claude = paths.claude_managed_settings
    claude.parent.mkdir(parents=True, exist_ok=True)
    claude.write_text('{"gatewayAccess": [{"groups": ["*"], "servers": ["*"]}]}')
    rules = policy.managed(paths).gateway_access
    assert rules is not None and len(rules) == 4
    assert all(r.origin.startswith(str(paths.managed_settings)) for r in rules)
    assert not Access(rules).grant(()).server("notes")
