"""Fixtures shared by the integration tests that write agents' files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.extension import example_extension, example_site

__all__ = ["example_extension", "example_site"]  # fixtures for every integration test


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME for the agents' user files, with no variable moving any of them elsewhere."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("XDG_CONFIG_HOME", "CODEX_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return folder
