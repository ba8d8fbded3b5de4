"""Where an agent reads a plugin's skills, commands and subagents, and in which form: one small
record per component kind (`Component`), a field of `AgentSpec`, and how to tell whether the
agent is on this machine (`Presence`).

A `Component` names a folder per scope: at user scope a `UserDir` (a folder under the home, or
under the folder an environment variable names, such as `CODEX_HOME` or `XDG_CONFIG_HOME`); at
project scope a path relative to the project. `None` at a scope, or no `Component` at all, means
the agent has no such place: the component is reported as not deliverable to it, never dropped
silently. `NATIVE` marks an agent that loads the plugin whole (Claude Code), so nothing is
deployed to it one component at a time.

Folders are shared. `.agents/skills` (and `~/.agents/skills`) is read by Codex, Gemini CLI,
Copilot CLI, VS Code, Cursor, OpenCode, Goose and Zed; `.github/agents` by Copilot CLI and VS
Code. A folder read by several agents is written once: `shared` groups the linked agents by the
folder they read (as resolved for this home and environment), and a deployment writes each
folder once, for all of them, and takes it out only when no linked agent reads it any more.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from plugman.agents.translate.common import Translate

# skills: `folder`, the SKILL.md folder as is (the Agent Skills standard).
# commands: `claude-md` (as is), `gemini-toml`, `markdown` (plain Markdown: Cursor commands,
# Windsurf workflows, Kiro prompts), `opencode-md`, `vscode-prompt-md`, `continue-md`, `as-skill`
# (a SKILL.md folder, for Codex and Copilot CLI).
# agents: `claude-md`, `codex-toml`, `copilot-agent-md` (Copilot CLI and VS Code), `gemini-md`,
# `opencode-md`, `cursor-agent-md`, `kiro-json`.
# `native`: the agent loads the whole plugin itself.
# `own` (commands, agents): the `Component`'s own `translate` writes the file (an extension's
# agent with a form of its own).
Format = Literal[
    "native",
    "own",
    "folder",
    "claude-md",
    "gemini-toml",
    "markdown",
    "opencode-md",
    "vscode-prompt-md",
    "continue-md",
    "as-skill",
    "codex-toml",
    "copilot-agent-md",
    "gemini-md",
    "cursor-agent-md",
    "kiro-json",
]
Kind = Literal["skills", "commands", "agents"]
KINDS: tuple[Kind, ...] = ("skills", "commands", "agents")


class UserDir(NamedTuple):
    """A user-scope folder: `parts` under `base` (a folder relative to the home, "" for the home
    itself), where the `env` variable, when set, names `base` instead."""

    parts: tuple[str, ...]
    base: str = ""
    env: str | None = None

    def path(self, home: Path, env: Mapping[str, str]) -> Path:
        root = env.get(self.env) if self.env else None
        return Path(root or home / self.base).joinpath(*self.parts)


def home(*parts: str) -> UserDir:
    return UserDir(parts)


def env_dir(var: str, default: str, *parts: str) -> UserDir:
    """`parts` in the folder `var` names, else in `~/default`."""
    return UserDir(parts, default, var)


def config_home(*parts: str) -> UserDir:
    """Under XDG_CONFIG_HOME (default `~/.config`)."""
    return UserDir(parts, ".config", "XDG_CONFIG_HOME")


@dataclass(frozen=True, kw_only=True)
class Component:
    """Where an agent reads one kind of component, per scope, and the form it reads: one of
    plugman's (`format`), or, for commands and subagents, one of the agent's own (`format="own"`
    and `translate`, a function from the Claude-format file read to the file the agent reads:
    `plugman.agents.translate.common.Translate`)."""

    format: Format
    user: UserDir | None = None  # None: no user-scope folder
    project: str | None = None  # relative to the project; None: no project-scope folder
    translate: Translate | None = None  # the agent's own translator (`format="own"`)

    def folder(self, scope: str, home: Path, project: Path, env: Mapping[str, str]) -> Path | None:
        """The folder at `scope` (user | project), or None when the agent reads none there."""
        if self.format == "native":
            return None
        if scope == "user" and self.user is not None:
            return self.user.path(home, env)
        if scope == "project" and self.project is not None:
            return project / self.project
        return None


NATIVE = Component(format="native")
AGENTS_SKILLS = Component(format="folder", user=home(".agents", "skills"), project=".agents/skills")


@dataclass(frozen=True, kw_only=True)
class Presence:
    """How to tell the agent is installed here: any of `binaries` on PATH, or any of `dirs`
    (its configuration folders) existing."""

    binaries: tuple[str, ...] = ()
    dirs: tuple[UserDir, ...] = ()


Which = Callable[[str, str | None], str | None]


def _which(name: str, path: str | None) -> str | None:
    return shutil.which(name, path=path)


def present(
    presence: Presence | None, home: Path, env: Mapping[str, str], which: Which = _which
) -> list[str]:
    """What shows the agent is here (`claude on PATH: /usr/bin/claude`, `~/.codex exists`);
    empty when nothing does."""
    if presence is None:
        return []
    found = []
    for name in presence.binaries:
        where = which(name, env.get("PATH", os.defpath))
        if where:
            found.append(f"{name} on PATH: {where}")
    for folder in presence.dirs:
        path = folder.path(home, env)
        if path.is_dir():
            found.append(f"{path} exists")
    return found


class Reader(NamedTuple):
    agent: str
    format: Format


def shared(
    places: Iterable[tuple[str, Component | None]],
    scope: str,
    home: Path,
    project: Path,
    env: Mapping[str, str],
) -> dict[Path, list[Reader]]:
    """Each folder the given agents read at `scope` → the agents reading it, with the form each
    reads there (a folder written once for all of them). `places` are (agent name, its
    `Component` of one kind). Agents with no folder there are left out: see `missing`."""
    folders: dict[Path, list[Reader]] = {}
    for agent, component in places:
        folder = component.folder(scope, home, project, env) if component else None
        if component is not None and folder is not None:
            folders.setdefault(folder, []).append(Reader(agent, component.format))
    return folders


def missing(component: Component | None, kind: Kind, label: str, scope: str) -> str | None:
    """Why `kind` cannot reach the agent at `scope`, or None when it can (or it is native)."""
    if component is None:
        return f"{label} has no place for plugin {kind}"
    if component.format == "native":
        return None
    if scope == "user" and component.user is None:
        return f"{label} reads no {kind} at user scope"
    if scope == "project" and component.project is None:
        return f"{label} reads no {kind} in a project"
    if scope not in ("user", "project"):
        return f"{label} reads no {kind} at {scope} scope"
    return None
