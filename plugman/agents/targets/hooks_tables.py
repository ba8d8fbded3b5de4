"""How each agent with a hook system spells hooks (`HookSpelling` records for `table`), and where
each mapping comes from. Claude Code's own spelling is everything as given, but for the hooks
that need approval. Every agent gets those through the launcher, `plugman hooks exec AGENT ...`
(`launcher`: its AGENT word; plugman.runtime.launch.hook), which checks the approval at each
call; every other agent gets plugin hooks (and hooks it cannot take as given) that way too."""

from __future__ import annotations

from plugman.agents.targets import codex
from plugman.agents.targets.spec import HookSpelling

COMMAND = ("command",)

# Claude Code: every field as given; only a command hook that needs approval goes through the
# launcher (no tool renames; the plugins it loads natively bring their own hooks).
# It runs an `async` handler's launcher in the background itself: the launcher then runs the
# handler in the foreground.
CLAUDE = HookSpelling(launcher="claude-code", launches_plugins=False, async_itself=True)

# Gemini CLI 0.61.0, checked against `gemini hooks migrate --from-claude`: the same events and
# tool names, `$CLAUDE_PROJECT_DIR` → `$GEMINI_PROJECT_DIR`, only `type`, `command`, `timeout`.
# Where plugman differs from that command, it follows Gemini's runtime: the timeout becomes
# milliseconds (its hook runner waits `timeout` ms; migrate copies the seconds), Grep and LS
# become the real tool names `grep_search` and `list_directory` (migrate writes `grep`, `ls`),
# and SubagentStop is reported (migrate means to map it to AfterAgent but spells it
# `SubAgentStop`, so it passes through as an event Gemini skips as invalid).
GEMINI = HookSpelling(
    role="mcp",  # the same settings.json as its servers
    events={
        "PreToolUse": "BeforeTool",
        "PostToolUse": "AfterTool",
        "UserPromptSubmit": "BeforeAgent",
        "Stop": "AfterAgent",
        "SessionStart": "SessionStart",
        "SessionEnd": "SessionEnd",
        "PreCompact": "PreCompress",
        "Notification": "Notification",
    },
    tools={  # its own tool names, as `gemini hooks migrate` maps them (Grep and LS: see above)
        "Edit": "replace",
        "Bash": "run_shell_command",
        "Read": "read_file",
        "Write": "write_file",
        "Glob": "glob",
        "Grep": "grep_search",
        "LS": "list_directory",
    },
    types=COMMAND,
    handler=("type", "command", "timeout"),
    timeout_scale=1000,
    text={
        "$CLAUDE_PROJECT_DIR": "$GEMINI_PROJECT_DIR",
        "${CLAUDE_PROJECT_DIR}": "${GEMINI_PROJECT_DIR}",
    },
    launcher="gemini",
)

# Codex 0.169.0: Claude-shaped `hooks.json`; the events its `hooks/list` lists (checked with
# `codex app-server`), command hooks only; each hook trusted in the user's config.toml. It
# sends Claude's tool names (no `tools`).
CODEX = HookSpelling(
    role="hooks",
    events={
        e: e
        for e in (
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "SessionStart",
            "SessionEnd",
            "UserPromptSubmit",
            "SubagentStart",
            "SubagentStop",
            "Stop",
        )
    },
    types=COMMAND,
    handler=("type", "command", "timeout", "async", "statusMessage"),
    trust=codex.trust,
    launcher="codex",
    direct=True,
)

# Cursor (docs only, no binary here): `{"version": 1, "hooks": {"<camelEvent>": [{"command",
# "timeout", "matcher"}]}}`, one entry per handler; its shell tool is `Shell`. plugman owns the
# `version` it adds (a file that already has it keeps its own).
CURSOR = HookSpelling(
    role="hooks",
    events={
        "PreToolUse": "preToolUse",
        "PostToolUse": "postToolUse",
        "PostToolUseFailure": "postToolUseFailure",
        "UserPromptSubmit": "beforeSubmitPrompt",
        "Stop": "stop",
        "SubagentStart": "subagentStart",
        "SubagentStop": "subagentStop",
        "SessionStart": "sessionStart",
        "SessionEnd": "sessionEnd",
        "PreCompact": "preCompact",
    },
    tools={"Bash": "Shell"},
    types=COMMAND,
    handler=("type", "command", "timeout"),
    flat=True,
    top={"version": 1},
    launcher="cursor",
)

# Copilot CLI 1.0.102 (its changelog; docs): a hooks file of plugman's own in `.github/hooks/`
# or `~/.copilot/hooks/`, with the top-level `"version": 1` of its docs. Claude's nested matcher
# groups and PascalCase event names are accepted, and hooks named so get Claude/VS Code-shaped
# input (camelCase names get Copilot's own payload, which a Claude hook script does not
# expect), so the groups stay as Claude writes them, with Claude's tool names (no `tools`);
# `timeout` is an alias of `timeoutSec`.
COPILOT = HookSpelling(
    role="hooks",
    events={
        e: e
        for e in (
            "SessionStart",
            "SessionEnd",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PreCompact",
            "SubagentStart",
            "SubagentStop",
            "Stop",
        )
    },
    types=COMMAND,
    handler=("type", "command", "timeout"),
    top={"version": 1},
    launcher="copilot",
    direct=True,
)
