"""A third-party extension adds a plugin source kind through the `plugman_sources` hook, the
same hook the built-in kinds (path, git, archive, …) register through. (Marketplace entries of
a new kind are still refused by the marketplace schema's `source` enum.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman import extensions
from plugman.core.errors import PlugmanError
from plugman.hookspecs import hookimpl
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import Progress, SourceKind, fetch


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
        return [SourceKind(("shelf",), self.fetch)]


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
