"""plugman's public API for extensions: the one import path an extension (an agent target, a
plugin source kind) and its tests use. Everything else in `plugman` is internal and may change
in any release.

    from plugman.api import AgentSpec, SourceKind, hookimpl

What it holds:

- the hook marker `hookimpl` and the hooks' names (`HOOKS`; each is declared, with what it
  returns, in `plugman.hookspecs`), and `ENTRY_POINTS`, the entry-point group plugman reads;
- an agent target: `AgentSpec` and every record its fields hold (`Mcp`, `Refs`, `SecretRefs`,
  `HookSpelling`, `Component`, `Presence`, `Ask`, ...) and the helpers that build them
  (`home`, `in_home`, `with_hooks`, ...);
- a source kind: `SourceKind` and what its methods receive and return (`PluginSource`,
  `LockFields`, `Progress`, `Fetcher`, `PackageRef`) and its helpers (`looks_local`, `pinned`);
- the errors plugman shows as its own: `PlugmanError`, `UsageError`, `FetchError`.

The test kit is `plugman.testing` (a pytest plugin: docs/extensions.md, "Testing an
extension").

Version policy (`API_VERSION`, MAJOR.MINOR, semantic versioning of this module alone, not of
the plugman package): a minor version only adds (a name here, an optional field with a default
on a record, a method with a default on `SourceKind`, a hook); a name is removed or renamed, a
field or parameter removed, made required or changed in meaning only in a new major version,
after a release where it is deprecated. Covered: the names in `__all__`, their fields, methods
and signatures, and the hooks' names and what they return. Not covered: every other module of
`plugman` (import them and you may break in any release), plugman's command line and output
(those have their own compatibility notes), and names starting with `_`.

Importing this module costs nothing: each name is imported from where it lives the first time
it is used (PEP 562), so an extension pays only for what it imports. No plugman module imports
this one (tests/unit/test_layers.py).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # (not typing's: importing typing costs ~5 ms; type checkers know the name)
API_VERSION = "1.0"
ENTRY_POINTS = "plugman"  # the entry-point group (and pluggy project name) plugman reads

if TYPE_CHECKING:  # what a type checker sees; at run time `__getattr__` imports the same names
    from typing import Any

    from plugman.agents.targets import AGENTS_SKILLS as AGENTS_SKILLS
    from plugman.agents.targets import AS_GIVEN as AS_GIVEN
    from plugman.agents.targets import NO_SSE as NO_SSE
    from plugman.agents.targets import VALUES as VALUES
    from plugman.agents.targets import WITH_SSE as WITH_SSE
    from plugman.agents.targets import AgentSpec as AgentSpec
    from plugman.agents.targets import Ask as Ask
    from plugman.agents.targets import Component as Component
    from plugman.agents.targets import FolderTrust as FolderTrust
    from plugman.agents.targets import Form as Form
    from plugman.agents.targets import HookSpelling as HookSpelling
    from plugman.agents.targets import Location as Location
    from plugman.agents.targets import Mcp as Mcp
    from plugman.agents.targets import Part as Part
    from plugman.agents.targets import Place as Place
    from plugman.agents.targets import Presence as Presence
    from plugman.agents.targets import Refs as Refs
    from plugman.agents.targets import SecretRefs as SecretRefs
    from plugman.agents.targets import Seen as Seen
    from plugman.agents.targets import UserDir as UserDir
    from plugman.agents.targets import UserPath as UserPath
    from plugman.agents.targets import config_home as config_home
    from plugman.agents.targets import env_dir as env_dir
    from plugman.agents.targets import home as home
    from plugman.agents.targets import in_config_home as in_config_home
    from plugman.agents.targets import in_env_dir as in_env_dir
    from plugman.agents.targets import in_home as in_home
    from plugman.agents.targets import one_file as one_file
    from plugman.agents.targets import with_hooks as with_hooks
    from plugman.agents.translate.common import Refused as Refused
    from plugman.agents.translate.common import Source as Source
    from plugman.agents.translate.common import Translate as Translate
    from plugman.agents.translate.common import Translated as Translated
    from plugman.core.errors import FetchError as FetchError
    from plugman.core.errors import PlugmanError as PlugmanError
    from plugman.core.errors import UsageError as UsageError
    from plugman.core.paths import Paths as Paths
    from plugman.core.sources import LockedSource as LockedSource
    from plugman.extensions import HOOKS as HOOKS
    from plugman.hookspecs import hookimpl as hookimpl
    from plugman.manifest.model import PluginSource as PluginSource
    from plugman.plugins.sources.kind import Fetcher as Fetcher
    from plugman.plugins.sources.kind import Followed as Followed
    from plugman.plugins.sources.kind import LockFields as LockFields
    from plugman.plugins.sources.kind import Progress as Progress
    from plugman.plugins.sources.kind import SourceKind as SourceKind
    from plugman.plugins.sources.kind import looks_local as looks_local
    from plugman.plugins.sources.kind import pinned as pinned
    from plugman.plugins.sources.purls import PackageRef as PackageRef

# Each public name and the module it is imported from (the same as the block above: a unit
# test holds them equal, tests/unit/test_api.py).
WHERE = {
    **dict.fromkeys(
        (
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
            "HookSpelling",
            "Location",
            "Mcp",
            "Part",
            "Place",
            "Presence",
            "Refs",
            "SecretRefs",
            "Seen",
            "UserDir",
            "UserPath",
            "config_home",
            "env_dir",
            "home",
            "in_config_home",
            "in_env_dir",
            "in_home",
            "one_file",
            "with_hooks",
        ),
        "plugman.agents.targets",
    ),
    **dict.fromkeys(
        ("Refused", "Source", "Translate", "Translated"), "plugman.agents.translate.common"
    ),
    **dict.fromkeys(("FetchError", "PlugmanError", "UsageError"), "plugman.core.errors"),
    "LockedSource": "plugman.core.sources",
    "Paths": "plugman.core.paths",
    "HOOKS": "plugman.extensions",
    "hookimpl": "plugman.hookspecs",
    "PluginSource": "plugman.manifest.model",
    **dict.fromkeys(
        ("Fetcher", "Followed", "LockFields", "Progress", "SourceKind", "looks_local", "pinned"),
        "plugman.plugins.sources.kind",
    ),
    "PackageRef": "plugman.plugins.sources.purls",
}

__all__ = [
    "AGENTS_SKILLS",
    "API_VERSION",
    "AS_GIVEN",
    "ENTRY_POINTS",
    "HOOKS",
    "NO_SSE",
    "VALUES",
    "WITH_SSE",
    "AgentSpec",
    "Ask",
    "Component",
    "FetchError",
    "Fetcher",
    "FolderTrust",
    "Followed",
    "Form",
    "HookSpelling",
    "Location",
    "LockFields",
    "LockedSource",
    "Mcp",
    "PackageRef",
    "Part",
    "Paths",
    "Place",
    "PluginSource",
    "PlugmanError",
    "Presence",
    "Progress",
    "Refs",
    "Refused",
    "SecretRefs",
    "Seen",
    "Source",
    "SourceKind",
    "Translate",
    "Translated",
    "UsageError",
    "UserDir",
    "UserPath",
    "config_home",
    "env_dir",
    "home",
    "hookimpl",
    "in_config_home",
    "in_env_dir",
    "in_home",
    "looks_local",
    "one_file",
    "pinned",
    "with_hooks",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from where it lives on first use (then kept here)."""
    where = WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = getattr(importlib.import_module(where), name)
    globals()[name] = found
    return found


def __dir__() -> list[str]:
    return list(__all__)
