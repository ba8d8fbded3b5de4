"""What the loaders produce: plain, immutable records of plugins and marketplaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.jsonvalue import HookEntry, JSONObject, PluginFields, ServerEntry


class McpServer(NamedTuple):
    name: str
    transport: str  # stdio | http | sse | ws ("streamable-http" is read as http)
    entry: ServerEntry  # as written, in `.mcp.json` shape


class HookHandler(NamedTuple):
    event: str
    matcher: str | None
    type: str
    entry: HookEntry


class Skill(NamedTuple):
    name: str
    path: Path  # the SKILL.md file
    description: str | None
    frontmatter: JSONObject  # SKILL.md's YAML front matter, as written


class Dependency(NamedTuple):
    name: str
    version: str | None = None
    marketplace: str | None = None


class UserOption(NamedTuple):
    """One `userConfig` option (docs/claude-format.md#user-config): a value the user supplies
    for the plugin."""

    key: str
    type: str  # string | number | boolean | directory | file
    title: str
    description: str
    sensitive: bool = False
    required: bool = False
    default: Any = None  # None: no default
    multiple: bool = False
    min: float | None = None
    max: float | None = None


class Plugin(NamedTuple):
    name: str
    root: Path
    format: str  # claude | agent-plugins | gemini | marketplace-entry | folders
    manifest: PluginFields
    version: str | None = None
    description: str | None = None
    skills: tuple[Skill, ...] = ()
    commands: tuple[Path, ...] = ()
    agents: tuple[Path, ...] = ()
    hooks: tuple[HookHandler, ...] = ()
    mcp_servers: tuple[McpServer, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
    # installed with it by default, left out (with a warning) when they cannot be: Claude Code's
    # optionalDependencies, less those also in `dependencies` (required)
    optional_dependencies: tuple[Dependency, ...] = ()
    user_config: tuple[UserOption, ...] = ()


class PluginSource(NamedTuple):
    kind: str  # a registered source kind: path | github | url | … | an extension's
    location: str  # a relative path, repo, URL, package or command
    ref: str | None = None
    sha: str | None = None  # what pins it: a git commit, an archive's sha256, …
    subdir: str | None = None
    version: str | None = None  # npm version range (an exact version when from the lock)
    registry: str | None = None  # npm registry URL (None: https://registry.npmjs.org)


class MarketplaceEntry(NamedTuple):
    """A plugin as a marketplace lists it, read once where marketplace.json is parsed; `entry`
    keeps the entry as written: with `strict: false` (or no plugin.json) its fields are the
    plugin's manifest, and Claude Code's own marketplace files are given it as is."""

    name: str
    source: PluginSource | None
    strict: bool
    version: str | None
    description: str | None
    entry: PluginFields
    position: int = 0  # its index in `plugins`, where its findings are reported
    category: str = ""  # what `search` matches, besides the name and description
    tags: tuple[str, ...] = ()  # its `tags`, then its `keywords`


class Marketplace(NamedTuple):
    name: str
    root: Path
    owner: str | None
    plugins: tuple[MarketplaceEntry, ...]
    manifest: JSONObject  # marketplace.json as written
    # One of Anthropic's own marketplaces: its plugins may use reserved names. `validate` goes
    # by the marketplace's reserved name; install by where it came from (registry.official).
    official: bool = False
