"""Fuzzing the committed files sync acts on: plugman.lock, plugman.toml and the project's
.claude/settings.json, generated from their published schemas and mutated (a key missing, a
wrong type, an extra key, a merge conflict left in), then given to every command that reads
them (`sync`, `sync --frozen`, `lock`, `list`, `audit`, `lock export`). No command may end in
a traceback; each exits 0, 2 (a located refusal) or 1 where that is its documented answer
(audit's findings, lock export without the locked trees, a sync refused); and a command that
did not succeed changed none of the project's files nor plugman's state."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import given, note
from hypothesis import strategies as st

from plugman.manifest import schema
from tests.attacks.lockcase import market, plugman, project
from tests.fuzz import harness
from tests.integration.helpers import snapshot

CASES = 40  # per file: each runs six commands in-process (~0.15 s a case)
SEEN: Counter[int] = Counter()  # the exit codes seen: the fuzz reaches refusals and successes
LOCK = schema.load("plugman-lock.schema.json")
TOML = schema.load("plugman-toml.schema.json")
ENTRY = LOCK["$defs"]["lockedPlugin"]
KINDS = [
    branch for branch in LOCK["$defs"]["source"]["oneOf"] if "const" in branch["properties"]["type"]
]
COMMANDS = (
    ("sync",),
    ("sync", "--frozen"),
    ("lock",),
    ("list",),
    ("audit",),
    ("lock", "export"),
)
CONFLICT = "<<<<<<< HEAD\n{line}\n=======\n{line}\n>>>>>>> theirs"

wrong = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["a", "type"]), st.integers(0, 3), max_size=2),
    st.text(max_size=8),
)
keys = st.text(st.sampled_from("abcxyz_-"), min_size=1, max_size=6)


def _source(kind: dict[str, Any], draw: Callable[..., Any]) -> dict[str, Any]:
    """A source of one kind: its required fields, maybe its others, as strings."""
    fields = {"type": kind["properties"]["type"]["const"]}
    for name in kind["properties"]:
        if name != "type" and (name in kind["required"] or draw(st.booleans())):
            fields[name] = draw(st.sampled_from(["./plugins/fmt", "a/b", "sha256:" + "a" * 64]))
    return fields


@st.composite
def mutated(draw: Callable[..., Any], base: dict[str, Any], schema_of: dict[str, Any]) -> Any:
    """`base` (a table) with one mutation the schema says is wrong, or a legitimate change."""
    data = json.loads(json.dumps(base))
    how = draw(st.sampled_from(["drop", "wrong", "extra", "source", "same"]))
    note(f"mutation: {how}")
    names = list(schema_of.get("properties", {}))
    if how == "drop" and schema_of.get("required"):
        data.pop(draw(st.sampled_from(schema_of["required"])), None)
    elif how == "wrong" and names:
        data[draw(st.sampled_from(names))] = draw(wrong)
    elif how == "extra":
        data[draw(keys)] = draw(wrong)
    elif how == "source" and "source" in data:
        data["source"] = _source(draw(st.sampled_from(KINDS)), draw)
    return data


def _conflicted(text: str, draw: Callable[..., Any]) -> str:
    lines = text.splitlines()
    if not lines:
        return text
    at = draw(st.integers(0, len(lines) - 1))
    lines[at] = CONFLICT.format(line=lines[at])
    return "\n".join(lines) + "\n"


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    return project(tmp_path, market(tmp_path / "acme", "acme", {"fmt": "Format.\n"}))


def _check(folder: Path, home: Path, argv: tuple[str, ...]) -> None:
    watched = (folder / "plugman.lock", folder / "plugman.toml", folder / ".claude", home / "state")
    before = {k: v for k, v in snapshot(*watched).items() if not k.endswith("/state/lock")}
    done = plugman(folder, *argv)  # asserts: no traceback
    note(f"plugman {' '.join(argv)} -> {done.code}: {done.stderr[:300]}")
    assert done.code in (0, 1, 2), done
    SEEN[done.code] += 1
    if done.code == 2:
        assert "error:" in done.stderr and "hint:" in done.stderr, done
    if done.code != 0 and argv != ("list",):
        after = {k: v for k, v in snapshot(*watched).items() if not k.endswith("/state/lock")}
        assert {k: v for k, v in after.items() if v[0] != "dir"} == {
            k: v for k, v in before.items() if v[0] != "dir"
        }, argv


def _run_all(folder: Path, home: Path, file: Path, text: str) -> None:
    good = {p: p.read_bytes() for p in (folder / "plugman.lock", folder / "plugman.toml")}
    file.parent.mkdir(exist_ok=True)
    file.write_text(text)
    try:
        for argv in COMMANDS:
            _check(folder, home, argv)
    finally:
        for path, data in good.items():
            path.write_bytes(data)
        if file.name == "settings.json":
            file.unlink(missing_ok=True)


def test_fuzz_lock(
    synced: Path, isolated_home: Path, record_property: Callable[[str, object], None]
) -> None:
    cases = harness.Cases("plugman.lock", CASES)
    base = tomlkit.parse((synced / "plugman.lock").read_text()).unwrap()

    @cases.fuzz
    @given(st.data())
    def run(data: st.DataObject) -> None:
        cases()
        doc = dict(base)
        entry = data.draw(mutated(base["plugins"][0], ENTRY))
        doc["plugins"] = [entry]
        if data.draw(st.booleans()):
            doc = data.draw(mutated(doc, LOCK))
        text = tomlkit.dumps(doc) if isinstance(doc, dict) else ""
        if data.draw(st.integers(0, 4)) == 0:
            text = _conflicted(text, data.draw)
        note(text)
        _run_all(synced, isolated_home, synced / "plugman.lock", text)

    SEEN.clear()
    run()
    cases.report(record_property)
    assert SEEN[0] and SEEN[2], SEEN  # both accepted and refused documents were generated


def test_fuzz_plugman_toml(
    synced: Path, isolated_home: Path, record_property: Callable[[str, object], None]
) -> None:
    cases = harness.Cases("plugman.toml", CASES)
    base = tomlkit.parse((synced / "plugman.toml").read_text()).unwrap()
    spec = TOML["$defs"]["pluginSpec"]["oneOf"][1]
    market_schema = TOML["$defs"]["marketplace"]

    @cases.fuzz
    @given(st.data())
    def run(data: st.DataObject) -> None:
        cases()
        doc = json.loads(json.dumps(base))
        which = data.draw(st.sampled_from(["plugin", "market", "top", "conflict"]))
        if which == "plugin":
            doc["plugins"]["fmt@acme"] = data.draw(mutated({"version": "*"}, spec))
        elif which == "market":
            doc["marketplaces"]["acme"] = data.draw(
                mutated(doc["marketplaces"]["acme"], market_schema)
            )
        elif which == "top":
            doc = data.draw(mutated(doc, TOML))
        text = tomlkit.dumps(doc)
        if which == "conflict":
            text = _conflicted(text, data.draw)
        note(text)
        _run_all(synced, isolated_home, synced / "plugman.toml", text)

    SEEN.clear()
    run()
    cases.report(record_property)
    assert SEEN[0] and SEEN[2], SEEN  # both accepted and refused documents were generated


def test_fuzz_claude_settings(
    synced: Path, isolated_home: Path, record_property: Callable[[str, object], None]
) -> None:
    cases = harness.Cases(".claude/settings.json", CASES)
    base = {
        "enabledPlugins": {"fmt@acme": True},
        "extraKnownMarketplaces": {"acme": {"source": {"source": "directory", "path": "x"}}},
        "permissions": {"allow": []},
    }
    shape = {
        "properties": {"enabledPlugins": {}, "extraKnownMarketplaces": {}, "permissions": {}},
        "required": ["enabledPlugins"],
    }

    @cases.fuzz
    @given(st.data())
    def run(data: st.DataObject) -> None:
        cases()
        doc = data.draw(mutated(base, shape))
        if data.draw(st.booleans()):
            doc["enabledPlugins"] = data.draw(
                st.one_of(wrong, st.dictionaries(st.sampled_from(["fmt@acme", "x"]), wrong))
            )
        text = json.dumps(doc, indent=2)
        if data.draw(st.integers(0, 4)) == 0:
            text = _conflicted(text, data.draw)
        note(text)
        _run_all(synced, isolated_home, synced / ".claude" / "settings.json", text)

    SEEN.clear()
    run()
    cases.report(record_property)
    assert SEEN[0] and SEEN[2], SEEN  # both accepted and refused documents were generated
