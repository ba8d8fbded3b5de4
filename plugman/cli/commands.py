"""Every top-level command: where it lives and its one-line summary, as data.

`plugman` builds only the command it runs (plugman.cli.app's RootGroup imports the module a
name points to, on demand), and prints its own help from this table without importing typer,
rich or any command module: building all 28 commands costs ~50 ms, typer and rich as much
again. tests/cli/test_commands.py checks that every summary is its command's own first
docstring line, so the two cannot drift.

This module imports nothing heavy (plugman.cli.argv lays out the help): `plugman --help` and
`--version` read it and exit.
"""

from __future__ import annotations


class Command:
    """Where a command lives (`plugman.cli.<module>`, and the function that is the command or
    the typer.Typer that is the group; for module `fast`, the words of its spec there) and its
    summary. (Not a NamedTuple: `typing` costs
    ~5 ms to import, a third of `plugman --help`.)"""

    __slots__ = ("attribute", "module", "summary")

    def __init__(self, module: str, attribute: str, summary: str) -> None:
        self.module, self.attribute, self.summary = module, attribute, summary


COMMANDS: dict[str, Command] = {
    "validate": Command(
        "fast", "validate", "Check plugins, marketplaces, hooks, MCP configs and SKILL.md files."
    ),
    "new": Command(
        "author",
        "new",
        "Create a plugin (or, with --marketplace, a marketplace) that passes validate --strict.",
    ),
    "pack": Command(
        "author",
        "pack",
        "Validate a plugin and write it as a reproducible .tar.gz (same bytes on every run).",
    ),
    "publish": Command(
        "author",
        "publish",
        "Validate and pack a plugin, then push it to an OCI registry as an artifact.",
    ),
    "tag": Command(
        "author", "tag", "Validate a plugin and tag its committed state in git as NAME--vVERSION."
    ),
    "paths": Command(
        "fast",
        "paths",
        "Show every location plugman reads or writes (PLUGMAN_HOME relocates them).",
    ),
    "install": Command("fast", "install", "Install plugins (and their dependencies) into a scope."),
    "uninstall": Command(
        "fast", "uninstall", "Uninstall plugins: remove exactly what their install wrote."
    ),
    "enable": Command("plugins", "enable", "Enable an installed plugin in a scope."),
    "disable": Command(
        "plugins", "disable", "Disable an installed plugin in a scope (it stays installed)."
    ),
    "configure": Command("configure", "configure", "Show or change a plugin's userConfig values."),
    "list": Command("fast", "list", "List installed plugins in every scope."),
    "update": Command(
        "plugins",
        "update",
        "Refresh the marketplaces, then update installed plugins to what they offer now.",
    ),
    "outdated": Command(
        "plugins",
        "outdated",
        "Refresh the marketplaces, then list installed plugins they offer different content for.",
    ),
    "sync": Command(
        "plugins", "sync", "Install exactly what the project's plugman.toml / plugman.lock declare."
    ),
    "lock": Command(
        "plugins", "lock", "Resolve plugman.toml and write plugman.lock (installs nothing)."
    ),
    "search": Command(
        "plugins",
        "search",
        "Search the known marketplaces, or an MCP Registry's servers (--registry URL).",
    ),
    "info": Command("plugins", "info", "Show a plugin's catalog entry and where it is installed."),
    "export": Command(
        "export",
        "export",
        "Write the resolved MCP servers (and Claude Code hooks) into AGENT's own config file, "
        "owning only the entries plugman writes.",
    ),
    "doctor": Command(
        "export",
        "doctor",
        "Check the store, the state, pending approvals and every file plugman exported to.",
    ),
    "marketplace": Command(
        "marketplace", "app", "Add, list, update and remove plugin marketplaces; build your own."
    ),
    "config": Command("config", "config_app", "The resolved config every agent is fed."),
    "trust": Command(
        "config",
        "trust_app",
        "Approve the MCP servers and hooks a project supplies (its own, and its synced plugins').",
    ),
    "mcp": Command("mcp", "mcp_app", "MCP servers in the user, project and local scopes."),
    "connectors": Command("mcp", "connectors_app", "claude.ai connectors as MCP servers."),
    "hooks": Command(
        "hooks", "hooks_app", "The resolved hooks: list them, or run an event's hooks."
    ),
    "agents": Command(
        "agents", "agents_app", "The agents each scope feeds: every change is deployed to them."
    ),
    "registry": Command(
        "registry",
        "registry_app",
        "Log in to and out of OCI registries (credentials for oci:// sources).",
    ),
}

SUMMARY = "A package manager and marketplace CLI for agent plugins."
OPTIONS = (
    ("--version", "Show the version."),
    (
        "--project PATH",
        "Project folder (default: the nearest folder from here upward with a plugman.toml, "
        ".mcp.json or .git; else the current folder).",
    ),
    ("--install-completion", "Install completion for the current shell."),
    (
        "--show-completion",
        "Show completion for the current shell, to copy it or customize the installation.",
    ),
    ("-h, --help", "Show this message and exit."),
)


def root_help(columns: int = 80) -> str:
    """`plugman --help`: usage, options and commands, each with its summary, in `columns`."""
    from plugman.cli.argv import table

    commands = [(name, command.summary) for name, command in COMMANDS.items()]
    lines = ["Usage: plugman [OPTIONS] COMMAND [ARGS]...", "", f"  {SUMMARY}", ""]
    lines += ["Options:", *table(list(OPTIONS), columns), "", "Commands:"]
    lines += [*table(commands, columns), ""]
    lines.append("Run `plugman COMMAND --help` for a command's options.")
    return "\n".join(lines)
