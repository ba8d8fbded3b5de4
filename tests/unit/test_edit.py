"""plugman.manifest.edit: blocks go into agents' files and come out leaving every other byte as
it was."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugman.manifest import edit
from plugman.manifest.edit import EditError, Part
from tests.conftest import examples

SERVER = {"command": "python3", "args": ["server.py"], "env": {"A": "${A}"}}
MCP = Part(("mcpServers",), {"notes": SERVER})


def round_trip(fmt: str, text: str, parts: list[Part]) -> str:
    """Add then take out; assert the data in between and return the final text."""
    mod = edit.module(fmt)
    before = mod.load(text, "f")
    added = edit.add(fmt, text, parts, "f")
    data = mod.load(added.text, "f")
    for part in parts:
        container = edit.at(data, part.container)
        for key, value in part.entries.items():
            assert (value in container) if part.listed else container[key] == value
    after = edit.take_out(fmt, added.text, added.blocks, parts, "f")
    assert mod.load(after, "f") == before
    return after


JSONC = """{
  // the user's own settings
  "theme": "dark",
  "mcpServers": {
    /* hand-written */
    "mine": {"command": "x"}, // keep me
  },
}
"""


@pytest.mark.parametrize(
    "text",
    [
        JSONC,
        "{}",
        "{}\n",
        '{"a": 1}',
        '{\n\t"a": {\n\t\t"b": 2\n\t}\n}\n',
        '{\n    "mcpServers": {}\n}\n',
        '{\n  "mcpServers": {\n  }\n}\n',
        '{"mcpServers": {"mine": {"command": "x"}}}',
        '\ufeff{\n  "x": [1, 2]\n}\n',
    ],
)
def test_json_round_trip_is_byte_identical(text: str) -> None:
    assert round_trip("json", text, [MCP]) == text


def test_json_adds_in_the_files_own_indentation() -> None:
    added = edit.add("json", '{\n    "a": 1\n}\n', [MCP], "f").text
    assert added.startswith('{\n    "a": 1,\n    "mcpServers": {\n        "notes": {\n')


def test_json_nested_containers_are_created_and_removed() -> None:
    part = Part(("projects", "/p", "mcpServers"), {"notes": SERVER})
    text = '{\n  "projects": {\n    "/other": {}\n  }\n}\n'
    assert round_trip("json", text, [part]) == text


def test_json_lists_take_elements() -> None:
    parts = [
        Part(("hooks", "Stop"), {"h1": {"hooks": [{"type": "command", "command": "x"}]}}, True),
        Part(("hooks", "Start"), {"h2": {"hooks": []}}, True),
    ]
    text = '{\n  "hooks": {\n    "Stop": [\n      {"hooks": []}\n    ]\n  }\n}\n'
    assert round_trip("json", text, parts) == text
    assert round_trip("json", "{}\n", parts) == "{}\n"


def test_json_entry_already_there_is_left_alone() -> None:
    text = '{"mcpServers": {"notes": {"command": "mine"}}}'
    added = edit.add("json", text, [MCP], "f")
    assert added.text == text and added.present == ["notes"] and added.blocks == []


def test_json_user_edit_inside_plugmans_entries_is_kept() -> None:
    parts = [Part(("mcpServers",), {"a": {"command": "a"}, "b": {"command": "b"}})]
    added = edit.add("json", JSONC, parts, "f")
    edited = added.text.replace('"command": "b"', '"command": "mine now"')
    after = edit.take_out("json", edited, added.blocks, parts, "f")
    servers = edit.module("json").load(after, "f")["mcpServers"]
    assert servers == {"mine": {"command": "x"}, "b": {"command": "mine now"}}
    assert "// the user's own settings" in after and "// keep me" in after


def test_json_user_entry_added_after_plugmans_survives_removal() -> None:
    added = edit.add("json", "{}\n", [MCP], "f")
    text = added.text.replace("\n  }\n}", ',\n    "later": {"command": "y"}\n  }\n}')
    after = edit.take_out("json", text, added.blocks, [MCP], "f")
    assert json.loads(after) == {"mcpServers": {"later": {"command": "y"}}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1', "f:1:8: expected ',', found 'end of file'"),
        ("[1]", "f: the file does not hold a JSON object"),
        ('{"mcpServers": []}', "f: mcpServers is not an object"),
        ('{"a": 1} x', "f:1:10: unexpected content after the JSON value"),
    ],
)
def test_json_that_cannot_be_edited_safely_is_refused(text: str, message: str) -> None:
    with pytest.raises(EditError) as caught:
        edit.add("json", text, [MCP], "f")
    assert str(caught.value).startswith(message)


TOML = """# my Codex config
model = "o3"

[mcp_servers.mine]
command = "x"  # keep

[profiles.fast]
model = "o4-mini"
"""


@pytest.mark.parametrize(
    "text",
    [
        TOML,
        "",
        "a = 1",
        "a = 1\n\n\n",
        TOML.replace('[mcp_servers.mine]\ncommand = "x"  # keep\n\n', ""),
    ],
)
def test_toml_round_trip_is_byte_identical(text: str) -> None:
    part = Part(("mcp_servers",), {"notes": SERVER})
    assert round_trip("toml", text, [part]) == text


def test_toml_tables_are_appended_with_inline_maps() -> None:
    part = Part(("mcp_servers",), {"notes": SERVER})
    text = edit.add("toml", TOML, [part], "f").text
    assert text.endswith(
        '\n\n[mcp_servers.notes]\ncommand = "python3"\nargs = ["server.py"]\nenv = {A = "${A}"}\n'
    )
    assert tomllib.loads(text)["mcp_servers"]["mine"] == {"command": "x"}


def test_toml_inline_server_table_is_refused() -> None:
    part = Part(("mcp_servers",), {"notes": SERVER})
    with pytest.raises(EditError):
        edit.add("toml", 'mcp_servers = { mine = { command = "x" } }\n', [part], "f")


YAML = """# goose
GOOSE_PROVIDER: openai
extensions:
  mine:  # hand-written
    cmd: x

    enabled: true
# trailing comment
other: 1
"""


@pytest.mark.parametrize(
    "text", [YAML, "", "a: 1", "extensions:\n", "a: 1\nextensions:\n  # none yet\nb: 2\n"]
)
def test_yaml_map_round_trip_is_byte_identical(text: str) -> None:
    part = Part(("extensions",), {"notes": {"cmd": "python3", "args": ["s.py"]}})
    assert round_trip("yaml", text, [part]) == text


@pytest.mark.parametrize(
    "text",
    ["mcpServers:\n- name: mine\n  command: x\nmodels: []\n", "mcpServers:\n    - name: mine\n"],
)
def test_yaml_list_round_trip_is_byte_identical(text: str) -> None:
    part = Part(("mcpServers",), {"notes": {"name": "notes", "command": "python3"}}, listed=True)
    assert round_trip("yaml", text, [part]) == text


def test_yaml_inline_container_is_refused() -> None:
    part = Part(("extensions",), {"notes": {"cmd": "x"}})
    with pytest.raises(EditError) as caught:
        edit.add("yaml", "extensions: {}\n", [part], "f")
    assert "written inline on line 1" in str(caught.value)


def test_yaml_edited_entries_cannot_be_taken_out_and_say_so() -> None:
    part = Part(("extensions",), {"notes": {"cmd": "x"}})
    added = edit.add("yaml", YAML, [part], "f")
    with pytest.raises(EditError) as caught:
        edit.take_out(
            "yaml",
            added.text.replace("  notes:\n", "  notes:  # mine too\n"),
            added.blocks,
            [part],
            "f",
        )
    assert "remove them by hand" in str(caught.value)


# Property: whatever JSON object the user has, in whatever layout, plugman's block comes out.
keys = st.text(st.characters(codec="utf-8", exclude_characters='"\\'), min_size=1, max_size=6)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=5))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[Part]]:
    data: dict[str, Any] = draw(st.dictionaries(keys, values, max_size=4))
    if draw(st.booleans()):
        data["mcpServers"] = draw(st.dictionaries(keys, values, max_size=2))
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    text = json.dumps(data, indent=indent, ensure_ascii=draw(st.booleans()))
    if indent is not None and draw(st.booleans()):
        text = text.replace("{\n", "{\n  // a comment\n", 1)
    text += draw(st.sampled_from(["", "\n"]))
    names = draw(st.lists(keys, min_size=1, max_size=3, unique=True))
    existing = data.get("mcpServers", {}) if isinstance(data.get("mcpServers"), dict) else {}
    entries = {n: {"command": n} for n in names if n not in existing}
    container = draw(
        st.sampled_from([("mcpServers",), ("a", "b"), ("projects", "/x", "mcpServers")])
    )
    if container[0] in data and not isinstance(data[container[0]], dict):
        container = ("fresh",)
    return text, [Part(container, entries or {"new": {}})]


@settings(max_examples=examples(300), deadline=None)
@given(documents())
def test_any_json_document_round_trips(case: tuple[str, list[Part]]) -> None:
    text, parts = case
    assert round_trip("json", text, parts) == text


def test_an_entry_that_cannot_go_cleanly_stays_and_the_rest_goes() -> None:
    """Removal never refuses a whole file: where taking one entry out would touch another
    setting (a stand-in editor that drops `theme` along with `bad`), that entry stays, the
    others go."""
    from types import SimpleNamespace

    from plugman.core import progress
    from plugman.manifest.edit import _structural

    def remove(text: str, part: Part, where: str) -> str:
        data = json.loads(text)
        for key in part.entries:
            del edit.at(data, part.container)[key]
            if key == "bad":
                del data["theme"]
        return json.dumps(data)

    mod = SimpleNamespace(load=lambda text, where: json.loads(text), remove=remove)
    text = json.dumps({"theme": "dark", "servers": {"good": {"c": 1}, "bad": {"c": 2}}})
    parts = [Part(("servers",), {"good": {"c": 1}, "bad": {"c": 2}})]
    warned: list[object] = []
    with progress.listening(None, warned.append):
        after = _structural(mod, text, parts, [], {"theme": "dark", "servers": {}}, "f.json")  # type: ignore[arg-type]
    assert json.loads(after) == {"theme": "dark", "servers": {"bad": {"c": 2}}}
    assert ["servers.bad could not be taken out" in str(w) for w in warned] == [True]


def test_a_file_plugman_opened_starts_where_the_agent_s_own_table_does() -> None:
    """plugman's block opened a new TOML file, the agent then appended its own table after a
    blank line (Codex's `[projects]` trust): taking plugman's block out leaves the agent's
    table at the top, not a blank line before it (found by test_shared_files_property)."""
    part = Part(("hooks", "state"), {"k": {"trusted_hash": "sha256:1"}})
    made = edit.add("toml", "", [part], "config.toml")
    agent = '\n[projects."/p"]\ntrust_level = "trusted"\n'
    text = made.text + agent
    assert edit.take_out("toml", text, made.blocks, [part], "config.toml") == agent.lstrip("\n")
