"""An example target: a made-up agent, Example Agent (`example-agent`), that plugman delivers
every component of a plugin to, exactly as it does to a built-in agent.

What a target author implements: one function marked `@hookimpl`, named `plugman_targets`,
returning a list of `AgentSpec` records (`plugman.api`), one per agent. A record is
data; plugman does the rest (rendering, writing only its own entries, recording them, taking
them out on uninstall or `plugman agents remove`, reporting what the agent cannot take). Its
fields (the `AgentSpec` docstring says each):

- `name`, `label`: what users type (`plugman agents add example-agent`) and what notes call it.
  A name a built-in agent already has is not used (the built-in wins), and `plugman agents list`
  and `plugman doctor` say so.
- where its MCP servers go, per scope: `user` (`in_home`, `in_env_dir`, `in_config_home`),
  `project` (relative to the project), or `files` when it has more files than that one
  (`with_hooks`: a second file, role `hooks`, for its hooks); `fmt` is json, toml or yaml.
- `mcp`: how it spells a server (`Mcp`: the key the servers sit under, the transports and
  fields it takes, renames, and `Refs`, how it writes a `${VAR}` reference).
- `hooks`: how it spells Claude Code's hooks (`HookSpelling`; None: it takes none). With
  `launcher` set to the agent's name, a plugin's handler is written as `plugman hooks exec
  example-agent EVENT ID`, so no machine path lands in a project file and plugman runs the
  handler with Claude's matcher, `if` and timeout rules (`tools`: the agent's names for
  Claude's tools, for matchers and for the event JSON it sends); without it, a plugin's handler
  is written as given, its `${CLAUDE_PLUGIN_ROOT}` the plugin's installed folder.
- `skills`, `commands`, `agents`: the folder it reads each from, per scope, and the form it
  reads there (`Component`: `folder` for SKILL.md folders; `claude-md` or `markdown` for
  commands; `claude-md` for subagents; the other forms are those of the built-in agents). A
  form of the agent's own is `format="own"` with `translate`, a function from the Claude-format
  file (`plugman.agents.translate.common.Source`) to the file written (`Translated`) or `Refused`:
  Example Agent reads its commands as `.prompt` files (`prompt_file` below).
- `presence`: how `plugman agents list` tells it is installed (`Presence`: binaries on PATH or
  folders); `ask`: how `plugman doctor` asks its own CLI what it loaded (`Ask`; None here).

This module imports plugman's public API only, `plugman.api` (versioned: docs/extensions.md).
"""

from __future__ import annotations

from plugman.api import (
    AgentSpec,
    Component,
    HookSpelling,
    Mcp,
    Presence,
    Refs,
    Refused,
    Source,
    Translated,
    home,
    hookimpl,
    in_home,
    with_hooks,
)

FOLDER = ".example-agent"  # in the home (user scope) and in the project (project scope)


def prompt_file(source: Source, plugin: str) -> Translated | Refused:
    """A command as Example Agent reads it: `NAME.prompt`, a `# description` line, then the
    prompt with `$ARGUMENTS` spelled `{input}`; a command whose prompt is empty is refused."""
    if not source.body.strip():
        return Refused(f"command {source.name} of plugin {plugin}: its prompt is empty")
    described = source.meta.get("description")
    head = f"# {described}\n" if isinstance(described, str) else ""
    text = head + source.body.replace("$ARGUMENTS", "{input}")
    notes = ("`allowed-tools` left out",) if "allowed-tools" in source.meta else ()
    return Translated(f"{source.name}.prompt", text.encode(), notes)


EXAMPLE_AGENT = AgentSpec(
    name="example-agent",
    label="Example Agent",
    user=in_home(FOLDER, "mcp.json"),
    project=f"{FOLDER}/mcp.json",
    # its MCP file, and its settings file holding its hooks (file role `hooks`)
    files=with_hooks(
        in_home(FOLDER, "mcp.json"),
        f"{FOLDER}/mcp.json",
        in_home(FOLDER, "settings.json"),
        f"{FOLDER}/settings.json",
    ),
    # `mcpServers`, Claude-style entries with `type`, stdio and streamable HTTP, `${VAR}` as is
    mcp=Mcp(transports=("stdio", "http"), typed=True, refs=Refs(spelling="${VAR}")),
    # Claude Code's events and matcher groups under `hooks` in its settings file, each plugin
    # handler run through plugman's hook launcher
    hooks=HookSpelling(role="hooks", types=("command",), launcher="example-agent"),
    skills=Component(format="folder", user=home(FOLDER, "skills"), project=f"{FOLDER}/skills"),
    # commands in a form of its own, written by its own translator
    commands=Component(
        format="own",
        translate=prompt_file,
        user=home(FOLDER, "commands"),
        project=f"{FOLDER}/commands",
    ),
    agents=Component(format="claude-md", user=home(FOLDER, "agents"), project=f"{FOLDER}/agents"),
    presence=Presence(binaries=("example-agent",), dirs=(home(FOLDER),)),
)


@hookimpl
def plugman_targets() -> list[AgentSpec]:
    """The agents this extension adds."""
    return [EXAMPLE_AGENT]
