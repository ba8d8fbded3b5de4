"""The built-in agents, one `AgentSpec` record each: where it reads its MCP servers and how it
spells them, how it takes hooks, where it reads a plugin's skills, commands and subagents and in
which form, and how to tell it is installed (tests/golden/targets/ holds one rendering of each).
What no field can say is a function in `quirks`.

Component places (why each: docs/claude-format.md#component-locations; checked against the real
agents in tests/integration/test_agent_components.py): skills go to the shared `.agents/skills`
wherever the agent reads it (written once for all its readers: `components.shared`); a command
for Codex or Copilot CLI becomes a skill in the agent's own skills folder, so the agents sharing
`.agents/skills` do not see it twice. Claude Code loads the plugin whole (`NATIVE`).
"""

from __future__ import annotations

from plugman.agents.targets import asks, codex, hooks_tables, quirks
from plugman.agents.targets.components import (
    AGENTS_SKILLS,
    NATIVE,
    Component,
    Presence,
    config_home,
    env_dir,
    home,
)
from plugman.agents.targets.places import in_config_home, in_env_dir, in_home, with_hooks
from plugman.agents.targets.refs import AS_GIVEN, VALUES, Refs
from plugman.agents.targets.spec import NO_SSE, WITH_SSE, AgentSpec, Mcp, SecretRefs
from plugman.core.state import SCOPES
from plugman.runtime.launch.agent_facts import EVERY, FolderTrust

ENV_SYNTAX = Refs(spelling="${env:VAR}")
_CODEX = ("CODEX_HOME", ".codex")
_COPILOT = ("COPILOT_HOME", ".copilot")
_GEMINI = ("GEMINI_CLI_HOME", "")  # GEMINI_CLI_HOME replaces the home, `~/.agents` included

SPECS: tuple[AgentSpec, ...] = (
    # Every field, `type` always set; Claude expands `${VAR}` and `${VAR:-d}` itself. Hooks go in
    # the scope's settings file; local scope is a prefix of `~/.claude.json`.
    AgentSpec(
        name="claude-code",
        label="Claude Code",
        ask=asks.CLAUDE,
        notice="claude",  # Claude Code 2.1.328 reads its own SessionStart JSON
        folder_trust=FolderTrust(
            reader="claude",
            held={"project": EVERY, "local": EVERY},
            step="run claude in {folder} and accept its trust dialog",
        ),
        user=None,
        project=None,
        files=quirks.claude_files,
        scopes=SCOPES,
        hooks=hooks_tables.CLAUDE,
        mcp=Mcp(
            transports=None,
            stdio=None,
            remote=None,
            typed=True,
            refs=AS_GIVEN,
            startup_wait=("settings", "CLAUDE_CODE_MCP_STARTUP_WAIT_MS"),
        ),
        skills=NATIVE,
        commands=NATIVE,
        agents=NATIVE,
        presence=Presence(binaries=("claude",), dirs=(env_dir("CLAUDE_CONFIG_DIR", ".claude"),)),
    ),
    # Remote is `url` + `headers` with no `type`.
    AgentSpec(
        name="cursor",
        label="Cursor",
        notice="additional_context",  # its SessionStart output key (docs)
        user=in_home(".cursor", "mcp.json"),
        project=".cursor/mcp.json",
        files=with_hooks(
            in_home(".cursor", "mcp.json"),
            ".cursor/mcp.json",
            in_home(".cursor", "hooks.json"),
            ".cursor/hooks.json",
        ),
        hooks=hooks_tables.CURSOR,
        mcp=Mcp(transports=WITH_SSE, refs=ENV_SYNTAX),
        skills=AGENTS_SKILLS,
        commands=Component(
            format="markdown", user=home(".cursor", "commands"), project=".cursor/commands"
        ),
        agents=Component(
            format="cursor-agent-md", user=home(".cursor", "agents"), project=".cursor/agents"
        ),
        presence=Presence(binaries=("cursor", "cursor-agent"), dirs=(home(".cursor"),)),
    ),
    # `servers`, plus the `inputs` that secrets become (`${input:var}`, a password prompt).
    AgentSpec(
        name="vscode",
        label="VS Code",
        user=in_config_home("Code", "User", "mcp.json"),
        project=".vscode/mcp.json",
        mcp=Mcp(
            key=("servers",),
            transports=WITH_SSE,
            stdio=("command", "args", "env", "envFile"),
            typed=True,
            refs=ENV_SYNTAX,
            secret_refs=SecretRefs(("inputs",), quirks.password_inputs),
        ),
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
    # TOML `[mcp_servers.<name>]`; no `${}`: secrets by variable name, the rest as values.
    AgentSpec(
        name="codex",
        label="Codex",
        ask=asks.CODEX,
        ask_hooks=asks.CODEX_HOOKS,
        notice="claude",  # its `SessionStartCommandOutputWire` (0.169): Claude's JSON
        folder_trust=FolderTrust(
            reader="codex",  # an untrusted project's skills load; its servers, hooks, agents not
            held={"project": frozenset({"mcp", "hooks", "agents"})},
            step="run codex in {folder} and trust the folder when it asks",
        ),
        fmt="toml",
        user=in_env_dir("CODEX_HOME", ".codex", "config.toml"),
        project=".codex/config.toml",
        files=codex.files,
        hooks=hooks_tables.CODEX,
        mcp=Mcp(
            key=("mcp_servers",),
            transports=NO_SSE,
            stdio=("command", "args", "env", "cwd"),
            renames={"headers": "http_headers"},
            names="^[a-zA-Z0-9_-]+$",
            refs=VALUES,
            drop_empty=True,
            by_name=quirks.codex_by_name,
        ),
        skills=AGENTS_SKILLS,
        commands=Component(
            format="as-skill", user=env_dir(*_CODEX, "skills"), project=".codex/skills"
        ),
        agents=Component(
            format="codex-toml", user=env_dir(*_CODEX, "agents"), project=".codex/agents"
        ),
        presence=Presence(binaries=("codex",), dirs=(env_dir(*_CODEX),)),
    ),
    # http → `httpUrl`, sse → `url`; `${VAR}` and `${VAR:-default}` (Gemini CLI 0.61's
    # resolveEnvVarsInString, over its whole settings file).
    AgentSpec(
        name="gemini",
        label="Gemini CLI",
        ask=asks.GEMINI,
        ask_skills=asks.GEMINI_SKILLS,
        notice="claude",  # Gemini CLI 0.61 reads Claude's SessionStart JSON
        folder_trust=FolderTrust(
            reader="gemini",  # untrusted: no project file read, every MCP server disabled
            held={"project": EVERY, "user": frozenset({"mcp"})},
            step="run gemini in {folder} and trust it: /permissions trust",
        ),
        user=in_home(".gemini", "settings.json"),
        project=".gemini/settings.json",
        hooks=hooks_tables.GEMINI,
        mcp=Mcp(
            transports=WITH_SSE,
            stdio=("command", "args", "env", "cwd"),
            renames={"http.url": "httpUrl"},
            refs=AS_GIVEN,  # it expands $VAR, ${VAR} and ${VAR:-default} in its settings
        ),
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
    # `context_servers` in its settings, user scope only; expands no variables.
    AgentSpec(
        name="zed",
        label="Zed",
        user=in_config_home("zed", "settings.json"),
        project=None,
        mcp=Mcp(key=("context_servers",), transports=NO_SSE, refs=VALUES),
        # Skills are Zed's slash commands; it has no command or subagent files.
        skills=AGENTS_SKILLS,
        presence=Presence(binaries=("zed", "zeditor"), dirs=(config_home("zed"),)),
    ),
    # Remote is `serverUrl` (a Cursor-style `url` does not connect).
    AgentSpec(
        name="windsurf",
        label="Windsurf",
        user=in_home(".codeium", "windsurf", "mcp_config.json"),
        project=None,
        mcp=Mcp(transports=WITH_SSE, renames={"url": "serverUrl"}, refs=ENV_SYNTAX),
        # Its own skills folders (`.agents/skills` only per second-hand sources); workflows as
        # commands; no subagents.
        skills=Component(
            format="folder", user=home(".codeium", "windsurf", "skills"), project=".windsurf/skills"
        ),
        commands=Component(
            format="markdown",
            user=home(".codeium", "windsurf", "global_workflows"),
            project=".windsurf/workflows",
        ),
        presence=Presence(binaries=("windsurf",), dirs=(home(".codeium", "windsurf"),)),
    ),
    # `mcp`: `type: local` with one `command` array and `environment`, or `type: remote`.
    AgentSpec(
        name="opencode",
        label="OpenCode",
        user=in_config_home("opencode", "opencode.json"),
        project="opencode.json",
        mcp=Mcp(
            key=("mcp",),
            transports=NO_SSE,
            types={"stdio": "local", "http": "remote"},
            renames={"env": "environment"},
            argv=True,
            constants={"enabled": True},
            refs=Refs(spelling="{env:VAR}"),
        ),
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
    # YAML `extensions`: `cmd` + `args` + `envs` or `uri` + `headers`, each enabled, 300 s.
    AgentSpec(
        name="goose",
        label="Goose",
        fmt="yaml",
        user=in_config_home("goose", "config.yaml"),
        project=None,
        mcp=Mcp(
            key=("extensions",),
            transports=NO_SSE,
            types={"stdio": "stdio", "http": "streamable_http"},
            renames={"command": "cmd", "env": "envs", "url": "uri"},
            named=True,
            always=("args", "env", "headers"),
            refs=VALUES,
            constants={"enabled": True, "timeout": 300},
            by_name=quirks.goose_env_keys,
        ),
        # Commands and subagents are YAML recipes in Goose: not written.
        skills=AGENTS_SKILLS,
        presence=Presence(binaries=("goose",), dirs=(config_home("goose"),)),
    ),
    # A YAML list of named entries; remote is `type: streamable-http` + `url`, no headers.
    AgentSpec(
        name="continue",
        label="Continue",
        fmt="yaml",
        user=in_home(".continue", "config.yaml"),
        project=".continue/config.yaml",
        mcp=Mcp(
            listed=True,
            transports=NO_SSE,
            remote=("url",),
            types={"http": "streamable-http"},
            named=True,
            refs=VALUES,
        ),
        # No SKILL.md folder and no subagent files; prompt files are its commands.
        commands=Component(
            format="continue-md", user=home(".continue", "prompts"), project=".continue/prompts"
        ),
        presence=Presence(binaries=("cn",), dirs=(home(".continue"),)),
    ),
    # Claude-style entries, `type` always set; expands `${VAR}` and `${VAR:-d}` in `env` only.
    # Project servers go in `.github/mcp.json`, which only Copilot reads: Claude Code reads
    # `.mcp.json` too, so a server written there would reach Claude twice (natively as well).
    AgentSpec(
        name="copilot-cli",
        label="Copilot CLI",
        ask=asks.COPILOT,
        ask_skills=asks.COPILOT_SKILLS,
        # Copilot CLI 1.0.102 passes a top-level `additionalContext` to the model (checked with
        # the real binary: it ignores plain stdout and Claude's nested form)
        notice="additionalContext",
        folder_trust=FolderTrust(
            reader="copilot",  # a project's MCP files are read only in a trusted folder
            held={"project": frozenset({"mcp"})},
            step="run copilot in {folder} and trust the folder when it asks",
        ),
        user=in_env_dir("COPILOT_HOME", ".copilot", "mcp-config.json"),
        project=".github/mcp.json",
        files=with_hooks(
            in_env_dir("COPILOT_HOME", ".copilot", "mcp-config.json"),
            ".github/mcp.json",
            in_env_dir("COPILOT_HOME", ".copilot", "hooks/plugman.json"),
            ".github/hooks/plugman.json",
        ),
        hooks=hooks_tables.COPILOT,
        mcp_reads_too=(".mcp.json",),  # it reads Claude's too: the project's own servers are there
        mcp=Mcp(
            transports=WITH_SSE,
            typed=True,
            refs=Refs(spelling=None, native_in=("env",)),
        ),
        skills=AGENTS_SKILLS,
        commands=Component(
            format="as-skill", user=env_dir(*_COPILOT, "skills"), project=".github/skills"
        ),
        agents=Component(
            format="copilot-agent-md", user=env_dir(*_COPILOT, "agents"), project=".github/agents"
        ),
        presence=Presence(binaries=("copilot",), dirs=(env_dir(*_COPILOT),)),
    ),
    # Remote is `type: streamable-http` + `url`; values, since its expansion is not verified.
    AgentSpec(
        name="kiro",
        label="Kiro",
        user=in_home(".kiro", "settings", "mcp.json"),
        project=".kiro/settings/mcp.json",
        mcp=Mcp(transports=NO_SSE, remote=("url",), types={"http": "streamable-http"}, refs=VALUES),
        skills=Component(format="folder", user=home(".kiro", "skills"), project=".kiro/skills"),
        commands=Component(
            format="markdown", user=home(".kiro", "prompts"), project=".kiro/prompts"
        ),
        agents=Component(format="kiro-json", user=home(".kiro", "agents"), project=".kiro/agents"),
        presence=Presence(binaries=("kiro", "kiro-cli"), dirs=(home(".kiro"),)),
    ),
)
