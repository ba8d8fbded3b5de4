"""`plugman validate` agrees with `claude plugin validate` (Claude Code 2.1.332) on the
corpus: every Claude plugin (`.claude-plugin/plugin.json`) and marketplace manifest of
`tests/corpus/manifests` (the files `tests/unit/test_corpus.py` walks) gets the same verdict,
error or not, file by file. Messages may differ; where plugman's is an error, Claude's is too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from plugman.extensions import source_locations
from plugman.manifest.validate import validate
from tests.integration import agents
from tests.unit.test_corpus import corpus_files

PLUGIN = "/.claude-plugin/plugin.json"


def claude_targets() -> list[Path]:
    """The folder Claude validates for each corpus manifest it reads: a plugin's root, or the
    marketplace's (holding `.claude-plugin/marketplace.json`)."""
    found = []
    for path, kind in corpus_files().items():
        if path.parent.name == ".claude-plugin" and kind in ("plugin.json", "marketplace.json"):
            found.append(path)
    return sorted(found)


def claude_verdict(claude: Path, env: dict[str, str], manifest: Path) -> tuple[bool, list[str]]:
    """Whether `claude plugin validate` finds an error in the manifest, and its messages."""
    done = subprocess.run(
        [str(claude), "plugin", "validate", "--json", str(manifest)],
        env=env,
        cwd=env["HOME"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    errors = [f"{e.get('path')}: {e.get('message')}" for e in report["manifest"]["errors"]]
    return bool(errors), errors


def plugman_verdict(manifest: Path) -> tuple[bool, list[str]]:
    """Whether `plugman validate` finds an error in the manifest (the component files it names
    are judged with their own files, as Claude's `contents`). A marketplace's verdict takes in
    the plugin.json of each plugin it lists, as Claude's does."""
    result = validate([manifest], source_keys=source_locations)
    own = {str(manifest.absolute())}
    errors = [
        f"{d.path}: {d.message}"
        for d in result.diagnostics
        if d.severity == "error"
        and (d.file in own or (manifest.name == "marketplace.json" and d.file.endswith(PLUGIN)))
    ]
    return bool(errors), errors


@pytest.mark.slow
def test_validate_agrees_with_claude_on_the_corpus(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    claude = agents.claude_bin()
    env = agents.agent_env(tmp_path, Path(sys.executable).parent)
    targets = claude_targets()
    assert len(targets) > 150, "the corpus is missing"
    with ThreadPoolExecutor(max_workers=2) as pool:
        verdicts = list(pool.map(lambda m: claude_verdict(claude, env, m), targets))
    disagree = []
    for manifest, (claude_error, claude_said) in zip(targets, verdicts, strict=True):
        plugman_error, plugman_said = plugman_verdict(manifest)
        if claude_error != plugman_error:
            disagree.append(f"{manifest}: claude {claude_said}, plugman {plugman_said}")
    errors = sum(error for error, _ in verdicts)
    record_property(
        "summary",
        f"corpus validate: {len(targets)} manifests, {errors} with errors for Claude Code, "
        f"{len(disagree)} verdicts differ",
    )
    assert disagree == []
