"""Namespaced MCP tool names and the tool pool, without any server
(docs/claude-format.md#tool-names)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plugman.runtime.gateway.listing import ToolInfo
from plugman.runtime.gateway.naming import (
    AGENT_PREFIX,
    GATEWAY_LENGTH,
    MAX_LENGTH,
    VALID,
    gateway_name,
    normalize,
    shorten,
    split_server,
    tool_name,
)
from plugman.runtime.gateway.pool import MARKER, MAX_DESCRIPTION, assemble, cut, token_estimate
from plugman.runtime.gateway.probe import ProbeResult


def tool(name: str, description: str = "", **annotations: Any) -> ToolInfo:
    return ToolInfo(name, description, annotations, {"type": "object", "properties": {}})


def connected(server: str, *tools: ToolInfo) -> ProbeResult:
    return ProbeResult(server, "stdio", "connected", tools=list(tools))


# --- names -----------------------------------------------------------------------------------


def test_plain_and_plugin_names() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("plugin:synapse:Synapse.org", "search") == (
        "mcp__plugin_synapse_Synapse_org__search"
    )
    assert tool_name("Synapse.org", "search", plugin="synapse") == (
        "mcp__plugin_synapse_Synapse_org__search"
    )
    assert tool_name("claude.ai Gmail", "send") == "mcp__claude_ai_Gmail__send"


def test_characters_outside_the_safe_set_become_underscores() -> None:
    assert normalize("a.b c/d:é-f_9") == "a_b_c_d__-f_9"
    assert tool_name("my server", "get.thing!") == "mcp__my_server__get_thing_"


def test_split_server() -> None:
    assert split_server("plugin:p:s") == ("p", "s")
    assert split_server("plugin:p:s:t") == ("p", "s:t")
    assert split_server("plugin:p") == (None, "plugin:p")
    assert split_server("plain") == (None, "plain")


def test_long_names_are_shortened_deterministically() -> None:
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == MAX_LENGTH
    assert long == tool_name("s" * 40, "t" * 40)
    assert long.startswith("mcp__" + "s" * 40)
    assert VALID.match(long)
    exact = "mcp__" + "x" * (MAX_LENGTH - 5)
    assert shorten(exact) == exact


def test_gateway_names_leave_room_for_the_agents_prefix() -> None:
    assert gateway_name("plugin:weather-tools:weather", "alerts") == (
        "plugin_weather-tools_weather__alerts"
    )
    assert gateway_name("notes", "add") == "notes__add"
    long = gateway_name("plugin:a-rather-long-plugin:server", "fetch_the_forecast_for_a_city")
    assert len(long) == GATEWAY_LENGTH and VALID.match(AGENT_PREFIX + long)
    assert long == gateway_name(
        "plugin:a-rather-long-plugin:server", "fetch_the_forecast_for_a_city"
    )
    assert gateway_name("notes", "add", salt=1) != gateway_name("notes", "add", salt=2)


text = st.text(min_size=1, max_size=80)


@given(server=text, tool_a=text, tool_b=text)
def test_gateway_names_fit_behind_the_agents_prefix_and_stay_distinct(
    server: str, tool_a: str, tool_b: str
) -> None:
    first, second = gateway_name(server, tool_a), gateway_name(server, tool_b)
    assert VALID.match(AGENT_PREFIX + first) and VALID.match(AGENT_PREFIX + second)
    if normalize(tool_a) != normalize(tool_b):
        assert first != second


@given(server=text, tool_a=text, tool_b=text)
def test_names_are_valid_and_distinct_names_stay_distinct(
    server: str, tool_a: str, tool_b: str
) -> None:
    first, second = tool_name(server, tool_a), tool_name(server, tool_b)
    assert VALID.match(first) and VALID.match(second)
    if normalize(tool_a) != normalize(tool_b):
        assert first != second


@given(prefix=st.from_regex(r"[a-z]{60}", fullmatch=True), a=text, b=text)
def test_shortened_names_sharing_a_long_prefix_do_not_collide(prefix: str, a: str, b: str) -> None:
    full_a, full_b = f"mcp__{prefix}__{normalize(a)}", f"mcp__{prefix}__{normalize(b)}"
    if full_a != full_b:
        assert shorten(full_a) != shorten(full_b)
        assert len(shorten(full_a)) == len(shorten(full_b)) == MAX_LENGTH


# --- the pool --------------------------------------------------------------------------------


def test_builtin_name_always_wins() -> None:
    pool = assemble([connected("fs", tool("read"), tool("write"))], {"mcp__fs__read"})
    assert [e.name for e in pool.entries] == ["mcp__fs__write"]
    [collision] = pool.collisions
    assert (collision.name, collision.server, collision.winner, collision.reason) == (
        "mcp__fs__read",
        "fs",
        None,
        "builtin",
    )


def test_first_server_by_name_keeps_a_contested_name() -> None:
    results = [
        connected("a_b", tool("go")),
        connected("a.b", tool("go")),
        connected("c", tool("go")),
    ]
    pool = assemble(results)
    assert [(e.name, e.server) for e in pool.entries] == [
        ("mcp__a_b__go", "a.b"),
        ("mcp__c__go", "c"),
    ]
    [collision] = pool.collisions
    assert (collision.server, collision.winner, collision.reason) == ("a_b", "a.b", "duplicate")
    assert set(pool.tokens) == {"a.b", "a_b", "c"} and pool.tokens["a_b"] == 0


def test_only_connected_servers_enter_the_pool() -> None:
    broken = ProbeResult("broken", "stdio", "failed", reason="timed out after 3 s")
    pool = assemble([broken, connected("ok", tool("x"))])
    assert [e.server for e in pool.entries] == ["ok"]
    assert set(pool.tokens) == {"ok"}


def test_descriptions_are_cut_at_2048_characters_with_a_marker() -> None:
    assert cut("short") == "short"
    assert cut("x" * MAX_DESCRIPTION) == "x" * MAX_DESCRIPTION
    long = cut("y" * 60_000)
    assert len(long) == MAX_DESCRIPTION
    assert long.endswith(MARKER) and long.startswith("y" * 100)
    pool = assemble([connected("s", tool("t", "z" * 5000))])
    assert pool.entries[0].description.endswith(MARKER)


def test_annotations_travel_with_the_tool() -> None:
    hints = {"readOnlyHint": True, "openWorldHint": False, "destructiveHint": False}
    info = ToolInfo("t", "d", {**hints, "title": "Nice", "x-vendor": 1}, {"type": "object"})
    [entry] = assemble([connected("s", info)]).entries
    assert entry.annotations == {**hints, "title": "Nice"}
    titled = ToolInfo("t", "d", {}, {"type": "object"}, title="Tool title")
    [entry] = assemble([connected("s", titled)]).entries
    assert entry.annotations == {"title": "Tool title"}
    assert entry.tool == "t" and entry.server == "s"


def test_token_estimate_is_a_quarter_of_the_json_length() -> None:
    [entry] = assemble([connected("s", tool("t", "a" * 400))]).entries
    shown = {"name": entry.name, "description": entry.description, "input_schema": {}}
    shown["input_schema"] = entry.input_schema
    expected = -(-len(json.dumps(shown, separators=(",", ":"))) // 4)
    assert token_estimate(entry) == expected
    pool = assemble([connected("s", tool("t", "a" * 400), tool("u"))])
    assert pool.tokens["s"] == sum(token_estimate(e) for e in pool.entries)
    assert pool.total_tokens == pool.tokens["s"]
    assert 100 < pool.tokens["s"] < 200


def test_the_runtime_modules_import_no_mcp() -> None:
    """`import mcp` costs about a second: only the functions that connect may pay it."""
    code = (
        "import sys, plugman.cli.runtime, plugman.runtime.gateway.probe, "
        "plugman.runtime.gateway.pool; "
        "sys.exit('mcp' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=60).returncode == 0
