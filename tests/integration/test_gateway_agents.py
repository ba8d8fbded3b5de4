"""Real agents linked `--via-gateway` see every tool at start (issue 24), named as they should.

The gateway serves the notes server and a server that sleeps before it serves
(tests/integration/test_gateway_first_list.slow_server); each agent is linked with
`plugman agents add <agent> --via-gateway` (user scope: one `plugman` server entry) and asked
what it has, in its own words:

- Claude Code 2.1.332: the `init` event of an offline print-mode session
  (tests/integration/agents.claude_session_events) lists its tools, `mcp__plugman__<name>`.
  By default its print mode waits only about 2 s for MCP servers (any server slower than that,
  the gateway or a slow server configured directly, is `pending` in `init` and its tools are
  not in the first model request); linking it through the gateway sets its own
  `CLAUDE_CODE_MCP_STARTUP_WAIT_MS` (read from its binary) in the settings file of the scope,
  so it waits for the gateway's first list: the test sets nothing of Claude's itself.
- Codex 0.171: a real `codex exec` turn against a fake Responses endpoint
  (tests/integration/fake_responses), which records the tools Codex offers the model: the
  gateway's are a `mcp__plugman` namespace of `<name>` functions. Codex never lists again on
  `list_changed`, so what it offers the model is what the first list held.

Each is checked in the first session ever (the list waits for the slow server, within the
first-list budget) and in a later one whose slow server would take far longer than the agent
waits: its tools then come from the gateway's memory of the first session.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.agents import agent_env, claude_session_events, codex_bin
from tests.integration.helpers import run
from tests.integration.test_gateway import NOTES_TOOLS
from tests.integration.test_gateway_first_list import configure, slow_server

BIN = Path(sys.executable).parent
SLOW = {"alpha", "beta"}
NAMES = {f"notes__{t}" for t in NOTES_TOOLS} | {f"slow__{t}" for t in SLOW}
LATER_DELAY = 40.0  # far beyond what either agent waits for a server


def linked(agent: str, delay: float, tmp_path: Path, isolated_home: Path) -> tuple[Path, Path]:
    """A project whose user scope has the notes server and one that takes `delay` s to serve,
    with `agent` linked through the gateway: (the project, the slow server's folder)."""
    project = tmp_path / "project"
    project.mkdir()
    folder = tmp_path / "slow"
    configure(isolated_home, slow_server(folder, delay, sorted(SLOW)))
    run("agents", "add", agent, "--via-gateway", project=project)
    return project, folder


def claude_tools(project: Path, env: dict[str, str]) -> set[str]:
    events = claude_session_events(project, env)
    init = next(e for e in events if e.get("subtype") == "init")
    servers = {s["name"]: s["status"] for s in init.get("mcp_servers", [])}
    assert servers.get("plugman") == "connected", servers
    return {t for t in init["tools"] if t.startswith("mcp__")}


@pytest.mark.slow
def test_claude_sees_every_tool_in_its_first_session_and_later_ones(
    tmp_path: Path, home: Path, isolated_home: Path
) -> None:
    project, folder = linked("claude-code", 3, tmp_path, isolated_home)
    env = agent_env(home, BIN)
    assert "CLAUDE_CODE_MCP_STARTUP_WAIT_MS" not in env
    wanted = {f"mcp__plugman__{name}" for name in NAMES}

    # The first session ever: nothing remembered; the first list waits (8 s here, for a loaded
    # test machine, still within the 10 s the link asks Claude to wait; the default is 5 s).
    first = claude_tools(project, {**env, "PLUGMAN_GATEWAY_FIRST_LIST_WAIT": "8"})
    assert first == wanted
    assert not any(name.count("mcp__") > 1 for name in first), first

    # A later session: the slow server would take LATER_DELAY s (longer than Claude waits) and
    # the gateway never waits: its tools come from the gateway's memory.
    slow_server(folder, LATER_DELAY, sorted(SLOW))
    later = claude_tools(project, {**env, "PLUGMAN_GATEWAY_FIRST_LIST_WAIT": "0"})
    assert later == wanted
    assert not (folder / "slow.up").exists()


def codex_offers(project: Path, env: dict[str, str]) -> dict[str, set[str]]:
    """One real `codex exec` turn: the tools Codex offered the model in its first request, by
    namespace ("" for those outside one)."""
    from tests.integration.fake_responses import codex_exec_args, responses_server

    heard: list[dict[str, Any]] = []
    with responses_server("echo hi", heard) as url:
        done = subprocess.run(
            [str(codex_bin()), *codex_exec_args(url), "run it"],
            cwd=project,
            env={**env, "FAKE_OPENAI_KEY": "sk-fake"},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert heard, "codex sent the model nothing"
    offered: dict[str, set[str]] = {"": set()}
    for tool in heard[0].get("tools", []):
        if tool.get("type") == "namespace":
            offered[tool["name"]] = {inner["name"] for inner in tool.get("tools", [])}
        elif "name" in tool:
            offered[""].add(tool["name"])
    return offered


@pytest.mark.slow
def test_codex_offers_the_model_every_tool_in_its_first_session_and_later_ones(
    tmp_path: Path, home: Path, isolated_home: Path
) -> None:
    project, folder = linked("codex", 2, tmp_path, isolated_home)
    env = agent_env(home, BIN)  # Codex passes the gateway only some variables: not this one
    env.pop("PLUGMAN_GATEWAY_FIRST_LIST_WAIT", None)

    # The first session ever, with the default budget (5 s): Codex waits for the gateway, a
    # `required` server in its config.
    config = (home / ".codex" / "config.toml").read_text()
    assert "required = true" in config, config
    first = codex_offers(project, env)
    assert first.get("mcp__plugman") == NAMES, first

    slow_server(folder, LATER_DELAY, sorted(SLOW))
    later = codex_offers(project, env)
    assert later.get("mcp__plugman") == NAMES, later
    assert not (folder / "slow.up").exists()
