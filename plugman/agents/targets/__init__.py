"""Targets: each writes the resolved MCP servers (and, for Claude Code, hooks) in one agent's
native config format, and says which files that agent reads in each scope.

A target never drops anything silently: what it cannot express comes back in `unsupported`,
one line per item, naming the server and saying why. Servers arrive with their `${VAR}`
references unexpanded, so secrets stay in the environment; each target writes references in
its agent's own syntax, or says it cannot.

The built-in agents are data: one `AgentSpec` each in `table`, read by the one renderer in
`render`, with what is unique to one agent in `quirks`. `model` holds the contract a target
keeps (any `Target` will do, as a third-party `plugman_targets` hook may return one).
"""

from __future__ import annotations

from plugman.agents.targets.model import (
    Hooks,
    Location,
    Place,
    Rendered,
    Servers,
    Source,
    Target,
    hook_id,
    kind,
)
from plugman.agents.targets.places import UserPath, in_config_home, in_env_dir, in_home, one_file
from plugman.agents.targets.refs import (
    Form,
    Refs,
    Unwritable,
    exact_reference,
    literal,
    rewrite,
    syntax,
)
from plugman.agents.targets.render import extras, target
from plugman.agents.targets.spec import AgentSpec, Mcp, SecretRefs
from plugman.manifest.edit import Part

__all__ = [
    "AgentSpec",
    "Form",
    "Hooks",
    "Location",
    "Mcp",
    "Part",
    "Place",
    "Refs",
    "Rendered",
    "SecretRefs",
    "Servers",
    "Source",
    "Target",
    "Unwritable",
    "UserPath",
    "exact_reference",
    "extras",
    "hook_id",
    "in_config_home",
    "in_env_dir",
    "in_home",
    "kind",
    "literal",
    "one_file",
    "rewrite",
    "syntax",
    "target",
]
