"""The pytest plugin (entry point `pytest11`, name `plugman`): the fixtures of the test kit.
Imported by every pytest run where plugman is installed, so it imports only what the
fixtures' types name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman.testing.env import PlugmanEnv, isolated
from plugman.testing.installed import Extensions
from plugman.testing.runner import Runner


@pytest.fixture
def plugman_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PlugmanEnv]:
    """An isolated machine for this test (plugman.testing.env)."""
    with isolated(tmp_path / "plugman-env", monkeypatch) as env:
        yield env


@pytest.fixture
def plugman_extension(
    plugman_env: PlugmanEnv, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Extensions]:
    """Extensions installed for this test only (plugman.testing.installed)."""
    installed = Extensions(plugman_env, monkeypatch)
    try:
        yield installed
    finally:
        installed.close()


@pytest.fixture
def plugman_cli(plugman_env: PlugmanEnv) -> Runner:
    """`plugman ARGS` in this test's environment (plugman.testing.runner)."""
    return Runner(plugman_env)
