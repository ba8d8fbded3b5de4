"""The files `plugman new` writes: a plugin's (by component) and a marketplace's, as text.

Every file here passes `plugman validate --strict` (tests/cli/test_authoring.py scaffolds each
combination and checks it)."""

from __future__ import annotations

import json
from typing import Any

PLUGIN_SCHEMA = "https://json.schemastore.org/claude-code-plugin-manifest.json"
MARKETPLACE_SCHEMA = "https://json.schemastore.org/claude-code-marketplace.json"
COMPONENTS = ("skill", "command", "agent", "hook", "mcp")
EXECUTABLE = frozenset({"hooks/session-start.sh"})


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def plugin_json(name: str, version: str, description: str, author: str | None) -> str:
    manifest: dict[str, Any] = {
        "$schema": PLUGIN_SCHEMA,
        "name": name,
        "version": version,
        "description": description,
    }
    if author:
        manifest["author"] = {"name": author}
    return _json(manifest)


def plugin_readme(name: str, description: str, parts: tuple[str, ...]) -> str:
    lines = [f"# {name}", "", description, "", "## What it holds", ""]
    lines += [f"- {WHAT[part]}" for part in parts] or [NOTHING]
    lines += [
        "",
        "## Develop",
        "",
        "```sh",
        "plugman validate --strict .    # check every file, as CI would",
        "plugman pack .                 # a reproducible .tgz of this plugin",
        f"plugman tag .                  # git tag {name}--v<version>, once committed",
        "```",
        "",
    ]
    return "\n".join(lines)


NOTHING = "- nothing yet: add `skills/`, `commands/`, `agents/`, `hooks/hooks.json` or `.mcp.json`"
WHAT = {
    "skill": "`skills/hello/SKILL.md`: a skill Claude uses when the task matches its description",
    "command": "`commands/greet.md`: the slash command `/{name}:greet`",
    "agent": "`agents/helper.md`: a subagent Claude can delegate to",
    "hook": "`hooks/hooks.json`: runs `hooks/session-start.sh` when a session starts",
    "mcp": "`.mcp.json`: an MCP server (the MCP reference server, through npx)",
}

SKILL = (
    "---\nname: hello\ndescription: Greet the user and say what the {name} plugin can do. "
    "Use when the user says hello or asks what {name} offers.\n"
    """---

# Hello

Greet the user by name if you know it, then list in two or three short bullet points what
the {name} plugin adds to this session.

Replace this text with the instructions of your own skill. Keep the description specific:
Claude decides when to use the skill from it alone.
"""
)

COMMAND = """---
description: Greet someone (the {name} plugin's example command)
argument-hint: "[name]"
---

Greet $ARGUMENTS warmly, in one sentence. If no name was given, greet the user.
"""

AGENT = (
    "---\nname: helper\ndescription: Use this agent for a focused, self-contained task from "
    "the {name} plugin that benefits from its own context, such as researching one question "
    "in the codebase and reporting back.\n"
    """---

You are a careful assistant working on one task for the {name} plugin.

Work only on the task you are given. Report what you found or did in a short list, with the
files and lines it concerns, and say plainly what you could not find out.
"""
)

HOOKS = {
    "description": "Example hook: add a line of context when a session starts.",
    "hooks": {
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [
                    {
                        "type": "command",
                        "command": '"${CLAUDE_PLUGIN_ROOT}/hooks/session-start.sh"',
                        "timeout": 10,
                    }
                ],
            }
        ]
    },
}

HOOK_SCRIPT = """#!/bin/sh
# A SessionStart hook: what it prints on stdout is added to Claude's context.
echo "The {name} plugin is enabled in this session."
"""

MCP = {
    "mcpServers": {
        "example": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-everything"],
        }
    }
}


def plugin_files(
    name: str, version: str, description: str, author: str | None, parts: tuple[str, ...]
) -> dict[str, str]:
    """Every file of a new plugin, by path."""
    files = {
        ".claude-plugin/plugin.json": plugin_json(name, version, description, author),
        "README.md": plugin_readme(name, description, parts).replace("{name}", name),
    }
    texts = {
        "skill": {"skills/hello/SKILL.md": SKILL},
        "command": {"commands/greet.md": COMMAND},
        "agent": {"agents/helper.md": AGENT},
        "hook": {"hooks/hooks.json": _json(HOOKS), "hooks/session-start.sh": HOOK_SCRIPT},
        "mcp": {".mcp.json": _json(MCP)},
    }
    for part in parts:
        files.update({path: text.replace("{name}", name) for path, text in texts[part].items()})
    return files


def marketplace_files(name: str, description: str, owner: str) -> dict[str, str]:
    """Every file of a new marketplace, by path."""
    manifest = {
        "$schema": MARKETPLACE_SCHEMA,
        "name": name,
        "owner": {"name": owner},
        "description": description,
        "plugins": [],
    }
    readme = f"""# {name}

{description}

## Add a plugin

```sh
plugman new my-plugin --dir plugins/my-plugin --with skill
plugman marketplace build .         # list every folder of plugins/ in marketplace.json
plugman validate --strict .
```

## Use it

```sh
plugman marketplace add <this repository's URL or folder>
plugman install my-plugin@{name}
```
"""
    return {
        ".claude-plugin/marketplace.json": _json(manifest),
        "plugins/.gitkeep": "",
        "README.md": readme,
    }
