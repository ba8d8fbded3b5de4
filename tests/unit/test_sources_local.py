"""`path` sources: a copy that keeps in-plugin links, skips the rest and never leaves `base`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plugman.core.errors import PlugmanError
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import Fetched, fetch


def make_marketplace(tmp_path: Path) -> Path:
    """A marketplace with one plugin holding every kind of entry a copy must handle."""
    market = tmp_path / "market"
    plugin = market / "plugins" / "demo"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo"}')
    (plugin / "skills" / "greet").mkdir(parents=True)
    (plugin / "skills" / "greet" / "SKILL.md").write_text("---\nname: greet\n---\nHi\n")
    (plugin / "bin").mkdir()
    (plugin / "bin" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (plugin / "bin" / "run.sh").chmod(0o755)
    (plugin / "README.md").write_text("readme")
    (plugin / ".git").mkdir()
    (plugin / ".git" / "config").write_text("[core]\n")
    (plugin / "docs").symlink_to("skills/greet")  # inside: kept
    (plugin / "readme-link").symlink_to(plugin / "README.md")  # absolute but inside: kept
    (plugin / "secret").symlink_to("/etc/passwd")  # outside: skipped
    (plugin / "sibling").symlink_to("../other")  # elsewhere in the marketplace: skipped
    (market / "plugins" / "other").mkdir()
    os.link(plugin / "README.md", plugin / "hardlink.md")
    return market


def test_copy_keeps_files_modes_and_inside_links(tmp_path: Path) -> None:
    market = make_marketplace(tmp_path)
    dest = tmp_path / "stage"
    result = fetch(PluginSource("path", "./plugins/demo"), dest, base=market)
    assert result == Fetched(dest, None, "path")
    assert (dest / ".claude-plugin" / "plugin.json").read_text() == '{"name": "demo"}'
    assert (dest / "skills" / "greet" / "SKILL.md").is_file()
    assert (dest / "bin" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (dest / "README.md").stat().st_mode & 0o777 == 0o644
    assert (dest / "docs").readlink() == Path("skills/greet")
    assert (dest / "docs" / "SKILL.md").is_file()
    assert (dest / "readme-link").readlink() == Path("README.md")
    hard = dest / "hardlink.md"
    assert hard.read_text() == "readme" and not hard.is_symlink()
    assert hard.stat().st_nlink == 1


def test_outside_links_and_git_are_skipped(tmp_path: Path) -> None:
    market = make_marketplace(tmp_path)
    dest = tmp_path / "stage"
    fetch(PluginSource("path", "plugins/demo"), dest, base=market)
    assert not os.path.lexists(dest / "secret")
    assert not os.path.lexists(dest / "sibling")
    assert not (dest / ".git").exists()


def test_linked_plugin_folder_inside_marketplace_is_dereferenced(tmp_path: Path) -> None:
    market = make_marketplace(tmp_path)
    (market / "alias").symlink_to("plugins/demo")
    dest = tmp_path / "stage"
    fetch(PluginSource("path", "./alias"), dest, base=market)
    assert (dest / "README.md").read_text() == "readme"


@pytest.mark.parametrize("location", ["../outside", "/etc", "plugins/../../outside", "a\\..\\b"])
def test_location_escaping_base_is_refused(tmp_path: Path, location: str) -> None:
    market = make_marketplace(tmp_path)
    (tmp_path / "outside").mkdir()
    dest = tmp_path / "stage"
    with pytest.raises(PlugmanError) as caught:
        fetch(PluginSource("path", location), dest, base=market)
    assert caught.value.hint
    assert not dest.exists()


def test_link_out_of_the_marketplace_is_refused(tmp_path: Path) -> None:
    market = make_marketplace(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (market / "escape").symlink_to(tmp_path / "elsewhere")
    dest = tmp_path / "stage"
    with pytest.raises(PlugmanError, match="outside the marketplace"):
        fetch(PluginSource("path", "escape"), dest, base=market)
    assert not dest.exists()


def test_missing_folder_and_existing_dest(tmp_path: Path) -> None:
    market = make_marketplace(tmp_path)
    with pytest.raises(PlugmanError, match="does not exist"):
        fetch(PluginSource("path", "plugins/nope"), tmp_path / "stage", base=market)
    assert not (tmp_path / "stage").exists()
    (tmp_path / "taken").mkdir()
    with pytest.raises(PlugmanError, match="already exists"):
        fetch(PluginSource("path", "plugins/demo"), tmp_path / "taken", base=market)
    assert (tmp_path / "taken").is_dir()


def test_without_base_the_location_is_used_as_given(tmp_path: Path) -> None:
    market = make_marketplace(tmp_path)
    dest = tmp_path / "stage"
    fetch(PluginSource("path", str(market / "plugins" / "demo")), dest)
    assert (dest / "README.md").is_file()


@pytest.mark.parametrize("kind", ["npm", "command", "pip"])
def test_unsupported_kinds(tmp_path: Path, kind: str) -> None:
    dest = tmp_path / "stage"
    with pytest.raises(PlugmanError) as caught:
        fetch(PluginSource(kind, "something"), dest)
    assert caught.value.hint
    assert not dest.exists()
