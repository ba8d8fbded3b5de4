"""Where each built-in agent reads a plugin's skills, commands and subagents, in which form,
and how to tell it is installed: one `Places` per agent, applied to its `AgentSpec` in `table`
(why: docs/claude-format.md#component-locations; checked against the real agents in
tests/integration/test_agent_components.py)."""

from __future__ import annotations

from typing import NamedTuple

from plugman.agents.targets.components import (
    AGENTS_SKILLS,
    NATIVE,
    Component,
    Presence,
    config_home,
    env_dir,
    home,
)


class Places(NamedTuple):
    presence: Presence
    skills: Component | None = None
    commands: Component | None = None
    agents: Component | None = None


# Where each agent reads a plugin's skills, commands and subagents, and in which form
# (docs/claude-format.md#component-locations). Kept apart from the MCP entries above so
# each can change alone. Skills go to the shared `.agents/skills` wherever the agent reads it
# (written once for all its readers: `components.shared`); a command for Codex or Copilot CLI
# becomes a skill in the agent's own skills folder, so the agents sharing `.agents/skills` do
# not see it twice. Claude Code loads the plugin whole (`NATIVE`).
_CODEX = ("CODEX_HOME", ".codex")
_COPILOT = ("COPILOT_HOME", ".copilot")
_GEMINI = ("GEMINI_CLI_HOME", "")  # GEMINI_CLI_HOME replaces the home, `~/.agents` included
PLACES: dict[str, Places] = {
    "claude-code": Places(
        skills=NATIVE,
        commands=NATIVE,
        agents=NATIVE,
        presence=Presence(binaries=("claude",), dirs=(env_dir("CLAUDE_CONFIG_DIR", ".claude"),)),
    ),
    "cursor": Places(
        skills=AGENTS_SKILLS,
        commands=Component(
            format="cursor-md", user=home(".cursor", "commands"), project=".cursor/commands"
        ),
        agents=Component(
            format="cursor-agent-md", user=home(".cursor", "agents"), project=".cursor/agents"
        ),
        presence=Presence(binaries=("cursor", "cursor-agent"), dirs=(home(".cursor"),)),
    ),
    "vscode": Places(
        skills=AGENTS_SKILLS,
        commands=Component(
            format="vscode-prompt-md",
            user=config_home("Code", "User", "prompts"),
            project=".github/prompts",
        ),
        agents=Component(
            format="copilot-agent-md", user=home(".copilot", "agents"), project=".github/agents"
        ),
        presence=Presence(binaries=("code",), dirs=(config_home("Code"),)),
    ),
    "codex": Places(
        skills=AGENTS_SKILLS,
        commands=Component(
            format="as-skill", user=env_dir(*_CODEX, "skills"), project=".codex/skills"
        ),
        agents=Component(
            format="codex-toml", user=env_dir(*_CODEX, "agents"), project=".codex/agents"
        ),
        presence=Presence(binaries=("codex",), dirs=(env_dir(*_CODEX),)),
    ),
    "gemini": Places(
        skills=Component(
            format="folder", user=env_dir(*_GEMINI, ".agents", "skills"), project=".agents/skills"
        ),
        commands=Component(
            format="gemini-toml",
            user=env_dir(*_GEMINI, ".gemini", "commands"),
            project=".gemini/commands",
        ),
        agents=Component(
            format="gemini-md",
            user=env_dir(*_GEMINI, ".gemini", "agents"),
            project=".gemini/agents",
        ),
        presence=Presence(binaries=("gemini",), dirs=(env_dir(*_GEMINI, ".gemini"),)),
    ),
    # Skills are Zed's slash commands; it has no command or subagent files.
    "zed": Places(
        skills=AGENTS_SKILLS,
        presence=Presence(binaries=("zed", "zeditor"), dirs=(config_home("zed"),)),
    ),
    # Its own skills folders (`.agents/skills` only per second-hand sources); workflows as
    # commands; no subagents.
    "windsurf": Places(
        skills=Component(
            format="folder", user=home(".codeium", "windsurf", "skills"), project=".windsurf/skills"
        ),
        commands=Component(
            format="cursor-md",
            user=home(".codeium", "windsurf", "global_workflows"),
            project=".windsurf/workflows",
        ),
        presence=Presence(binaries=("windsurf",), dirs=(home(".codeium", "windsurf"),)),
    ),
    "opencode": Places(
        skills=AGENTS_SKILLS,
        commands=Component(
            format="opencode-md",
            user=config_home("opencode", "commands"),
            project=".opencode/commands",
        ),
        agents=Component(
            format="opencode-md", user=config_home("opencode", "agents"), project=".opencode/agents"
        ),
        presence=Presence(binaries=("opencode",), dirs=(config_home("opencode"),)),
    ),
    # Commands and subagents are YAML recipes in Goose: not written.
    "goose": Places(
        skills=AGENTS_SKILLS,
        presence=Presence(binaries=("goose",), dirs=(config_home("goose"),)),
    ),
    # No SKILL.md folder and no subagent files; prompt files are its commands.
    "continue": Places(
        commands=Component(
            format="continue-md", user=home(".continue", "prompts"), project=".continue/prompts"
        ),
        presence=Presence(binaries=("cn",), dirs=(home(".continue"),)),
    ),
    "copilot-cli": Places(
        skills=AGENTS_SKILLS,
        commands=Component(
            format="as-skill", user=env_dir(*_COPILOT, "skills"), project=".github/skills"
        ),
        agents=Component(
            format="copilot-agent-md", user=env_dir(*_COPILOT, "agents"), project=".github/agents"
        ),
        presence=Presence(binaries=("copilot",), dirs=(env_dir(*_COPILOT),)),
    ),
    "kiro": Places(
        skills=Component(format="folder", user=home(".kiro", "skills"), project=".kiro/skills"),
        commands=Component(
            format="cursor-md", user=home(".kiro", "prompts"), project=".kiro/prompts"
        ),
        agents=Component(format="kiro-json", user=home(".kiro", "agents"), project=".kiro/agents"),
        presence=Presence(binaries=("kiro", "kiro-cli"), dirs=(home(".kiro"),)),
    ),
}
