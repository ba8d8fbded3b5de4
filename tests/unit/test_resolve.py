"""Table-driven tests of resolution: precedence, every drop reason, every policy form."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugman.config.merge import (
    Hook,
    Layers,
    MarkdownComponent,
    Origin,
    Server,
    approval_key,
    resolve,
)
from plugman.config.policy import Policy, url_matches
from tests.policy_rules import ruled

FILES = {
    "managed": "managed-mcp.json",
    "claude.ai": "connectors.json",
    "plugin": "p/.mcp.json",
    "user": "~/plugman.toml",
    "project": ".mcp.json",
    "local": ".plugman/local.toml",
}


NO_POLICY = Policy()


def srv(scope: str, name: str, **entry: Any) -> Server:
    return Server(name, entry or {"command": f"{scope}-cmd"}, Origin(scope, FILES[scope]))


def approve(*servers: Server, project: str = "") -> frozenset[str]:
    keys = (approval_key(s.name, s.entry, s.origin, {}, project, s.runs) for s in servers)
    return frozenset(k for k in keys if k is not None)


def winner_scopes(
    layers: Layers,
    policy: Policy = NO_POLICY,
    env: dict[str, str] | None = None,
    approved: frozenset[str] = frozenset(),
) -> dict[str, str]:
    result = resolve(layers, policy, env or {}, approved)
    return {name: s.origin.scope for name, s in result.servers.items()}


def reasons(
    layers: Layers,
    policy: Policy = NO_POLICY,
    env: dict[str, str] | None = None,
    approved: frozenset[str] = frozenset(),
) -> set[tuple[str, str, str]]:
    result = resolve(layers, policy, env or {}, approved)
    return {(d.name, d.origin.scope, d.reason) for d in result.dropped}


P = srv("project", "x")
PRECEDENCE_CASES = [
    ([srv("user", "x"), srv("local", "x")], {"x": "local"}),
    ([srv("user", "x"), P], {"x": "project"}),
    ([srv("claude.ai", "x"), srv("user", "x")], {"x": "user"}),
    (
        [srv("plugin", "plugin:p:x"), srv("claude.ai", "x")],
        {"plugin:p:x": "plugin", "x": "claude.ai"},
    ),
    ([srv("local", "x"), P, srv("user", "x")], {"x": "local"}),
]


@pytest.mark.parametrize(("servers", "expected"), PRECEDENCE_CASES)
def test_precedence_whole_entry_wins(servers: list[Server], expected: dict[str, str]) -> None:
    assert winner_scopes(Layers(None, tuple(servers)), approved=approve(P)) == expected


def test_no_field_merge_and_shadowed_are_listed() -> None:
    user = srv("user", "x", command="a", env={"A": "1"})
    local = srv("local", "x", command="b")
    result = resolve(Layers(None, (user, local)), Policy(), {})
    assert result.servers["x"].entry == {"command": "b"}
    assert result.shadowed["x"] == [user]


def test_plugin_and_connector_servers_dedupe_by_endpoint() -> None:
    manual = srv("user", "gh", url="https://api.example.com/mcp", type="http")
    plugin = srv("plugin", "plugin:p:github", url="https://api.example.com/mcp", type="http")
    connector = srv("claude.ai", "GitHub", url="https://api.example.com/mcp", type="http")
    stdio = srv("plugin", "plugin:p:tool", command="npx", args=["-y", "t"])
    same_cmd = srv("project", "tool", command="npx", args=["-y", "t"])
    found = reasons(
        Layers(None, (manual, plugin, connector, stdio, same_cmd)), approved=approve(same_cmd)
    )
    assert found == {
        ("plugin:p:github", "plugin", "endpoint-duplicate"),
        ("GitHub", "claude.ai", "endpoint-duplicate"),
        ("plugin:p:tool", "plugin", "endpoint-duplicate"),
    }


@pytest.mark.parametrize("allow_connectors", [False, True])
def test_managed_mcp_json_is_exclusive(allow_connectors: bool) -> None:
    managed = (srv("managed", "corp"),)
    others = (srv("user", "u"), srv("plugin", "plugin:p:s"), srv("claude.ai", "c"))
    layers = Layers(managed, others)
    wins = winner_scopes(layers, Policy(allow_all_claude_ai=allow_connectors))
    expected = {"corp": "managed", **({"c": "claude.ai"} if allow_connectors else {})}
    assert wins == expected
    dropped = {(n, r) for n, _s, r in reasons(layers, Policy(allow_all_claude_ai=allow_connectors))}
    assert ("u", "managed-exclusive") in dropped
    assert ("plugin:p:s", "managed-exclusive") in dropped  # never re-added, not even by the flag


def test_empty_managed_file_disables_mcp() -> None:
    assert winner_scopes(Layers((), (srv("user", "u"),))) == {}


REMOTE = srv("user", "docs", type="http", url="https://Docs.Example.com./mcp/v1")
LOCAL = srv("user", "fs", command="npx", args=["-y", "server-fs", "/tmp"])
POLICY_CASES = [
    (ruled(denied=({"serverName": "fs"},)), {"docs"}),
    (ruled(denied=({"serverCommand": ["npx", "-y", "server-fs", "/tmp"]},)), {"docs"}),
    (ruled(denied=({"serverCommand": ["npx", "-y", "server-fs"]},)), {"docs", "fs"}),
    (ruled(denied=({"serverUrl": "https://*.example.com/*"},)), {"fs"}),
    (ruled(allowed=()), set()),
    (ruled(allowed=({"serverName": "fs"},)), {"fs"}),
    (ruled(allowed=({"serverUrl": "https://docs.example.com"},)), {"docs"}),
    (
        ruled(allowed=({"serverUrl": "https://docs.example.com/other"}, {"serverName": "docs"})),
        set(),
    ),
    (
        ruled(
            allowed=({"serverName": "fs"}, {"serverName": "docs"}), denied=({"serverName": "fs"},)
        ),
        {"docs"},
    ),
    (ruled(allowed=({"serverCommand": ["${TOOL}", "-y", "server-fs", "/tmp"]},)), {"fs"}),
]


@pytest.mark.parametrize(("policy", "kept"), POLICY_CASES)
def test_policy_forms_and_deny_wins(policy: Policy, kept: set[str]) -> None:
    layers = Layers(None, (REMOTE, LOCAL))
    assert set(winner_scopes(layers, policy, env={"TOOL": "npx"})) == kept
    assert {n for n, _s, r in reasons(layers, policy, env={"TOOL": "npx"}) if r == "policy"} == (
        {"docs", "fs"} - kept
    )


@pytest.mark.parametrize(
    ("pattern", "url", "verdict"),
    [
        ("https://*.example.com", "https://a.EXAMPLE.com./x", True),
        ("https://example.com/mcp", "https://example.com/MCP", False),
        ("https://example.com/mcp/*", "https://example.com/mcp/v1", True),
        ("http://example.com", "https://example.com", False),
        ("https://example.com:8443", "https://example.com/x", False),
    ],
)
def test_url_patterns(pattern: str, url: str, verdict: bool) -> None:
    assert url_matches(pattern, url) is verdict


def test_project_entries_wait_for_approval_keyed_to_content() -> None:
    project = srv("project", "tool", command="run-tool")
    layers = Layers(None, (project,))
    assert reasons(layers) == {("tool", "project", "pending-approval")}
    approved = approve(project)
    assert winner_scopes(layers, approved=approved) == {"tool": "project"}
    changed = srv("project", "tool", command="run-tool --evil")
    assert reasons(Layers(None, (changed,)), approved=approved) == {
        ("tool", "project", "pending-approval")
    }


def test_an_approval_is_bound_to_its_project_and_the_files_the_entry_runs() -> None:
    runs = (("start.sh", "sha256:aa"),)
    tool = srv("project", "tool", command="bash", args=["start.sh"])._replace(runs=runs)
    approved = approve(tool, project="/a")
    assert winner_scopes(Layers(None, (tool,), project="/a"), approved=approved) == {
        "tool": "project"
    }
    elsewhere = Layers(None, (tool,), project="/b")
    assert reasons(elsewhere, approved=approved) == {("tool", "project", "pending-approval")}
    changed = tool._replace(runs=(("start.sh", "sha256:bb"),))
    assert reasons(Layers(None, (changed,), project="/a"), approved=approved) == {
        ("tool", "project", "pending-approval")
    }


def test_pending_project_entry_does_not_hide_a_user_one() -> None:
    layers = Layers(None, (srv("user", "x"), srv("project", "x")))
    assert winner_scopes(layers) == {"x": "user"}


def test_missing_variable_drops_and_defaults_expand() -> None:
    needs = srv("user", "a", command="run", env={"TOKEN": "${TOKEN}"})
    default = srv(
        "user",
        "b",
        type="http",
        url="${HOST:-https://h}/mcp",
        headers={"Authorization": "Bearer ${KEY:-none}"},
    )
    result = resolve(Layers(None, (needs, default)), Policy(), {})
    assert [(d.name, d.reason, d.detail) for d in result.dropped] == [
        ("a", "missing-variable", "unset: TOKEN")
    ]
    assert result.servers["b"].entry["url"] == "https://h/mcp"
    assert result.servers["b"].entry["headers"] == {"Authorization": "Bearer none"}
    again = resolve(Layers(None, (needs,)), Policy(), {"TOKEN": "${OTHER}"})
    assert again.servers["a"].entry["env"] == {"TOKEN": "${OTHER}"}  # one pass, no re-expansion


def hook(scope: str, event: str, command: str, matcher: str | None = None) -> Hook:
    return Hook(
        event,
        matcher,
        {"type": "command", "command": command},
        Origin(scope, FILES[scope], "p" if scope == "plugin" else None),
    )


def test_hooks_concatenate_dedupe_and_managed_only() -> None:
    hooks = (
        hook("plugin", "Stop", "a"),
        hook("user", "Stop", "b"),
        hook("local", "Stop", "b"),
        hook("plugin", "Stop", "a"),
        hook("managed", "Stop", "m"),
        hook("project", "Stop", "p"),
    )
    result = resolve(Layers(None, (), hooks), Policy(), {})
    assert [(h.origin.scope, h.handler["command"]) for h in result.hooks] == [
        ("managed", "m"),
        ("local", "b"),
        ("plugin", "a"),
        ("plugin", "a"),
    ]
    assert {(d.origin.scope, d.reason) for d in result.dropped} == {("project", "pending-approval")}
    only = resolve(Layers(None, (), hooks), Policy(allow_managed_hooks_only=True), {})
    assert [h.handler["command"] for h in only.hooks] == ["m"]


def test_skills_by_name() -> None:
    skills = (
        MarkdownComponent("deploy", "u/SKILL.md", Origin("user", "u")),
        MarkdownComponent("deploy", "p/SKILL.md", Origin("project", "p")),
        MarkdownComponent("p:deploy", "x/SKILL.md", Origin("plugin", "x", "p")),
    )
    result = resolve(Layers(None, (), (), skills), Policy(), {})
    assert {n: s.origin.scope for n, s in result.skills.items()} == {
        "deploy": "project",
        "p:deploy": "plugin",
    }


SCOPES = ["claude.ai", "plugin", "user", "project", "local"]
SERVERS = st.lists(
    st.builds(
        lambda scope, name, cmd: srv(scope, name, command=cmd),
        st.sampled_from(SCOPES),
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["x", "y"]),
    ),
    max_size=8,
)


@given(SERVERS, st.randoms())
def test_resolution_is_deterministic_and_order_independent(servers: list[Server], rnd: Any) -> None:
    approved = approve(*servers)
    first = resolve(Layers(None, tuple(servers)), Policy(), {}, approved)
    shuffled = list(servers)
    rnd.shuffle(shuffled)
    second = resolve(Layers(None, tuple(shuffled)), Policy(), {}, approved)
    assert first.servers == second.servers
    assert sorted(first.dropped) == sorted(second.dropped)


@given(SERVERS, st.sampled_from(SCOPES))
def test_removing_a_lower_scope_never_changes_a_higher_entry(
    servers: list[Server], removed: str
) -> None:
    approved = approve(*servers)
    before = resolve(Layers(None, tuple(servers)), Policy(), {}, approved).servers
    kept = tuple(s for s in servers if s.origin.scope != removed)
    after = resolve(Layers(None, kept), Policy(), {}, approved).servers
    higher = SCOPES[SCOPES.index(removed) + 1 :]
    for name, server in before.items():
        if server.origin.scope in higher:
            assert after[name] == server
