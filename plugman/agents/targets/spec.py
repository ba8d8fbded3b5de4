"""An agent as data: `AgentSpec` is the one record plugman needs of an agent (built-in in
`table`, or returned by an extension's `plugman_targets` hook); `render.target` turns its MCP and
hook spelling into the renderer `export` runs. What no field can say is a small hook function
on the spec (`quirks`), never a copy of the renderer.

Each component an agent reads has its own small record: `Mcp` for servers; `Component`
(`components.py`) for skills, commands and subagents, the folder per scope and the form the
agent reads there (None: it has no such place); `HookSpelling` how it takes hooks (rendered by
`hooks`); `Presence` says how to tell the agent is installed here; `Ask` (`asks.py`) how to ask
its own CLI what it loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from plugman.agents.targets.asks import Ask
from plugman.agents.targets.components import Component, Presence
from plugman.agents.targets.model import Location, Place
from plugman.agents.targets.places import UserPath, one_file
from plugman.agents.targets.refs import Form, Refs
from plugman.core.state import Scope
from plugman.manifest.edit import Part
from plugman.runtime.launch import agent_facts
from plugman.runtime.launch.agent_facts import FolderTrust, Launching
from plugman.runtime.launch.notices import Form as NoticeForm

Entry = dict[str, Any]
# The fields the agent keeps → those still to write, and fields it takes by variable name
# instead (written last, after `constants`).
ByName = Callable[[Entry], tuple[Entry, Entry]]
Files = Callable[[Place], dict[str, Location]]
# (the place, the hook parts as rendered) → more parts by file role (Codex's trust entries)
Trust = Callable[[Place, list[Part]], dict[str, list[Part]]]


class SecretRefs(NamedTuple):
    """How a reference in a secret-named env or header item is written, when not like the rest:
    `form(declared)` writes it and may declare what it needs in `declared`, which goes in the
    file at `key` as a list (VS Code's `${input:id}` and its `inputs`)."""

    key: tuple[str, ...]
    form: Callable[[dict[str, Entry]], Form]


# the MCP transports an agent takes, the two common sets
WITH_SSE = ("stdio", "http", "sse")
NO_SSE = ("stdio", "http")


@dataclass(frozen=True, kw_only=True)
class Mcp:
    """How an agent spells its MCP servers. A server it cannot take, a field it has no place
    for, a reference it cannot expand: each is left out with one line in `unsupported`."""

    key: tuple[str, ...] = ("mcpServers",)  # where the servers sit in the file
    listed: bool = False  # a list of entries (each `named`), not a map by name
    transports: tuple[str, ...] | None  # the ones it takes; None: any
    stdio: tuple[str, ...] | None = ("command", "args", "env")  # kept, in this order; None: all
    remote: tuple[str, ...] | None = ("url", "headers")  # likewise, for every other transport
    typed: bool = False  # `type` is written, the transport's name unless `types` says
    types: Mapping[str, str] = field(default_factory=dict)  # transport → the `type` written
    renames: Mapping[str, str] = field(default_factory=dict)  # field or "transport.field" → name
    refs: Refs  # how it spells `${VAR}`
    names: str | None = None  # a pattern every server name must match
    named: bool = False  # each entry starts with its `name`
    argv: bool = False  # `command` is one array: the command, then its args
    always: tuple[str, ...] = ()  # written empty when the server has none
    drop_empty: bool = False  # an empty map is left out
    constants: Mapping[str, Any] = field(default_factory=dict)  # in every entry, after the fields
    by_name: ByName | None = None
    secret_refs: SecretRefs | None = None
    # (file role, variable): where the agent reads how long its first turn waits for its MCP
    # servers, set when it runs plugman's gateway (whose first list may wait for slow backends)
    startup_wait: tuple[str, str] | None = None

    def keep(self, transport: str) -> tuple[str, ...] | None:
        return self.stdio if transport == "stdio" else self.remote

    def rename(self, transport: str, key: str) -> str:
        return self.renames.get(f"{transport}.{key}", self.renames.get(key, key))

    def type_of(self, transport: str) -> str | None:
        return self.types.get(transport, transport if self.typed else None)


@dataclass(frozen=True, kw_only=True)
class HookSpelling:
    """How an agent spells hooks given as Claude Code's matcher groups by event. An event it
    lacks, a handler type or field it cannot take: each is left out with one line in
    `unsupported`, per hook."""

    role: str = "settings"  # the file (a key of the agent's files per scope) that holds them
    key: tuple[str, ...] = ("hooks",)  # where the events sit in that file
    events: Mapping[str, str] | None = None  # Claude's event → the agent's; None: all, as named
    # Claude's tool → the agent's, in matchers, and reversed for the event JSON the launcher
    # reads (an agent that sends Claude's own tool names has none)
    tools: Mapping[str, str] = field(default_factory=dict)
    types: tuple[str, ...] | None = None  # handler types it runs; None: any
    handler: tuple[str, ...] | None = None  # handler fields kept, in this order; None: all
    renames: Mapping[str, str] = field(default_factory=dict)  # handler field → the agent's name
    flat: bool = False  # handlers straight under the event (`matcher` on each), no groups
    timeout_scale: int = 1  # Claude's timeout is seconds; 1000: the agent's is milliseconds
    text: Mapping[str, str] = field(default_factory=dict)  # replacements in the command
    trust: Trust | None = None  # more parts granting the agent's trust for these hooks
    launcher: str | None = None  # AGENT of `plugman hooks exec` (None: handlers as given)
    launches_plugins: bool = True  # False: plugin hooks as given (the agent loads plugins)
    async_itself: bool = False  # it runs an `async` handler's launcher in the background itself
    # it sends Claude Code's own event JSON (events and tool names, `hook_event_name`, `cwd`):
    # a plugin hook it would only pass through gets the direct form (runtime.launch.shplan)
    direct: bool = False
    top: Mapping[str, Any] = field(default_factory=dict)  # top-level keys the file needs

    def launching(self) -> Launching:
        """What the launcher needs of the agent (`runtime.agent_facts`, written at deploy)."""
        return Launching(dict(self.tools), self.async_itself)


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """Everything plugman needs of one agent, and the one type an extension returns from its
    `plugman_targets` hook (`plugman.hookspecs`). Fill in:

    - `name` (what users type: `plugman agents add NAME`, `export --target NAME`; a name a
      built-in agent has is not used, the built-in wins, and `agents list` and `doctor` say
      so: `extensions.shadowed`) and `label` (the agent's name in notes);
    - its MCP file: `fmt` (json | toml | yaml), `user` (a function of the `Place`, e.g.
      `in_home(".agent", "mcp.json")`), `project` (relative to the project; None: none), or
      `files` when it has more than that one file per scope (`with_hooks`: a hooks file too);
      `scopes` when not derived from those;
    - `mcp`: how it spells a server (`Mcp`, with `Refs` for how it writes `${VAR}`);
    - `hooks`: how it spells Claude Code's hooks (`HookSpelling`; None: it takes none);
    - `skills`, `commands`, `agents`: where it reads each and in which form (`Component`; None:
      nowhere, said in a note when a plugin brings one; a form of its own: `format="own"` and
      `translate`);
    - `presence`: how to tell it is on this machine (`Presence`); `ask`: how to ask its CLI
      what it loaded (`Ask`; None: `plugman doctor` does not ask it), `ask_skills` which skills,
      `ask_hooks` which hooks; `notice`: the form its SessionStart hook's output takes
      (`plugman.runtime.launch.notices.Form`; plain text unless it reads a JSON form);
      `folder_trust`: what it loads only in a project folder it trusts, which of plugman's
      readers tells (`FolderTrust`; None: it loads what it is given anywhere).
    """

    name: str  # the target's name (`export --target NAME`)
    label: str  # the agent's name in notes
    fmt: str = "json"  # its file format: json | toml | yaml
    user: UserPath | None  # its MCP file at user scope
    project: str | None  # its MCP file in the project folder; None: it reads none
    mcp: Mcp
    hooks: HookSpelling | None = None  # how it takes hooks; None: it takes none
    files: Files | None = None  # every file per scope, where `user` and `project` cannot say
    scopes: tuple[Scope, ...] | None = None  # None: user, and project when it has a project file
    mcp_reads_too: tuple[str, ...] = ()  # other project MCP files it reads (Copilot: .mcp.json)
    skills: Component | None = None  # where it reads SKILL.md folders; None: nowhere
    commands: Component | None = None  # where it reads slash commands; None: nowhere
    agents: Component | None = None  # where it reads subagents; None: nowhere
    presence: Presence | None = None  # how to tell it is installed here
    ask: Ask | None = None  # how to ask its own CLI what it loaded; None: it is not asked
    ask_skills: Ask | None = None  # how to ask it which skills it loaded; None: not asked
    ask_hooks: Ask | None = None  # how to ask it which hooks it runs; None: not asked
    notice: NoticeForm = "plain"  # how its SessionStart hook output is read (the update notice)
    folder_trust: FolderTrust | None = None  # what its folder trust holds back; None: it has none

    def facts(self) -> agent_facts.Agent:
        """What the hot commands need of it (`runtime.agent_facts`, written at deploy)."""
        return agent_facts.Agent(self.label, self.notice, self.folder_trust)

    def scopes_of(self) -> tuple[Scope, ...]:
        if self.scopes is not None:
            return self.scopes
        return ("user", "project") if self.project is not None else ("user",)

    def locate(self, place: Place) -> dict[str, Location]:
        """Its files at `place`, by role (`mcp`, `settings`, `hooks`, ...); {} where it has none."""
        if self.files is not None:
            return self.files(place)
        if self.user is None:
            return {}
        return one_file(self.user, self.project)(place)
