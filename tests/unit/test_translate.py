"""The translators (commands, subagents, skill folders) and the component places of the agents
in `table`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from plugman import extensions
from plugman.agents.skill_names import Deployed, deployed, namespaced, renamed
from plugman.agents.targets.components import Presence, home, missing, present, shared
from plugman.agents.translate.commands import FORMATS as COMMAND_FORMATS
from plugman.agents.translate.commands import command
from plugman.agents.translate.common import Refused, Translated, body, toml_string, yaml_string
from plugman.agents.translate.subagents import FORMATS as AGENT_FORMATS
from plugman.agents.translate.subagents import agent
from plugman.manifest.model import Skill

SPECS = tuple(extensions.targets(entry_points=False).values())  # the built-in agents

CMD = (
    b'---\ndescription: Review a file\nargument-hint: "[file]"\nallowed-tools: Bash(git:*)\n'
    b"model: sonnet\n---\nReview $ARGUMENTS ($1). Status: !`git status`\n"
)
AGENT = (
    b"---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, WebSearch, mcp__x__y\n"
    b"model: sonnet\ncolor: red\n---\nYou review ${CLAUDE_PLUGIN_ROOT}/code.\n"
)
P = Path("/plugins/kit/commands/review.md")
A = Path("/plugins/kit/agents/reviewer.md")


def front(data: bytes) -> tuple[dict[str, object], str]:
    text = data.decode()
    assert text.startswith("---\n")
    block, rest = text[4:].split("\n---\n", 1)
    return yaml.safe_load(block), rest


def ok(result: Translated | Refused) -> Translated:
    assert isinstance(result, Translated), result
    return result


def test_gemini_toml() -> None:
    out = ok(command(P, "kit", "gemini-toml", data=CMD))
    assert out.name == "review.toml"
    assert tomllib.loads(out.data.decode()) == {
        "description": "Review a file",
        "prompt": "Review {{args}} ($1). Status: !{git status}\n",
    }
    notes = "\n".join(out.notes)
    for word in ("argument-hint", "allowed-tools", "model", "$1", "!{cmd}"):
        assert word in notes


@pytest.mark.parametrize("text", [b"Run !{rm -rf x}\n", b"Read @{secret}\n", b"!`a {b}`\n"])
def test_gemini_refuses_what_it_would_run(text: bytes) -> None:
    assert isinstance(command(P, "kit", "gemini-toml", data=text), Refused)


def test_gemini_toml_keeps_awkward_text() -> None:
    text = "a '''quoted''' \x7f\r\nline\u2028end'"
    out = ok(command(P, "kit", "gemini-toml", data=text.encode()))
    assert tomllib.loads(out.data.decode())["prompt"] == text
    for value in ("x", "", "a\nb'", "a\n'''", "\ttab\n", "😀\n"):
        assert tomllib.loads(f"k = {toml_string(value)}")["k"] == value


def test_command_as_skill() -> None:
    out = ok(command(Path("Review_It.md"), "kit", "as-skill", data=CMD))
    assert out.name == "review-it/SKILL.md"
    meta, rest = front(out.data)
    assert meta == {"name": "review-it", "description": "Review a file"}
    assert rest.startswith("Review $ARGUMENTS")
    assert any("named `review-it`" in note for note in out.notes)
    assert any("$ARGUMENTS" in note for note in out.notes)


def test_command_as_skill_description_from_body() -> None:
    out = ok(command(P, "kit", "as-skill", data=b"# Review the code\n\nDo it\n"))
    assert front(out.data)[0]["description"] == "Review the code"
    assert isinstance(command(P, "kit", "as-skill", data=b"\n\n"), Refused)
    assert isinstance(command(Path("___.md"), "kit", "as-skill", data=CMD), Refused)


def test_plain_markdown_commands() -> None:
    out = ok(command(P, "kit", "markdown", data=CMD))
    assert out.data == b"Review $ARGUMENTS ($1). Status: !`git status`\n"
    assert len(out.notes) == 7  # four fields, $ARGUMENTS, $1, the shell line
    oc = ok(command(P, "kit", "opencode-md", data=CMD))
    assert front(oc.data) == (
        {"description": "Review a file"},
        "Review $ARGUMENTS ($1). Status: !`git status`\n",
    )
    vs = ok(command(P, "kit", "vscode-prompt-md", data=CMD))
    assert vs.name == "review.prompt.md"
    assert front(vs.data) == (
        {"description": "Review a file", "argument-hint": "[file]"},
        "Review ${input:args} ($1). Status: !`git status`\n",
    )
    co = ok(command(P, "kit", "continue-md", data=CMD))
    assert front(co.data)[0] == {
        "name": "review",
        "description": "Review a file",
        "invokable": True,
    }
    assert "{{{ input }}}" in co.data.decode()
    assert ok(command(P, "kit", "claude-md", data=CMD)).data == CMD


def test_command_plugin_root_and_refusals() -> None:
    text = b"Run ${CLAUDE_PLUGIN_ROOT}/x.sh\n"
    out = ok(command(P, "kit", "opencode-md", data=text, root="/store/kit"))
    assert out.data == b"Run /store/kit/x.sh\n" and out.notes == ()
    kept = ok(command(P, "kit", "opencode-md", data=text))
    assert any("CLAUDE_PLUGIN_ROOT" in note for note in kept.notes)
    assert isinstance(command(P, "kit", "nope", data=CMD), Refused)
    assert isinstance(command(P, "kit", "gemini-toml", data=b"\xff"), Refused)
    assert isinstance(command(P, "kit", "gemini-toml", data=b"---\na: [\n---\nx"), Refused)
    assert isinstance(command(Path("..md"), "kit", "markdown", data=CMD), Refused)


def test_codex_agent_toml() -> None:
    out = ok(agent(A, "kit", "codex-toml", data=AGENT, root="/r"))
    assert out.name == "reviewer.toml"
    assert tomllib.loads(out.data.decode()) == {
        "name": "reviewer",
        "description": "Reviews code",
        "developer_instructions": "You review /r/code.\n",
        "sandbox_mode": "read-only",
    }
    assert any("color" in note for note in out.notes) and any("model" in n for n in out.notes)
    writer = AGENT.replace(b"tools: Read", b"tools: Bash, Read")
    out = ok(agent(A, "kit", "codex-toml", data=writer))
    assert "sandbox_mode" not in tomllib.loads(out.data.decode())
    assert any("per-agent tool list" in note for note in out.notes)
    assert isinstance(
        agent(A, "kit", "codex-toml", data=b"---\nname: a\ndescription: d\n---\n"), Refused
    )


def test_markdown_agents() -> None:
    cp = ok(agent(A, "kit", "copilot-agent-md", data=AGENT))
    assert cp.name == "reviewer.agent.md"
    assert front(cp.data)[0]["tools"] == ["Read", "Grep", "WebSearch", "mcp__x__y"]
    gm = ok(
        agent(A, "kit", "gemini-md", data=AGENT.replace(b"name: reviewer", b"name: Code.Reviewer"))
    )
    meta, rest = front(gm.data)
    assert gm.name == "code-reviewer.md" and rest == "You review ${CLAUDE_PLUGIN_ROOT}/code.\n"
    assert meta == {
        "name": "code-reviewer",
        "description": "Reviews code",
        "kind": "local",
        "tools": ["read_file", "grep_search", "google_web_search"],
    }
    assert any("mcp__x__y" in note for note in gm.notes)
    oc = ok(agent(A, "kit", "opencode-md", data=AGENT))
    tools = front(oc.data)[0]["tools"]
    assert isinstance(tools, dict) and tools["bash"] is False and "read" not in tools
    cu = ok(agent(A, "kit", "cursor-agent-md", data=AGENT))
    assert front(cu.data)[0] == {
        "name": "reviewer",
        "description": "Reviews code",
        "readonly": True,
    }
    ki = ok(agent(A, "kit", "kiro-json", data=AGENT))
    assert json.loads(ki.data)["tools"] == ["fs_read"]
    assert ok(agent(A, "kit", "claude-md", data=AGENT)).data == AGENT


@pytest.mark.parametrize("fmt", [f for f in AGENT_FORMATS if f != "claude-md"])
def test_agent_refusals(fmt: str) -> None:
    assert isinstance(agent(A, "kit", fmt, data=b"---\nname: x\n---\nhi\n"), Refused)
    bad = b"---\nname: ../x\ndescription: d\n---\nhi\n"
    assert isinstance(agent(A, "kit", fmt, data=bad), Refused)


@pytest.mark.parametrize("fmt", COMMAND_FORMATS)
def test_every_command_form_reads_back(fmt: str) -> None:
    out = ok(command(P, "kit", fmt, data=CMD))
    if out.name.endswith(".toml"):
        tomllib.loads(out.data.decode())
    elif out.data.startswith(b"---\n"):
        front(out.data)


def test_yaml_strings_read_back() -> None:
    for value in ("a: b", "#x", "yes", "1.5", "'q'", 'dq"', "tab\tnl\n", "\x85\u2028", "😀"):
        assert yaml.safe_load(f"k: {yaml_string(value)}")["k"] == value


def test_body() -> None:
    assert body("---\na: b\n---\nhello\n") == "hello\n"
    assert body("no front\n") == "no front\n"
    assert body("---\na: b\n---") == ""


def test_namespaced() -> None:
    assert namespaced("My.Plugin", "Do_It") == "my-plugin-do-it"
    long = namespaced("p" * 40, "s" * 40)
    assert len(long) == 64 and long != namespaced("p" * 40, "s" * 41)
    assert namespaced("---", "skill") == "skill"


def test_deployed_skill(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\r\nname: review\r\ndescription: d\r\n---\r\nbody\r\n")
    skill = Skill("review", path, "d", {"name": "review", "description": "d"})
    assert deployed("kit", skill) == Deployed("review", None)
    out = deployed("kit", skill, namespace=True)
    assert out == Deployed(
        "kit-review", b"---\r\nname: kit-review\r\ndescription: d\r\n---\r\nbody\r\n"
    )


def test_renamed_keeps_every_other_byte() -> None:
    assert renamed(b"---\ndescription: d\n---\nx", "a") == b"---\nname: a\ndescription: d\n---\nx"
    assert renamed(b"plain", "a") == b"---\nname: a\n---\nplain"
    folded = b"\xef\xbb\xbf---\nname: >\n  long\n  name\nx: 1\n---\n\xff"
    assert renamed(folded, "123") == b'\xef\xbb\xbf---\nname: "123"\nx: 1\n---\n\xff'


def test_every_agent_has_its_places() -> None:
    by_name = {spec.name: spec for spec in SPECS}
    assert len(by_name) == len(SPECS), "two agents share a name"
    assert set(by_name) == set(extensions.targets(entry_points=False))
    for spec in SPECS:
        assert spec.presence is not None, spec.name
        for component in (spec.skills, spec.commands, spec.agents):
            if component is not None and component.format not in ("native", "folder"):
                assert component.format in COMMAND_FORMATS + AGENT_FORMATS + ("as-skill",)
    assert by_name["claude-code"].skills is not None
    assert by_name["claude-code"].skills.format == "native"
    assert missing(by_name["goose"].commands, "commands", "Goose", "user") is not None
    assert missing(by_name["claude-code"].agents, "agents", "Claude Code", "project") is None


def test_shared_folders_are_written_once(tmp_path: Path) -> None:
    env = {"CODEX_HOME": str(tmp_path / "codex"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    skills = [(spec.name, spec.skills) for spec in SPECS]
    user = shared(skills, "user", tmp_path, tmp_path / "p", env)
    readers = {reader.agent for reader in user[tmp_path / ".agents" / "skills"]}
    assert {"codex", "copilot-cli", "cursor", "opencode", "goose", "zed"} <= readers
    assert "gemini" not in readers  # GEMINI_CLI_HOME moves its ~/.agents
    assert [r.agent for r in user[tmp_path / "g" / ".agents" / "skills"]] == ["gemini"]
    project = shared(skills, "project", tmp_path, tmp_path / "p", env)
    assert "gemini" in {r.agent for r in project[tmp_path / "p" / ".agents" / "skills"]}
    agents = shared([(s.name, s.agents) for s in SPECS], "project", tmp_path, tmp_path / "p", {})
    assert {r.agent for r in agents[tmp_path / "p" / ".github" / "agents"]} == {
        "vscode",
        "copilot-cli",
    }


def test_present(tmp_path: Path) -> None:
    presence = Presence(binaries=("tool",), dirs=(home(".tool"),))
    assert present(presence, tmp_path, {}, lambda name, path: None) == []
    (tmp_path / ".tool").mkdir()
    found = present(presence, tmp_path, {}, lambda name, path: f"/bin/{name}")
    assert found == ["tool on PATH: /bin/tool", f"{tmp_path / '.tool'} exists"]
    assert present(None, tmp_path, {}) == []
