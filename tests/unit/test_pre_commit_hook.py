from __future__ import annotations

import re

import yaml

from tests.conftest import REPO


def test_pre_commit_hook_runs_validate_on_manifest_files() -> None:
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "plugman validate"
    files = re.compile(hook["files"])
    for path in (
        "p/.claude-plugin/plugin.json",
        ".claude-plugin/marketplace.json",
        "hooks/hooks.json",
        ".mcp.json",
        "skills/x/SKILL.md",
        "gemini-extension.json",
    ):
        assert files.search(path), path
    for path in ("package.json", "README.md", "tsconfig.json"):
        assert not files.search(path), path
