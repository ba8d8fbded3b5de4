"""The launch plans' stamp is honest (issue 36): every file and folder a resolution opens (or
tries to: an absent one) or lists is in what a plan watches (plugman.runtime.launch.plans.watched),
in a folder it watches whole, or in the content-addressed store (immutable: a new copy is a new
install record). Resolution runs under an audit hook (`open`, `os.listdir`, `os.scandir`) in a
child process, after its imports, in a project with a plugin's hook and a project hook,
approvals and managed settings present, so that a file read by a later change of resolution (a
new scope, a new state record) fails here until the plans watch it too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_export import cli
from tests.integration.test_launch_parity import parity_market

CHILD = r"""
import json, os, sys
from pathlib import Path

import pytest
from plugman.cli.running import paths_for
from plugman.config.resolution import resolve
from plugman.runtime.launch import plans

paths = paths_for(None)
resolve(paths, os.environ)  # once, so every lazy import is done before the audit
seen = []

def audit(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        seen.append(os.fsdecode(args[0]))
    elif event in ("os.listdir", "os.scandir") and args and args[0] is not None:
        seen.append(os.fsdecode(args[0]) if not isinstance(args[0], int) else "")

sys.addaudithook(audit)
resolution = resolve(paths, os.environ)
watched = [[str(p), listed] for p, listed in plans.watched(paths, resolution.hooks)]
print(json.dumps({"seen": seen, "watched": watched, "store": str(paths.store_dir),
                  "hooks": len(resolution.hooks)}))
"""

PROJECT_TOML = (
    '[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = "command"\n'
    'command = "sh scripts/hook.sh"\n'
)


def test_every_path_resolution_opens_is_watched_by_the_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "scripts" / "hook.sh").write_text("echo hi\n")
    (project / "plugman.toml").write_text(PROJECT_TOML)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    cli(project, "marketplace", "add", str(parity_market(tmp_path / "market")))
    cli(project, "install", "parity", "--scope", "user")
    cli(project, "trust", "approve", "--all")
    managed = Path(os.environ["PLUGMAN_MANAGED_DIR"])
    managed.mkdir(parents=True, exist_ok=True)
    (managed / "managed-settings.toml").write_text("")
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PWD": str(project)},
    )
    found = json.loads(done.stdout)
    assert found["hooks"] >= 2  # the plugin's and the project's
    watched = {path for path, _ in found["watched"]}
    listed = {path for path, whole in found["watched"] if whole}  # a file added there is seen
    store = found["store"] + os.sep
    python = tuple({sys.prefix, sys.base_prefix, str(Path(__file__).parents[2] / "plugman")})
    opened = [p for p in found["seen"] if p and not p.startswith(python)]
    assert opened, found  # the audit saw resolution read
    unwatched = sorted(
        {
            p
            for p in opened
            if p not in watched and str(Path(p).parent) not in listed and not p.startswith(store)
        }
    )
    assert unwatched == [], unwatched
