"""Servers are ordered by precedence, name, file and then the entry's text (the tie-break that
makes the order files were read in never matter), the text written only where the rest ties."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from plugman.config.merge import Origin, Server, _ordered, rank

SERVERS = st.builds(
    lambda scope, name, file, entry: Server(name, entry, Origin(scope, file)),
    st.sampled_from(["managed", "local", "project", "user", "plugin", "claude.ai"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["f1", "f2"]),
    st.dictionaries(st.sampled_from(["command", "url", "args"]), st.text(max_size=2), max_size=2),
)


def by_all_four(servers: list[Server]) -> list[Server]:
    return sorted(
        servers,
        key=lambda s: (rank(s.origin), s.name, s.origin.file, json.dumps(s.entry, sort_keys=True)),
    )


@given(st.lists(SERVERS, max_size=12))
def test_the_order_is_that_of_sorting_by_all_four(servers: list[Server]) -> None:
    assert _ordered(servers) == by_all_four(servers)
    assert _ordered(servers[::-1]) == by_all_four(servers[::-1])
