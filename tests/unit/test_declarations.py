"""A plugman.toml plugman creates or edits is written by tomlkit, and a file plugman created
goes again with its last entry (plugman.config.declarations)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugman.config import declarations
from plugman.core.owned import Owned

TEXT = st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=("Cc", "Cs"))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(["plugins", "marketplaces"]),
    st.dictionaries(st.text(TEXT, max_size=12), st.text(TEXT, max_size=12), min_size=1, max_size=4),
)
def test_a_new_file_is_written_by_tomlkit_and_goes_whole(
    tmp_path: Path, table: str, values: dict[str, str]
) -> None:
    path = tmp_path / "plugman.toml"
    path.unlink(missing_ok=True)
    owned = Owned({}, "record.json")
    added = declarations.add(path, table, values, owned)
    assert tomllib.loads(added.decode()) == {table: values}
    path.write_bytes(added)
    after: bytes | None = added
    for key in values:
        after = declarations.remove(path, table, key, owned)
        if after is not None:
            path.write_bytes(after)
    assert after is None
    assert not owned


@pytest.mark.parametrize("before", [None, b"", b"# mine\n", b"[plugins]\nother = '*'\n"])
def test_add_then_remove_restores_the_file(tmp_path: Path, before: bytes | None) -> None:
    path = tmp_path / "plugman.toml"
    if before is not None:
        path.write_bytes(before)
    owned = Owned({}, "record.json")
    added = declarations.add(path, "plugins", {"tool@shelf": "*"}, owned)
    assert tomlkit.parse(added.decode())["plugins"]["tool@shelf"] == "*"
    path.write_bytes(added)
    after = declarations.remove(path, "plugins", "tool@shelf", owned)
    assert after == before
    assert not owned


def test_a_file_the_user_edited_is_edited_with_tomlkit(tmp_path: Path) -> None:
    path = tmp_path / "plugman.toml"
    owned = Owned({}, "record.json")
    path.write_bytes(declarations.add(path, "plugins", {"tool@shelf": "*"}, owned))
    path.write_text(path.read_text() + 'mine = "*"  # keep me\n')
    after = declarations.remove(path, "plugins", "tool@shelf", owned)
    assert after == b'[plugins]\nmine = "*"  # keep me\n'
