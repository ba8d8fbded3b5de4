"""What the hot commands an agent's files name (`plugman hooks exec AGENT`, `plugman hooks notify
AGENT`) need to know of that agent, as data: their types here, their values in each agent's
`AgentSpec` (`HookSpelling.tools` and `async_itself`, `AgentSpec.notice`; plugman.agents.targets).

The deployment writes them (`dump`) for every linked agent into `<state>/agent-facts.json`, so
the launcher reads one small JSON file instead of importing the agent table (~10 ms) or loading
the installed extensions (~30 ms) at every hook call. The file names the plugman version that
wrote it: one from another version, or none, or an agent it lacks sends the command to the specs
themselves (`cli.hook_launcher`), which are the one source; this file only caches them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from plugman import __version__

if TYPE_CHECKING:
    from plugman.core.paths import Paths

FILE = "agent-facts.json"


class Launching(NamedTuple):
    """What the hook launcher needs of the agent whose hooks file names it (by its word)."""

    tools: Mapping[str, str]  # Claude's tool name → the agent's (reversed for its event JSON)
    async_itself: bool = False  # it runs an `async` handler's launcher in the background itself


class Facts(NamedTuple):
    launchers: dict[str, Launching]  # by the launcher's AGENT word (`HookSpelling.launcher`)
    notices: dict[str, str]  # the notice form (`notices.Form`) by target name


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
    launchers, notices = found.get("launchers"), found.get("notices")
    return Facts(
        {
            str(word): Launching(
                {str(k): str(v) for k, v in (given.get("tools") or {}).items()},
                given.get("async_itself") is True,
            )
            for word, given in (launchers.items() if isinstance(launchers, dict) else [])
            if isinstance(given, dict) and isinstance(given.get("tools") or {}, dict)
        },
        {
            str(name): form
            for name, form in (notices.items() if isinstance(notices, dict) else [])
            if isinstance(form, str)
        },
    )


def dump(facts: Facts) -> bytes:
    body: dict[str, Any] = {
        "version": __version__,
        "launchers": {
            word: {"tools": dict(sorted(given.tools.items())), "async_itself": given.async_itself}
            for word, given in sorted(facts.launchers.items())
        },
        "notices": dict(sorted(facts.notices.items())),
    }
    return json.dumps(body, indent=1).encode() + b"\n"
