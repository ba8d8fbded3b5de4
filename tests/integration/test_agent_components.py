"""A plugin's skill, command and subagent, translated and put where `AgentSpec` says each agent
reads them, then asked of the real agents, offline, in a throwaway HOME:

- Gemini CLI: `gemini skills list`; the command and the subagent through a one-shot
  `gemini -p "/kit-review src/app.py"` whose model request goes to a loopback server that
  records it (the expanded prompt and the registered agents are in the request).
- Codex: `codex debug prompt-input` lists the skill, the command as a skill, and the agent role.
- Copilot CLI: `copilot skill list --json` lists the skill and the command as a skill.

Trust and acknowledgement are the user's to grant; these tests grant them in the throwaway
HOME, as a user would (plugman never does).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman import extensions
from plugman.agents.targets.components import Component
from plugman.agents.translate.commands import command
from plugman.agents.translate.common import Translated
from plugman.agents.translate.subagents import agent
from tests.integration.agents import (
    agent_env,
    codex_bin,
    copilot_bin,
    gemini_bin,
    trust_gemini_folder,
)

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
SKILL = "---\nname: kit-skill\ndescription: Kit skill for the components test\n---\nDo it.\n"
COMMAND = (
    '---\ndescription: Review the given file\nargument-hint: "[file]"\n---\n'
    "Review $ARGUMENTS carefully, says kit.\n"
)
AGENT = (
    "---\nname: kit-reviewer\ndescription: Reviews code for kit\ntools: Read, Grep\n"
    "model: sonnet\n---\nYou are the kit reviewer.\n"
)


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "kit"
    (root / "skills" / "kit-skill").mkdir(parents=True)
    (root / "skills" / "kit-skill" / "SKILL.md").write_text(SKILL)
    (root / "commands").mkdir()
    (root / "commands" / "kit-review.md").write_text(COMMAND)
    (root / "agents").mkdir()
    (root / "agents" / "kit-reviewer.md").write_text(AGENT)
    return root


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, project.resolve()


def deploy(name: str, plugin: Path, scope: str, home: Path, project: Path) -> dict[str, Path]:
    """Put the plugin's skill, command and subagent where agent `name`'s spec says."""
    spec = extensions.target(name)
    env = agent_env(home, BIN)
    written: dict[str, Path] = {}

    def folder(component: Component | None) -> Path:
        assert component is not None
        found = component.folder(scope, home, project, env)
        assert found is not None
        return found

    skills = folder(spec.skills)
    (skills / "kit-skill").mkdir(parents=True, exist_ok=True)
    (skills / "kit-skill" / "SKILL.md").write_text(SKILL)
    written["skill"] = skills / "kit-skill" / "SKILL.md"
    for kind, component, translate, path in (
        ("command", spec.commands, command, plugin / "commands" / "kit-review.md"),
        ("agent", spec.agents, agent, plugin / "agents" / "kit-reviewer.md"),
    ):
        assert component is not None
        result = translate(path, "kit", component.format)
        assert isinstance(result, Translated), result
        target = folder(component) / result.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(result.data)
        written[kind] = target
    return written


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=110, check=False,
    )  # fmt: skip
    return proc.stdout + proc.stderr


@pytest.fixture
def capture() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback model endpoint that records every request body and answers 400."""
    bodies: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"code": 400, "message": "captured"}}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("scope", ["user", "project"])
def test_gemini_reads_skill_command_and_agent(
    plugin: Path, where: tuple[Path, Path], capture: tuple[str, list[bytes]], scope: str
) -> None:
    home, project = where
    gemini = str(gemini_bin())
    written = deploy("gemini", plugin, scope, home, project)
    trust_gemini_folder(home, project)
    if scope == "project":  # project agents also need the user's acknowledgement of each file
        digest = hashlib.sha256(written["agent"].read_bytes()).hexdigest()
        acks = home / ".gemini" / "acknowledgments" / "agents.json"
        acks.parent.mkdir(parents=True)
        acks.write_text(json.dumps({str(project): {"kit-reviewer": digest}}))
    env = agent_env(home, BIN)

    listed = run([gemini, "skills", "list"], project, env)
    assert "kit-skill" in listed and str(written["skill"]) in listed, listed

    url, bodies = capture
    settings = home / ".gemini" / "settings.json"
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    env |= {"GEMINI_API_KEY": "fake", "GOOGLE_GEMINI_BASE_URL": url}
    out = run([gemini, "-p", "/kit-review src/app.py"], project, env)
    sent = b"\n".join(bodies).decode()
    assert "Review src/app.py carefully, says kit." in sent, out[-2000:]
    assert "kit-reviewer" in sent and "Reviews code for kit" in sent, out[-2000:]


def test_codex_reads_skill_command_and_agent(plugin: Path, where: tuple[Path, Path]) -> None:
    home, project = where
    codex = str(codex_bin())
    deploy("codex", plugin, "project", home, project)
    (home / ".codex").mkdir(exist_ok=True)  # project agents need the user's trust
    (home / ".codex" / "config.toml").write_text(
        f'[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    out = run([codex, "debug", "prompt-input", "hi"], project, agent_env(home, BIN))
    assert "- kit-skill: Kit skill for the components test" in out, out[-3000:]
    assert "- kit-review: Review the given file" in out, out[-3000:]
    assert "kit-reviewer: {\\nReviews code for kit" in out, out[-3000:]


def test_codex_user_scope(plugin: Path, where: tuple[Path, Path]) -> None:
    home, project = where
    deploy("codex", plugin, "user", home, project)
    out = run([str(codex_bin()), "debug", "prompt-input", "hi"], project, agent_env(home, BIN))
    assert "- kit-skill: Kit skill for the components test" in out, out[-3000:]
    assert "- kit-review: Review the given file" in out, out[-3000:]
    assert "kit-reviewer: {\\nReviews code for kit" in out, out[-3000:]


@pytest.mark.parametrize("scope", ["user", "project"])
def test_copilot_lists_skill_and_command(
    plugin: Path, where: tuple[Path, Path], scope: str
) -> None:
    home, project = where
    deploy("copilot-cli", plugin, scope, home, project)
    env = agent_env(home, BIN) | {"COPILOT_OFFLINE": "true"}
    out = run([str(copilot_bin()), "skill", "list", "--json"], project, env)
    start = out.find("[") if out.find("[") >= 0 else out.find("{")
    assert start >= 0, out[-2000:]
    names = json.dumps(json.loads(out[start:]))
    assert "kit-skill" in names and "kit-review" in names, out[-2000:]


@pytest.mark.parametrize("scope", ["user", "project"])
def test_copilot_reads_agent(
    plugin: Path, where: tuple[Path, Path], capture: tuple[str, list[bytes]], scope: str
) -> None:
    """The `.agent.md` (Claude tool names kept) is offered to the model as a custom agent."""
    home, project = where
    deploy("copilot-cli", plugin, scope, home, project)
    (home / ".copilot").mkdir(exist_ok=True)  # the user's trust in the folder
    (home / ".copilot" / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))
    url, bodies = capture
    env = agent_env(home, BIN) | {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
        "COPILOT_PROVIDER_API_KEY": "x",
        "COPILOT_MODEL": "gpt-4o",
    }
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):  # no account: the model is the loopback
        env.pop(name, None)
    out = run([str(copilot_bin()), "-p", "hi", "--allow-all-tools"], project, env)
    sent = b"\n".join(bodies).decode()
    assert "**kit-reviewer**: Reviews code for kit" in sent, out[-2000:]
