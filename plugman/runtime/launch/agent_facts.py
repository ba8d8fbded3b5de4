"""What the hot commands need to know of a linked agent, as data: their types here, their values
in each agent's `AgentSpec` (plugman.agents.targets): for `plugman hooks exec AGENT` its
`HookSpelling.tools` and `async_itself`; for `plugman hooks notify AGENT` its `notice` form; for
`plugman list` (whether it loads what it was given: `agents.gating`) its `label` and
`folder_trust`.

The deployment writes them (`dump`) for every linked agent into `<state>/agent-facts.json`, so
these commands read one small JSON file instead of importing the agent table (~10 ms) or loading
the installed extensions (~30 ms). The file names the plugman version that wrote it: one from
another version, or none, or an agent it lacks sends the command to the specs themselves
(`cli.hook_launcher`, `agents.gating`), which are the one source; this file only caches them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from plugman import __version__

if TYPE_CHECKING:
    from plugman.core.paths import Paths

FILE = "agent-facts.json"


class Launching(NamedTuple):
    """What the hook launcher needs of the agent whose hooks file names it (by its word)."""

    tools: Mapping[str, str]  # Claude's tool name → the agent's (reversed for its event JSON)
    async_itself: bool = False  # it runs an `async` handler's launcher in the background itself


# Which of plugman's folder-trust readers answers for an agent (`agents.gating.Gating`: Claude
# Code's `~/.claude.json`, Codex's `config.toml`, Gemini CLI's `trustedFolders.json`, Copilot
# CLI's `trusted_folders`).
Reader = Literal["claude", "codex", "gemini", "copilot"]
READERS: tuple[Reader, ...] = ("claude", "codex", "gemini", "copilot")


# every kind a folder trust can hold back (an agent that loads nothing of an untrusted folder)
EVERY = frozenset({"mcp", "hooks", "skills", "commands", "agents", "plugin", "files"})


class FolderTrust(NamedTuple):
    """An agent's folder trust: what it holds back in a folder it does not trust, and how the
    user grants it (plugman only reads it, never grants it)."""

    reader: Reader  # which reader tells whether it trusts the project folder
    held: Mapping[str, frozenset[str]]  # scope → the kinds it loads only in a trusted folder
    step: str  # what the user does to trust it, `{folder}` the project folder


class Agent(NamedTuple):
    """What the hot commands need of one agent, by its target name."""

    label: str  # its name in notes
    notice: str = "plain"  # its update notice form (`notices.Form`)
    trust: FolderTrust | None = None  # None: it has no folder trust


class Facts(NamedTuple):
    launchers: dict[str, Launching]  # by the launcher's AGENT word (`HookSpelling.launcher`)
    agents: dict[str, Agent]  # by target name


def path(paths: Paths) -> Path:
    return paths.state_dir / FILE


def load(paths: Paths) -> Facts:
    """The facts this plugman version wrote; empty when there are none (or not readable)."""
    try:
        found = json.loads(path(paths).read_bytes())
    except (OSError, ValueError):
        return Facts({}, {})
    if not isinstance(found, dict) or found.get("version") != __version__:
        return Facts({}, {})
    launchers, agents = found.get("launchers"), found.get("agents")
    return Facts(
        {
            str(word): Launching(_strings(given.get("tools")), given.get("async_itself") is True)
            for word, given in (launchers.items() if isinstance(launchers, dict) else [])
            if isinstance(given, dict)
        },
        {
            str(name): Agent(
                str(given.get("label", name)),
                str(given.get("notice", "plain")),
                _trust(given.get("trust")),
            )
            for name, given in (agents.items() if isinstance(agents, dict) else [])
            if isinstance(given, dict)
        },
    )


def dump(facts: Facts) -> bytes:
    body: dict[str, Any] = {
        "version": __version__,
        "launchers": {
            word: {"tools": dict(sorted(given.tools.items())), "async_itself": given.async_itself}
            for word, given in sorted(facts.launchers.items())
        },
        "agents": {name: _agent(given) for name, given in sorted(facts.agents.items())},
    }
    return json.dumps(body, indent=1).encode() + b"\n"


def _agent(given: Agent) -> dict[str, Any]:
    found: dict[str, Any] = {"label": given.label, "notice": given.notice}
    if given.trust is not None:
        held = {scope: sorted(kinds) for scope, kinds in sorted(given.trust.held.items())}
        found["trust"] = {"reader": given.trust.reader, "held": held, "step": given.trust.step}
    return found


def _strings(given: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}


def _trust(given: object) -> FolderTrust | None:
    if not isinstance(given, dict) or given.get("reader") not in READERS:
        return None
    held = given.get("held")
    return FolderTrust(
        given["reader"],
        {
            str(scope): frozenset(str(k) for k in kinds)
            for scope, kinds in (held.items() if isinstance(held, dict) else [])
            if isinstance(kinds, list)
        },
        str(given.get("step", "")),
    )
