"""Environment references in committed (project-scope) agent files stay references (issue 34,
point 8): two teammates whose environments differ deploy the same bytes, each agent's file in
its own syntax (Gemini CLI expands `${VAR:-default}` itself; Cursor has no default syntax, so
`${env:VAR}`), and the real Gemini CLI still reads the server, its default applied."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.agents import agent_env, gemini_mcp_list, trust_gemini_folder

SERVERS = {
    "mcpServers": {
        "api": {
            "type": "http",
            "url": "http://${API_HOST:-127.0.0.1:9}/mcp",
            "headers": {"X-Team": "${TEAM:-}"},
        }
    }
}
FILES = (".gemini/settings.json", ".cursor/mcp.json")
TEAMMATE = {"API_HOST": "api.example.com", "TEAM": "blue"}  # set for the second deploy only


def deploy(root: Path, extra: dict[str, str]) -> Path:
    """A project with a `.mcp.json` server, its entries approved and Gemini and Cursor linked
    at project scope, by `python -m plugman` in an environment with `extra` added."""
    project = root / "project"
    project.mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps(SERVERS))
    env = {k: v for k, v in os.environ.items() if k not in TEAMMATE}
    env |= {"HOME": str(root / "home"), "PLUGMAN_HOME": str(root / "home" / "plugman"), **extra}
    for args in (
        ["trust", "approve", "--all"],
        ["agents", "add", "gemini", "cursor", "-s", "project"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(project), *args],
            env=env, capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, (args, done.stderr)
    return project


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("env-refs")
    return deploy(root / "me", {}), deploy(root / "teammate", TEAMMATE)


def test_two_environments_write_the_same_project_files(projects: tuple[Path, Path]) -> None:
    mine, theirs = projects
    for name in FILES:
        assert (mine / name).read_bytes() == (theirs / name).read_bytes(), name
    gemini = json.loads((mine / ".gemini/settings.json").read_text())["mcpServers"]["api"]
    assert gemini["httpUrl"] == "http://${API_HOST:-127.0.0.1:9}/mcp"
    assert gemini["headers"] == {"X-Team": "${TEAM:-}"}
    cursor = json.loads((mine / ".cursor/mcp.json").read_text())["mcpServers"]["api"]
    assert cursor["url"] == "http://${env:API_HOST}/mcp"
    assert cursor["headers"] == {"X-Team": "${env:TEAM}"}


@pytest.mark.slow
def test_the_real_gemini_reads_the_server_with_its_default(
    projects: tuple[Path, Path], tmp_path: Path
) -> None:
    """`gemini mcp list` in the committed project: the server is there, its URL expanded by
    Gemini itself to the default (nothing listens on 127.0.0.1:9: disconnected, but listed)."""
    mine, _ = projects
    home = tmp_path / "gemini-home"
    home.mkdir()
    trust_gemini_folder(home, mine)
    env = {k: v for k, v in agent_env(home, Path(sys.executable).parent).items() if k != "API_HOST"}
    listed = gemini_mcp_list(home, mine, env)
    assert "api: http://127.0.0.1:9/mcp (http)" in listed, listed
