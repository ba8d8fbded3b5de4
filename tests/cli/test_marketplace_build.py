"""`plugman marketplace build [DIR] [--check]`: a marketplace's entries from its plugin
folders, edited in place, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plugman.cli import invoke, main
from plugman.cli.runner import Result
from tests.integration.helpers import snapshot

# Written by hand: 4-space indentation, the author's own fields and an entry for a remote plugin.
AUTHORED = """{
    "name": "acme",
    "owner": {"name": "Acme"},
    "plugins": [
        {
            "name": "alpha",
            "source": "./plugins/alpha/",
            "description": "old words",
            "category": "productivity",
            "tags": ["a", "b"]
        },
        {"name": "remote", "source": {"source": "github", "repo": "acme/remote"}}
    ],
    "description": "Acme's plugins"
}
"""


def cli(*args: str) -> Result:
    return invoke(list(args))


def plugin(market: Path, folder: str, **manifest: str) -> Path:
    root = market / "plugins" / folder
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return root


@pytest.fixture
def market(tmp_path: Path) -> Path:
    root = tmp_path / "acme"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(AUTHORED)
    plugin(root, "alpha", name="alpha", version="1.2.0", description="Alpha does a.")
    plugin(root, "beta", name="beta", version="0.1.0", description="Beta does b.")
    plugin(root, "gamma", name="gamma")
    (root / "plugins" / "notes.txt").write_text("not a plugin\n")
    (root / "plugins" / "empty").mkdir()
    return root


def catalog(market: Path) -> str:
    return (market / ".claude-plugin" / "marketplace.json").read_text()


def test_build_adds_and_updates_keeping_what_the_author_wrote(market: Path) -> None:
    result = cli("marketplace", "build", str(market), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["written"] is True
    assert [(p["name"], p["action"], p["fields"]) for p in doc["plugins"]] == [
        ("alpha", "updated", ["description", "version"]),
        ("beta", "added", []),
        ("gamma", "added", []),
    ]
    data = json.loads(catalog(market))
    assert data["plugins"] == [
        {
            "name": "alpha",
            "source": "./plugins/alpha/",
            "description": "Alpha does a.",
            "category": "productivity",
            "tags": ["a", "b"],
            "version": "1.2.0",
        },
        {"name": "remote", "source": {"source": "github", "repo": "acme/remote"}},
        {
            "name": "beta",
            "source": "./plugins/beta",
            "description": "Beta does b.",
            "version": "0.1.0",
        },
        {"name": "gamma", "source": "./plugins/gamma"},
    ]
    text = catalog(market)
    assert text.startswith('{\n    "name": "acme",\n    "owner": {"name": "Acme"},\n')
    assert (
        '        {"name": "remote", "source": {"source": "github", "repo": "acme/remote"}},' in text
    )
    assert '            "description": "Alpha does a.",\n            "category"' in text
    assert text.endswith('    ],\n    "description": "Acme\'s plugins"\n}\n')
    assert main(["validate", str(market)]) == 0


def test_build_again_changes_nothing(market: Path) -> None:
    assert cli("marketplace", "build", str(market)).exit_code == 0
    before = snapshot(market)
    result = cli("marketplace", "build", str(market))
    assert result.exit_code == 0
    assert "unchanged alpha (./plugins/alpha/)" in result.stdout
    assert "is up to date" in result.stdout
    assert snapshot(market) == before


def test_check_fails_when_stale_and_passes_once_built(market: Path) -> None:
    before = snapshot(market)
    stale = cli("marketplace", "build", str(market), "--check")
    assert stale.exit_code == 1
    assert "marketplace.json is out of date: alpha's description and version differ" in (
        stale.stderr
    )
    assert "beta is not listed; gamma is not listed" in stale.stderr
    assert "hint: run `plugman marketplace build" in stale.stderr
    assert snapshot(market) == before
    assert cli("marketplace", "build", str(market)).exit_code == 0
    assert cli("marketplace", "build", str(market), "--check").exit_code == 0
    manifest = market / "plugins" / "beta" / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace("0.1.0", "0.2.0"))
    again = cli("marketplace", "build", str(market), "--check", "--json")
    assert again.exit_code == 1
    assert "beta's version differs from plugin.json" in json.loads(again.stdout)["error"]["message"]


def test_build_reports_entries_whose_folder_is_gone_and_keeps_them(market: Path) -> None:
    text = catalog(market).replace("./plugins/alpha/", "./plugins/moved")
    (market / ".claude-plugin" / "marketplace.json").write_text(text)
    plugin(market, "delta", name="alpha")  # a new folder taking a listed name
    before = snapshot(market)
    clash = cli("marketplace", "build", str(market))
    assert clash.exit_code == 1
    assert "is named 'alpha', which the entry for './plugins/moved' already uses" in clash.stderr
    assert snapshot(market) == before
    manifest = market / "plugins" / "delta" / ".claude-plugin" / "plugin.json"
    manifest.write_text('{"name": "delta"}\n')
    (market / "plugins" / "alpha" / ".claude-plugin" / "plugin.json").write_text(
        '{"name": "alpha-two"}\n'
    )
    result = cli("marketplace", "build", str(market))
    assert result.exit_code == 0, result.output
    assert "warning: the entry for ./plugins/moved has no folder (kept)" in result.stdout
    assert "./plugins/moved" in catalog(market)


def test_plugin_root_from_metadata(tmp_path: Path) -> None:
    market = tmp_path / "m"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(
        '{"name": "m", "owner": {"name": "M"}, "metadata": {"pluginRoot": "./src"}}\n'
    )
    root = market / "src" / "one"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "one", "version": "1.0.0"}')
    assert cli("marketplace", "build", str(market)).exit_code == 0
    data = json.loads(catalog(market))
    assert data["plugins"] == [{"name": "one", "source": "./src/one", "version": "1.0.0"}]


def test_build_refuses_an_invalid_plugin_folder_and_writes_nothing(market: Path) -> None:
    (market / "plugins" / "beta" / ".claude-plugin" / "plugin.json").write_text('{"name": 1}')
    before = snapshot(market)
    result = cli("marketplace", "build", str(market))
    assert result.exit_code == 1
    assert "the plugin is not valid" in result.stderr
    assert "error [schema-type] name" in result.stderr
    assert snapshot(market) == before


def test_build_needs_a_marketplace(tmp_path: Path) -> None:
    result = cli("marketplace", "build", str(tmp_path))
    assert result.exit_code == 2
    assert "has no .claude-plugin/marketplace.json" in result.stderr
    assert "plugman new --marketplace NAME" in result.stderr
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "marketplace.json").write_text('{"name": "x", "plugins": {}}')
    result = cli("marketplace", "build", str(tmp_path))
    assert result.exit_code == 1
    assert "'plugins' is not a list" in result.stderr
    (tmp_path / ".claude-plugin" / "marketplace.json").write_text('{"name": ')
    result = cli("marketplace", "build", str(tmp_path))
    assert result.exit_code == 1
    assert "marketplace.json:1:" in result.stderr
    assert "Traceback" not in result.output
