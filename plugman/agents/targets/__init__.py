"""Targets: the agents plugman delivers to. Each agent is one `AgentSpec` record (`spec`): where
it reads its MCP servers and how it spells them, how it takes hooks, where it reads a plugin's
skills, commands and subagents and in which form, how to tell it is installed and how to ask it
what it loaded. The built-in agents are records in `table`; an extension adds its own through
the `plugman_targets` hook (`plugman.hookspecs`), built from the names this package exports.

The one renderer (`render.target`, giving the `Target` that `export` runs) writes the resolved
MCP servers and hooks in one agent's native config format. A target never drops anything
silently: what it cannot express comes back in `unsupported`, one line per item, naming the
server and saying why. Servers arrive with their `${VAR}` references unexpanded, so secrets stay
in the environment; each target writes references in its agent's own syntax, or says it cannot.
What is unique to one built-in agent is a function in `quirks`.
"""

from __future__ import annotations

from plugman.agents.targets.asks import Ask, Seen
from plugman.agents.targets.components import (
    AGENTS_SKILLS,
    Component,
    Presence,
    UserDir,
    config_home,
    env_dir,
    home,
)
from plugman.agents.targets.model import (
    Given,
    HookGroups,
    Location,
    Place,
    Rendered,
    Servers,
    Target,
    hook_id,
    kind,
)
from plugman.agents.targets.places import (
    UserPath,
    in_config_home,
    in_env_dir,
    in_home,
    one_file,
    with_hooks,
)
from plugman.agents.targets.refs import (
    AS_GIVEN,
    VALUES,
    Form,
    Refs,
    Unwritable,
    exact_reference,
    literal,
    rewrite,
    syntax,
)
from plugman.agents.targets.render import extras, target
from plugman.agents.targets.spec import NO_SSE, WITH_SSE, AgentSpec, HookSpelling, Mcp, SecretRefs
from plugman.manifest.edit import Part
from plugman.runtime.launch.agent_facts import FolderTrust

__all__ = [
    "AGENTS_SKILLS",
    "AS_GIVEN",
    "NO_SSE",
    "VALUES",
    "WITH_SSE",
    "AgentSpec",
    "Ask",
    "Component",
    "FolderTrust",
    "Form",
    "Given",
    "HookGroups",
    "HookSpelling",
    "Location",
    "Mcp",
    "Part",
    "Place",
    "Presence",
    "Refs",
    "Rendered",
    "SecretRefs",
    "Seen",
    "Servers",
    "Target",
    "Unwritable",
    "UserDir",
    "UserPath",
    "asks",
    "components",
    "config_home",
    "env_dir",
    "exact_reference",
    "extras",
    "home",
    "hook_id",
    "hooks",
    "in_config_home",
    "in_env_dir",
    "in_home",
    "kind",
    "literal",
    "one_file",
    "quirks",
    "rewrite",
    "spec",
    "syntax",
    "table",
    "target",
    "with_hooks",
]
