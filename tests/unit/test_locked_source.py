"""`LockedSource`, the typed source table: parsed once where a file is read (a malformed one is
an error at that file), written back exactly as it was read."""

from __future__ import annotations

import json

import pytest

from plugman.core.errors import PlugmanError
from plugman.core.sources import LockedSource
from plugman.core.state import InstalledPlugin

RECORD = {"name": "x", "marketplace": "m", "version": "1", "content_hash": "sha256:" + "0" * 64}


@pytest.mark.parametrize(
    "source",
    [
        [],
        "github",
        {},
        {"type": 7},
        {"type": ""},
        {"type": "url", "url": ["a"]},
        {"type": "url", "n": 1},
    ],
)
def test_a_malformed_source_in_a_record_is_an_error_at_the_file(source: object) -> None:
    with pytest.raises(PlugmanError) as raised:
        InstalledPlugin.from_json(RECORD | {"source": source}, "/state/user.json")
    assert raised.value.where == "/state/user.json"


def test_a_source_is_written_back_as_it_was_read() -> None:
    table = {"commit": "c" * 40, "path": None, "ref": "main", "repo": "o/r", "type": "github"}
    found = InstalledPlugin.from_json(RECORD | {"source": table}, "here").source
    assert (found.kind, found.get("ref"), found.get("missing")) == ("github", "main", None)
    assert json.dumps(found.table()) == json.dumps(table)  # the same keys, in the same order
    assert found == table and found.fields == {k: v for k, v in table.items() if k != "type"}
    # as plugman.lock holds it: `type` first, the fields that say something, sorted
    assert list(found.settled().table()) == ["type", "commit", "ref", "repo"]


def test_an_extension_kind_keeps_its_own_fields() -> None:
    made = LockedSource("hg", {"url": "https://hg.example/t", "rev": "default", "node": "a" * 40})
    assert made.table() == {
        "type": "hg",
        "url": "https://hg.example/t",
        "rev": "default",
        "node": "a" * 40,
    }
    assert LockedSource.parse(made.table(), "x", "hint") == made
