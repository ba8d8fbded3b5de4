"""Property: any interleaving of `agents add`, `install`, `uninstall` and `agents remove` at the
user and project scopes, for every agent with files (the agent table, not a hand list), with
the agent writing its own keys into its files in between, never fails a command and ends, once
everything is removed, with the agent's files byte for byte what they would be had plugman
never written to them (the agent's own writes applied to a shadow copy). A few examples per
agent run by default; the `slow` variant runs many more."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugman import extensions
from plugman.cli import invoke
from tests.integration.shared_files import (
    agent_files,
    agent_write,
    marketplace,
    shadow_of,
    tree,
)

SCOPES = ("user", "project")
AGENTS = sorted(
    name
    for name, spec in extensions.targets(entry_points=False).items()
    if any(s in spec.scopes_of() for s in SCOPES)
)
PLUGMANS = frozenset({"plugman.toml", "plugman.lock", ".plugman"})  # plugman's own, not the agent's

Step = tuple[str, str]
STEPS = st.lists(
    st.tuples(st.sampled_from(["link", "install", "uninstall", "unlink", "write"]),
              st.sampled_from(SCOPES)),
    min_size=1, max_size=10,
)  # fmt: skip


def cli(project: Path, *args: str) -> None:
    result = invoke(["--project", str(project), *args])
    assert result.exit_code == 0, (args, result.output, result.exception)


def play(agent: str, steps: list[Step], monkeypatch: pytest.MonkeyPatch) -> None:
    with tempfile.TemporaryDirectory() as tmp, monkeypatch.context() as env:
        base = Path(tmp)
        home, project, shadow = base / "home", base / "project", base / "shadow"
        for folder in (home, project, shadow / "home", shadow / "project"):
            folder.mkdir(parents=True)
        env.setenv("HOME", str(home))
        env.setenv("PLUGMAN_HOME", str(base / "plugman"))
        for name in ("XDG_CONFIG_HOME", "CODEX_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR"):
            env.delenv(name, raising=False)
        marketplace(base / "market")
        cli(project, "marketplace", "add", str(base / "market"))
        roots = {home: shadow / "home", project: shadow / "project"}
        files = agent_files(agent, home, project)
        scopes = [s for s in SCOPES if s in extensions.target(agent).scopes_of()]
        linked: set[str] = set()
        installed: set[str] = set()
        writes = 0
        for op, scope in steps:
            if scope not in scopes:
                scope = scopes[0]
            if op == "write":
                for path, fmt in files.items():
                    writes += 1
                    agent_write(path, fmt, writes, project)
                    agent_write(shadow_of(path, roots), fmt, writes, project)
            elif op == "link" and scope not in linked:
                cli(project, "agents", "add", agent, "--scope", scope)
                linked.add(scope)
            elif op == "unlink" and scope in linked:
                cli(project, "agents", "remove", agent, "--scope", scope)
                linked.discard(scope)
            elif op == "install" and scope not in installed:
                cli(project, "install", "first@hooked", "--scope", scope)
                installed.add(scope)
            elif op == "uninstall" and scope in installed:
                cli(project, "uninstall", "first@hooked", "--scope", scope)
                installed.discard(scope)
        for scope in sorted(installed):
            cli(project, "uninstall", "first@hooked", "--scope", scope)
        for scope in sorted(linked):
            cli(project, "agents", "remove", agent, "--scope", scope)
        assert tree(home) == tree(shadow / "home"), steps
        assert tree(project, PLUGMANS) == tree(shadow / "project"), steps


def _property(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        database=None,
    )


@pytest.mark.parametrize("agent", AGENTS)
@_property(4)
@given(steps=STEPS)
def test_any_interleaving_ends_where_it_started(
    agent: str, steps: list[Step], monkeypatch: pytest.MonkeyPatch
) -> None:
    play(agent, steps, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
@_property(40)
@given(steps=STEPS)
def test_any_interleaving_ends_where_it_started_many(
    agent: str, steps: list[Step], monkeypatch: pytest.MonkeyPatch
) -> None:
    play(agent, steps, monkeypatch)
