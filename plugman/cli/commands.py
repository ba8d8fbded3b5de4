"""Every command, declared once, as data: the hot ones whole, the rest by where they live.

A hot command (`install`, `uninstall`, `list`, `paths`, `config resolve`, `validate`, and the
launchers agents' files name, `hooks exec` and `mcp run`) is a `Command` (plugman.cli.argv)
here: its words, summary, arguments, options and the function that runs it. Every other
top-level command or group is a `Lazy` row: the module and the name of its `Command` or
`Group` rows there (declared beside the functions they run), and its summary, written only
here. One parser reads every command line against these declarations (plugman.cli.app).

`plugman` imports only the module of the command it runs, and prints its own help from this
table without importing any command module.

This module imports nothing heavy (plugman.cli.argv lays out the help): `plugman --help` and
`--version` read it and exit.
"""

from __future__ import annotations

from plugman.cli.argv import (
    JSON,
    MANY,
    SCOPE,
    SHOW_SECRETS,
    VALUE,
    Argument,
    Command,
    Option,
    layout,
)


class Lazy:
    """A command declared in its module: its words, where it lives (`plugman.cli.<module>`, and
    the name of its `Command` or `Group` rows there) and its summary. (Not a
    NamedTuple: `typing` costs ~5 ms to import, a third of `plugman --help`.)"""

    __slots__ = ("attribute", "module", "summary", "words")

    def __init__(self, words: str, module: str, attribute: str, summary: str) -> None:
        self.words = words
        self.module = module
        self.attribute = attribute
        self.summary = summary


HOOK_WORDS = Argument(
    "words",
    "AGENT (codex, copilot, cursor, gemini, or an extension's agent), EVENT and HOOK-ID.",
    many=True,
    required=False,  # taken as words: a missing one exits 1, not 2
    metavar="AGENT EVENT HOOK-ID",
)


def _by_words(*commands: Command | Lazy) -> dict[str, Command | Lazy]:
    return {command.words: command for command in commands}


# Every command: the top-level ones in the order `plugman --help` lists them, then the hot
# commands of a group (plugman.cli.app mounts them on it).
COMMANDS = _by_words(
    Command(
        "validate",
        "Check plugins, marketplaces, hooks, MCP configs and SKILL.md files.",
        "fast:run_validate",
        (Argument("paths", "Plugin or marketplace folders, or manifest files.", many=True),),
        (
            Option(("--strict",), "Treat warnings as errors."),
            Option(
                ("--format",),
                "text, json, sarif or github (workflow annotations).",
                VALUE,
                choices=("text", "json", "sarif", "github"),
                default="text",
                metavar="FORMAT",
            ),
            Option(("--json",), "The same as --format json.", dest="as_json"),
        ),
        epilog="A folder is validated as a marketplace (with every local plugin it lists) "
        "and/or a plugin; a file (plugin.json, marketplace.json, gemini-extension.json, "
        "hooks.json, .mcp.json, SKILL.md, agents/ or commands/ *.md) on its own. Every issue "
        "is reported at once with its file, line:column and key path.\n\nExit codes: 0 "
        "no errors, 1 errors found, 2 usage error.",
    ),
    Lazy(
        "new",
        "author",
        "NEW",
        "Create a plugin (or, with --marketplace, a marketplace) that passes validate --strict.",
    ),
    Lazy(
        "pack",
        "author",
        "PACK",
        "Validate a plugin and write it as a reproducible .tar.gz (same bytes on every run).",
    ),
    Lazy(
        "publish",
        "author",
        "PUBLISH",
        "Validate and pack a plugin, then push it to an OCI registry as an artifact.",
    ),
    Lazy(
        "sign",
        "signing",
        "SIGN",
        "Sign a plugin artifact already published to an OCI registry.",
    ),
    Lazy("key", "signing", "KEY_APP", "Make signing keys for publish --sign and sign."),
    Lazy(
        "tag",
        "author",
        "TAG",
        "Validate a plugin and tag its committed state in git as NAME--vVERSION.",
    ),
    Command(
        "paths",
        "Show every location plugman reads or writes (PLUGMAN_HOME relocates them).",
        "fast:run_paths",
        options=(JSON,),
    ),
    Command(
        "install",
        "Install plugins (and their dependencies) into a scope.",
        "fast:run_install",
        (
            Argument(
                "specs",
                "NAME[@MARKETPLACE][SPECIFIER], a folder, a git URL, an archive URL or oci://REF.",
                many=True,
            ),
        ),
        (
            SCOPE,
            Option(("--dry-run",), "Show what would happen."),
            Option(
                ("--config", "-c"),
                "KEY=VALUE: a userConfig value of the plugin. On a terminal, required "
                "values not given are asked.",
                MANY,
                metavar="KEY=VALUE",
            ),
            Option(
                ("--allow-hidden-text",),
                "Install even if the plugin hides text in invisible characters (recorded for "
                "this machine, so sync here lets that content in again; a lock never does).",
            ),
            JSON,
        ),
    ),
    Command(
        "uninstall",
        "Uninstall plugins: remove exactly what their install wrote.",
        "fast:run_uninstall",
        (Argument("names", "NAME or NAME@MARKETPLACE.", many=True),),
        (
            SCOPE,
            Option(("--keep-data",), "Keep the plugin's data folder."),
            Option(("--force",), "Remove even if needed or changed."),
            JSON,
        ),
    ),
    Lazy("enable", "plugins", "ENABLE", "Enable an installed plugin in a scope."),
    Lazy(
        "disable",
        "plugins",
        "DISABLE",
        "Disable an installed plugin in a scope (it stays installed).",
    ),
    Lazy("configure", "configure", "CONFIGURE", "Show or change a plugin's userConfig values."),
    Command(
        "list",
        "List installed plugins in every scope.",
        "fast:run_list",
        options=(
            Option(
                ("--check",),
                "Also ask each linked agent's own CLI what it loaded, and show what it "
                "failed to load.",
            ),
            JSON,
        ),
    ),
    Lazy(
        "update",
        "plugins",
        "UPDATE",
        "Refresh the marketplaces, then update installed plugins to what they offer now.",
    ),
    Lazy(
        "diff",
        "diff",
        "DIFF",
        "Show what an installed plugin's source now offers can do that the installed one cannot.",
    ),
    Lazy(
        "outdated",
        "plugins",
        "OUTDATED",
        "Refresh the marketplaces, then list installed plugins they offer different content for.",
    ),
    Lazy(
        "sync",
        "plugins",
        "SYNC",
        "Install exactly what the project's plugman.toml / plugman.lock declare.",
    ),
    Lazy(
        "lock",
        "lock",
        "LOCK_APP",
        "Resolve plugman.toml and write plugman.lock (installs nothing), or export it as an SBOM.",
    ),
    Lazy(
        "import",
        "importing",
        "IMPORT_APP",
        "Import Claude Code's marketplaces and installed plugins (a dry run unless --apply).",
    ),
    Lazy(
        "search",
        "plugins",
        "SEARCH",
        "Search the known marketplaces, or an MCP Registry's servers (--registry URL).",
    ),
    Lazy("info", "plugins", "INFO", "Show a plugin's catalog entry and where it is installed."),
    Lazy(
        "audit",
        "audit",
        "AUDIT",
        "Check, offline, that the store, agent files and servers match what the project pins "
        "(a CI gate: exit 1 on a finding).",
    ),
    Lazy(
        "export",
        "export",
        "EXPORT",
        "Write the resolved MCP servers (and Claude Code hooks) into AGENT's own config file, "
        "owning only the entries plugman writes.",
    ),
    Lazy(
        "doctor",
        "export",
        "DOCTOR",
        "Check the store, the state, pending approvals and every file plugman exported to.",
    ),
    Lazy(
        "policy",
        "policy",
        "APP",
        "Explain managed policy (plugman's and Claude Code's): what it allows, and which rule "
        "decided.",
    ),
    Lazy(
        "marketplace",
        "marketplace",
        "APP",
        "Add, list, update and remove plugin marketplaces; build your own.",
    ),
    Lazy("config", "config", "CONFIG_APP", "The resolved config every agent is fed."),
    Lazy(
        "trust",
        "config",
        "TRUST_APP",
        "Approve the MCP servers and hooks a project supplies (its own, and its synced plugins').",
    ),
    Lazy("mcp", "mcp", "MCP_APP", "MCP servers in the user, project and local scopes."),
    Lazy("connectors", "mcp", "CONNECTORS_APP", "claude.ai connectors as MCP servers."),
    Lazy("hooks", "hooks", "HOOKS_APP", "The resolved hooks: list them, or run an event's hooks."),
    Lazy(
        "agents",
        "agents",
        "AGENTS_APP",
        "The agents each scope feeds: every change is deployed to them.",
    ),
    Lazy(
        "registry",
        "registry",
        "REGISTRY_APP",
        "Log in to and out of OCI registries (credentials for oci:// sources).",
    ),
    Lazy(
        "completion",
        "completion",
        "COMPLETION",
        "Print the shell completion script for bash, zsh or fish.",
    ),
    Command(
        "config resolve",
        "Merge every scope into one config (managed, claude.ai, plugin, user, project, local).",
        "fast:run_resolve",
        options=(
            JSON,
            Option(("--explain",), "Say why for every entry."),
            SHOW_SECRETS,
            Option(
                ("--target",), "Print the MCP config in AGENT's format.", VALUE, metavar="AGENT"
            ),
        ),
    ),
    Command(
        "hooks exec",
        "Run one hook for an agent, as Claude Code would (the command agents' hooks files name).",
        "hook_launcher:run",
        (HOOK_WORDS,),
        epilog="Written by plugman into agents' hooks files (Claude Code's for the hooks that need "
        "approval only); it runs the one handler HOOK-ID names exactly as Claude Code would "
        "(matcher, `if`, `async`, environment), once its approval still holds. Exit codes: the "
        "handler's own; 0 when the event does not select it; 1 when the launcher could not run "
        "it or it waits for approval (never 2, which would block the agent).",
    ),
    Command(
        "hooks notify",
        "Say in one line which plugins have updates, from the last check (an agent's "
        "SessionStart hook).",
        "hook_launcher:notify",
        (
            Argument(
                "agent",
                "The agent whose SessionStart output form to print in (claude-code, codex, ...).",
                required=False,
            ),
        ),
        epilog="Written by `plugman agents add AGENT --notify-updates`. It reads only the cache "
        "`plugman outdated` writes (no network); nothing is printed when no plugin has an "
        "update; a check older than 7 days says to run `plugman outdated`. Exit code: always 0, "
        "so a session never fails for it.",
    ),
    Command(
        "mcp run",
        "Start a resolved server in this process: exec a stdio one, bridge a remote one.",
        "server_launcher:run",
        (Argument("name", "The server's resolved name, e.g. plugin:PLUGIN:SERVER."),),
        epilog="Secrets come from plugman's secret store at start; nothing is written. "
        "Exit codes: the server's own once it starts; 1 when it is not started (pending "
        "approval, disabled, denied by policy, an option unset, no such server).",
    ),
)


TOP_LEVEL = [words for words in COMMANDS if " " not in words]  # the root group's commands
SUMMARY = "A package manager and marketplace CLI for agent plugins."
QUIET = "No progress; results summed up (install: how many plugins, not which)."
VERBOSE = (
    "Every step a line on stderr (also when it is not a terminal), every plugin a line of "
    "the result."
)
OPTIONS = (
    ("--version", "Show the version."),
    (
        "--project PATH",
        "Project folder (default: the nearest folder from here upward with a plugman.toml, "
        ".mcp.json or .git; else the current folder).",
    ),
    ("-q, --quiet", QUIET),
    ("-v, --verbose", VERBOSE),
    ("-h, --help", "Show this message and exit."),
)


def root_help(columns: int = 80) -> str:
    """`plugman --help`: usage, options and commands, each with its summary, in `columns`."""
    commands = [(name, COMMANDS[name].summary) for name in TOP_LEVEL]
    usage = "Usage: plugman [OPTIONS] COMMAND [ARGS]..."
    sections = [("Options", list(OPTIONS)), ("Commands", commands)]
    text = layout(usage, [SUMMARY], sections, columns)
    return text + "\n\nRun `plugman COMMAND --help` for a command's options."
