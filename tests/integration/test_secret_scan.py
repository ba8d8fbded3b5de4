"""The planted secrets really reach plugman (so the suite-wide scan in conftest means
something): shown with --show-secrets, masked everywhere else, and never in a log."""

from __future__ import annotations

from pathlib import Path

from plugman.cli import invoke
from tests.conftest import PLANTED


def test_planted_secrets_flow_in_and_are_masked(tmp_path: Path) -> None:
    argv = ["--project", str(tmp_path)]
    added = invoke(
        [*argv, "mcp", "add", "gh", "-s", "user", "-e", "GH_TOKEN=${GITHUB_TOKEN}", "--", "gh"]
    )
    assert added.exit_code == 0, added.output
    shown = invoke([*argv, "config", "resolve", "--json", "--show-secrets"])
    assert PLANTED["GITHUB_TOKEN"] in shown.output  # expanded from the planted environment
    for command in (["config", "resolve"], ["config", "resolve", "--json"], ["mcp", "list"]):
        masked = invoke([*argv, *command])
        assert masked.exit_code == 0 and PLANTED["GITHUB_TOKEN"] not in masked.output
