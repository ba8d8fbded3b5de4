"""The built-in agents, one `AgentSpec` each: where each reads its MCP servers, and how it spells
them (tests/golden/targets/ holds one rendering of each). What no field can say is a function in
`quirks`."""

from __future__ import annotations

from dataclasses import replace

from plugman.agents.targets import codex, hooks_tables, quirks
from plugman.agents.targets.component_table import PLACES
from plugman.agents.targets.places import in_config_home, in_env_dir, in_home, with_hooks
from plugman.agents.targets.refs import AS_GIVEN, VALUES, Refs
from plugman.agents.targets.spec import AgentSpec, Hooks, Mcp, SecretRefs
from plugman.core.state import SCOPES

WITH_SSE = ("stdio", "http", "sse")
NO_SSE = ("stdio", "http")
ENV_SYNTAX = Refs(spelling="${env:VAR}")

SPECS: tuple[AgentSpec, ...] = (
    # Every field, `type` always set; Claude expands `${VAR}` and `${VAR:-d}` itself. Hooks go in
    # the scope's settings file; local scope is a prefix of `~/.claude.json`.
    AgentSpec(
        name="claude-code",
        label="Claude Code",
        user=None,
        project=None,
        files=quirks.claude_files,
        scopes=SCOPES,
        hooks=Hooks(),
        mcp=Mcp(
            transports=None,
            stdio=None,
            remote=None,
            typed=True,
            refs=AS_GIVEN,
            startup_wait=("settings", "CLAUDE_CODE_MCP_STARTUP_WAIT_MS"),
        ),
    ),
    # Remote is `url` + `headers` with no `type`.
    AgentSpec(
        name="cursor",
        label="Cursor",
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
    ),
    # TOML `[mcp_servers.<name>]`; no `${}`: secrets by variable name, the rest as values.
    AgentSpec(
        name="codex",
        label="Codex",
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
    ),
    # http → `httpUrl`, sse → `url`; `${VAR}` but no default syntax.
    AgentSpec(
        name="gemini",
        label="Gemini CLI",
        user=in_home(".gemini", "settings.json"),
        project=".gemini/settings.json",
        hooks=hooks_tables.GEMINI,
        mcp=Mcp(
            transports=WITH_SSE,
            stdio=("command", "args", "env", "cwd"),
            renames={"http.url": "httpUrl"},
            refs=Refs(spelling="${VAR}"),
        ),
    ),
    # `context_servers` in its settings, user scope only; expands no variables.
    AgentSpec(
        name="zed",
        label="Zed",
        user=in_config_home("zed", "settings.json"),
        project=None,
        mcp=Mcp(key=("context_servers",), transports=NO_SSE, refs=VALUES),
    ),
    # Remote is `serverUrl` (a Cursor-style `url` does not connect).
    AgentSpec(
        name="windsurf",
        label="Windsurf",
        user=in_home(".codeium", "windsurf", "mcp_config.json"),
        project=None,
        mcp=Mcp(transports=WITH_SSE, renames={"url": "serverUrl"}, refs=ENV_SYNTAX),
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
    ),
    # Claude-style entries, `type` always set; expands `${VAR}` and `${VAR:-d}` in `env` only.
    # Project servers go in `.github/mcp.json`, which only Copilot reads: Claude Code reads
    # `.mcp.json` too, so a server written there would reach Claude twice (natively as well).
    AgentSpec(
        name="copilot-cli",
        label="Copilot CLI",
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
    ),
    # Remote is `type: streamable-http` + `url`; values, since its expansion is not verified.
    AgentSpec(
        name="kiro",
        label="Kiro",
        user=in_home(".kiro", "settings", "mcp.json"),
        project=".kiro/settings/mcp.json",
        mcp=Mcp(transports=NO_SSE, remote=("url",), types={"http": "streamable-http"}, refs=VALUES),
    ),
)

# Where each agent reads a plugin's skills, commands and subagents (`component_table`).
SPECS = tuple(replace(spec, **PLACES[spec.name]._asdict()) for spec in SPECS)
