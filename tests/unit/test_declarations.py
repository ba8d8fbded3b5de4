"""A plugman.toml plugman creates is written without tomlkit, byte for byte as tomlkit would
write it, and taken out again only when it is still exactly that (plugman.config.declarations)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st

from plugman.config import declarations

PLAIN = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)


def _tomlkit(table: str, values: dict[str, str]) -> str:
    doc = tomlkit.parse("")
    doc.add(table, tomlkit.table())
    for key, value in values.items():
        doc[table][key] = value
    return tomlkit.dumps(doc)


@given(st.sampled_from(["plugins", "marketplaces"]), st.dictionaries(PLAIN, PLAIN, max_size=4))
def test_rendered_is_what_tomlkit_writes(table: str, values: dict[str, str]) -> None:
    plain = declarations.rendered(table, values)
    if plain is not None:
        assert plain == _tomlkit(table, values)
    else:
        assert any('"' in t or "\\" in t for t in [*values, *values.values()])


def test_what_is_not_plain_text_goes_to_tomlkit() -> None:
    assert declarations.rendered("plugins", {"a": 'say "hi"'}) is None
    assert declarations.rendered("plugins", {"é": "*"}) is None
    assert declarations.rendered("plugins", {"a": {"b": "c"}}) is None


@pytest.mark.parametrize("before", [None, b"", b"# mine\n", b"[plugins]\nother = '*'\n"])
def test_add_then_remove_restores_the_file(tmp_path: Path, before: bytes | None) -> None:
    path = tmp_path / "plugman.toml"
    if before is not None:
        path.write_bytes(before)
    owned: dict[str, object] = {}
    added = declarations.add(path, "plugins", {"tool@shelf": "*"}, owned)  # type: ignore[arg-type]
    assert tomlkit.parse(added.decode())["plugins"]["tool@shelf"] == "*"
    path.write_bytes(added)
    after = declarations.remove(path, "plugins", "tool@shelf", owned)  # type: ignore[arg-type]
    assert after == before
    assert owned == {}


def test_a_file_the_user_edited_is_edited_with_tomlkit(tmp_path: Path) -> None:
    path = tmp_path / "plugman.toml"
    owned: dict[str, object] = {}
    path.write_bytes(declarations.add(path, "plugins", {"tool@shelf": "*"}, owned))  # type: ignore[arg-type]
    path.write_text(path.read_text() + 'mine = "*"  # keep me\n')
    after = declarations.remove(path, "plugins", "tool@shelf", owned)  # type: ignore[arg-type]
    assert after == b'[plugins]\nmine = "*"  # keep me\n'
