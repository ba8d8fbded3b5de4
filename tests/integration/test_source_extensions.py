"""A third-party extension adds a plugin source kind through the `plugman_sources` hook, the
same hook the built-in kinds (path, git, archive, …) register through; a marketplace entry of
that kind validates and installs, and one of a kind no extension adds is refused by name."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman import extensions
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.sources import LockedSource
from plugman.hookspecs import hookimpl
from plugman.manifest.model import PluginSource
from plugman.manifest.validate import validate
from plugman.plugins.catalog import pins
from plugman.plugins.lifecycle import planner
from plugman.plugins.sources import Progress, SourceKind, fetch
from tests.integration.helpers import run


class Shelf:
    """Plugins kept on a shelf folder, by name: `{"source": "shelf", "package": NAME}`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def fetch(
        self, source: PluginSource, dest: Path, _base: Path | None, _progress: Progress
    ) -> tuple[Path, str | None]:
        shutil.copytree(self.folder / source.location, dest)
        return dest, "shelf-1"

    @hookimpl
    def plugman_sources(self) -> list[SourceKind]:
        return [SourceKind(("shelf",), self.fetch, location="package")]


@pytest.fixture
def shelf(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "shelf"
    plugin = folder / "tool" / ".claude-plugin"
    plugin.mkdir(parents=True)
    (plugin / "plugin.json").write_text(json.dumps({"name": "tool", "version": "2.0.0"}))
    extension = Shelf(folder)
    extensions.manager().register(extension)
    yield folder
    extensions.manager().unregister(extension)


def test_fetch_goes_through_the_registered_source_kind(tmp_path: Path, shelf: Path) -> None:
    fetched = fetch(PluginSource("shelf", "tool"), tmp_path / "staging")
    assert (fetched.root, fetched.pin, fetched.kind) == (tmp_path / "staging", "shelf-1", "shelf")
    assert (
        json.loads((fetched.root / ".claude-plugin" / "plugin.json").read_text())["name"] == "tool"
    )


def test_an_unknown_source_kind_names_the_registered_ones() -> None:
    assert {"path", "github", "url", "git-subdir", "archive"} <= set(extensions.source_kinds())
    with pytest.raises(PlugmanError, match=r"supported types: .*archive.*github"):
        extensions.source_kind("carrier-pigeon")


def test_a_minimal_kind_gets_its_own_lock_fields_words_and_local_check(shelf: Path) -> None:
    source = PluginSource("shelf", "tool")
    locked = pins.lock_source(source, "shelf-1", None)
    assert locked == {"type": "shelf", "package": "tool", "pin": "shelf-1"}  # no git `commit`
    assert pins.source_from_lock(locked) == source._replace(sha="shelf-1")
    assert pins.pin_of(locked) == "shelf-1"
    assert pins.describe(locked, "shelved") == "shelf source tool (pinned to shelf-1)"
    kind = extensions.source_kind("shelf")
    assert not kind.names_local_file(source)
    assert kind.names_local_file(PluginSource("shelf", "file:///etc"))  # safe by default
    assert kind.claim("shelf+tool", Path.cwd()) is None  # claims no install spec by default


def test_a_locked_source_of_a_kind_nothing_registers_is_never_read_as_git() -> None:
    locked = LockedSource("hg", {"url": "https://hg.example.org/tool", "commit": "0" * 40})
    with pytest.raises(PlugmanError, match=r"unknown plugin source type 'hg'") as raised:
        pins.source_from_lock(locked)
    assert "archive" in str(raised.value.hint)
    assert pins.describe(locked, None) == (
        "a source of type hg (no installed plugman extension reads it)"
    )
    assert pins.pin_of(locked) is None


def test_a_prefixed_spec_no_kind_claims_is_not_taken_for_git(tmp_path: Path) -> None:
    assert planner.parse_spec("https://example.org/r.git#v1", tmp_path).direct == PluginSource(
        "url", "https://example.org/r.git", ref="v1"
    )
    with pytest.raises(UsageError, match=r"'hg\+https://example.org/r.git' is not a plugin spec"):
        planner.parse_spec("hg+https://example.org/r.git", tmp_path)


def _market(folder: Path, source: dict[str, str]) -> Path:
    """A marketplace listing one plugin, `tool`, from `source`."""
    (folder / ".claude-plugin").mkdir(parents=True)
    entry = {"name": "tool", "source": source}
    document = {"name": "shelved", "owner": {"name": "Shelf"}, "plugins": [entry]}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(document))
    return folder


def test_a_marketplace_entry_of_an_extension_kind_validates_and_installs(
    tmp_path: Path, shelf: Path
) -> None:
    market = _market(tmp_path / "market", {"source": "shelf", "package": "tool"})
    found = validate([market], source_keys=extensions.source_locations)
    assert found.diagnostics == []
    run("marketplace", "add", str(market))
    done = run("install", "tool@shelved")["changes"]
    assert [(c["action"], c["id"], c["version"]) for c in done] == [
        ("installed", "tool@shelved", "2.0.0")
    ]
    listed = run("list")["plugins"]
    assert [(p["id"], p["source"]["type"]) for p in listed] == [("tool@shelved", "shelf")]


def test_an_entry_of_a_kind_no_extension_adds_is_refused_by_name(tmp_path: Path) -> None:
    market = _market(tmp_path / "market", {"source": "shelf", "package": "tool"})
    found = validate([market], source_keys=extensions.source_locations)
    assert [(d.code, d.path) for d in found.diagnostics] == [
        ("schema-enum", "plugins[0].source.source")
    ]
    assert "unknown source type 'shelf'" in found.diagnostics[0].message
