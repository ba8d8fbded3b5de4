"""Install then uninstall 50 real plugins from the corpus marketplaces: nothing is left behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from plugman.cli.app import app
from plugman.manifest import marketplace
from plugman.manifest.reader import Report
from tests.conftest import CORPUS
from tests.integration.helpers import run, snapshot

MARKETPLACES = [
    "anthropics__claude-plugins-official",
    "anthropics__knowledge-work-plugins",
    "anthropics__financial-services-plugins",
]


def local_plugins(folder: Path) -> list[str]:
    market, _sink = marketplace.load(folder / ".claude-plugin" / "marketplace.json", Report())
    assert market is not None
    return [
        e.name
        for e in market.plugins
        if e.source and e.source.kind == "path" and (folder / e.source.location).is_dir()
    ]


def test_fifty_corpus_plugins_install_and_uninstall_without_a_trace(
    tmp_path: Path, isolated_home: Path, record_property: Callable[[str, object], None]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "plugman.toml").write_text("# hand-written\n[tool]\nkeep = true\n")
    installed, refused = [], []
    for name in MARKETPLACES:
        folder = CORPUS / name
        market = run("marketplace", "add", str(folder), project=project)["marketplaces"][0]["name"]
        before = snapshot(isolated_home, project)
        for plugin in local_plugins(folder):
            if len(installed) == 50:
                break
            result = CliRunner().invoke(
                app,
                ["--project", str(project), "install", f"{plugin}@{market}", "--scope", "project"],
            )
            if result.exit_code != 0:
                assert result.exception is None or isinstance(result.exception, SystemExit)
                assert "is not a valid plugin" in result.output, result.output
                refused.append(plugin)
                continue
            assert (project / "plugman.lock").is_file()
            run("uninstall", f"{plugin}@{market}", "--scope", "project", project=project)
            assert snapshot(isolated_home, project) == before, plugin
            installed.append(plugin)
        run("marketplace", "remove", market, project=project)
    assert len(installed) == 50, (installed, refused)
    record_property(
        "summary",
        f"corpus install: 50 installed and removed without a trace, "
        f"{len(refused)} refused as invalid plugins",
    )
