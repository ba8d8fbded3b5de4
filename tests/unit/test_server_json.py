"""server.json reading and its translation into an MCP entry never fail but with a PlugmanError,
whatever the document holds: the fixture with any one node replaced by any JSON value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from plugman.config.servers.entries import check_entry
from plugman.config.servers.registry_entry import Pick, entry_from
from plugman.config.servers.server_json import load
from plugman.core.errors import PlugmanError
from tests.conftest import examples

FIXTURE = Path(__file__).parents[1] / "integration" / "mcp_registry" / "weather.server.json"
BASE = json.loads(FIXTURE.read_text())
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


PATHS = paths(BASE)


def replaced(path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    doc = json.loads(json.dumps(BASE))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return doc


@settings(max_examples=examples(400), deadline=None)
@given(
    st.sampled_from(PATHS),
    JSON,
    st.sampled_from([Pick(), Pick(package=2), Pick(remote=1), Pick(prefer="oci"), Pick(remote=2)]),
)
def test_any_one_change_reads_or_fails_cleanly(path: tuple[Any, ...], new: Any, pick: Pick) -> None:
    try:
        server = load(json.dumps(replaced(path, new)), "server.json")
        found = entry_from(server, "fuzzed", pick)
        check_entry("fuzzed", found.entry)
    except PlugmanError:
        pass


def test_the_fixture_reads_with_every_pick() -> None:
    server = load(FIXTURE.read_text(), str(FIXTURE))
    for pick in (Pick(package=1), Pick(package=2), Pick(package=3), Pick(remote=1), Pick(remote=2)):
        found = entry_from(server, "w", pick)
        assert check_entry("w", found.entry) == []
