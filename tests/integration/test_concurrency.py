"""Eight plugman processes installing and uninstalling at once: all succeed, none loses work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.integration.helpers import run

PLUGINS = [f"p{i}" for i in range(8)]


def make_marketplace(root: Path) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    for name in PLUGINS:
        folder = root / "plugins" / name / ".claude-plugin"
        folder.mkdir(parents=True)
        (folder / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
        (folder.parent / "README.md").write_text(f"{name}\n")
    catalog = {
        "name": "many",
        "owner": {"name": "t"},
        "plugins": [{"name": n, "source": f"./plugins/{n}"} for n in PLUGINS],
    }
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def cycle(name: str, project: Path) -> list[tuple[int, str]]:
    results = []
    for args in (
        ["install", name, "--scope", "project"],
        ["list"],
        ["uninstall", name, "--scope", "project"],
        ["install", name],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(project), *args],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            timeout=300,
            check=False,
        )
        results.append((done.returncode, done.stderr))
    return results


def test_eight_concurrent_processes(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    run("marketplace", "add", str(make_marketplace(tmp_path / "market")), project=project)
    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(lambda name: cycle(name, project), PLUGINS))
    for name, results in zip(PLUGINS, outcomes, strict=True):
        assert all(code == 0 for code, _err in results), (name, results)
    listed = run("list", project=project)["plugins"]
    assert sorted((p["id"], p["scope"]) for p in listed) == [(f"{n}@many", "user") for n in PLUGINS]
    assert not (project / "plugman.lock").exists()
    assert not (project / "plugman.toml").exists()
    user_toml = (isolated_home / "config" / "plugman.toml").read_text()
    assert all(f'"{n}@many" = "*"' in user_toml for n in PLUGINS)
    trees = [p for p in (isolated_home / "data" / "store").iterdir() if p.name != ".staging"]
    assert len(trees) == 8
    assert list((isolated_home / "state" / "journal").iterdir()) == []
