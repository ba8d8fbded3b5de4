"""Reading every scope's files into resolution layers (docs/claude-format.md#scopes-and-precedence).

managed: `managed-settings.toml` (policy, hooks) and `managed-mcp.json` (exclusive when present);
claude.ai: the connectors cache; plugin: every enabled plugin's servers, hooks and skills;
user, project, local: `[mcp_servers]` and `[hooks]` in their plugman.toml, plus the project's
`.mcp.json`. Problems in these files become diagnostics, never crashes, and what they leave
out is said: an entry a file gets wrong is dropped as `invalid` (so `mcp list` and `config
explain` show it), and a file that cannot be read at all adds a `left-out` warning.

A project plugin that nobody installed on this machine (`sync` installed it from the project's
committed declaration: its record entry has no `consented` flag, which `plugman install` sets)
is unconsented: its servers and hooks wait for `plugman trust approve`.

The local scope's `.plugman/local.toml` is the user's only while plugman.config.origins says so
(not tracked by git, this user's): otherwise its servers and hooks are read as the project's,
pending approval, with a warning saying why. A project file reached through a symbolic link
(plugman.toml, .mcp.json, local.toml, or a link on their path such as `.plugman`) is not read
at all, with a warning: it may lead to any file on this machine. Every entry that needs
approval carries the digests of the files it runs
(plugman.config.binding), which its approval covers with the project folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config import (
    binding,
    claude_settings,
    declarations,
    exported,
    origins,
    policy,
    policy_plugins,
    unread,
    user_config,
)
from plugman.config.contribute import Contributions, Given, Installed, contribute, substitute_hook
from plugman.config.merge import Dropped, Hook, Layers, Origin, Server, needs_approval
from plugman.config.policy import Policy, Verdict
from plugman.core import progress, secrets
from plugman.core.errors import PlugmanError
from plugman.core.fs import present
from plugman.core.jsonvalue import ServerEntry
from plugman.core.paths import Paths
from plugman.core.state import PRECEDENCE, SCOPES, InstalledPlugin, InstallRecord, Layer, Scope
from plugman.manifest import hooks as hook_files
from plugman.manifest import mcp, schema
from plugman.manifest.diagnostics import ERROR, Diagnostic
from plugman.manifest.reader import Report

POLICY_KEYS = frozenset(
    {
        "allowedMcpServers",
        "deniedMcpServers",
        "strictKnownMarketplaces",
        "allowedMarketplaces",
        "blockedMarketplaces",
        "allowAllClaudeAiMcps",
        "allowManagedHooksOnly",
        "disableDirectMcpSkills",  # as in Claude Code: no effect outside managed settings
        "requiredSignatures",  # plugman.config.signers
        "gatewayAccess",  # plugman.config.gateway_access: never granted by a file a clone brings
    }
)
USER_POLICY = "requiredSignatures"  # the one policy key the user's plugman.toml may hold too
APPROVAL_KEYS = frozenset(
    {"trust", "approvals", "enableAllProjectMcpServers", "enabledMcpjsonServers"}
)


class Scopes(NamedTuple):
    layers: Layers
    policy: Policy
    plugins: list[Installed]
    diagnostics: list[Diagnostic]
    secrets: dict[str, str]  # the sensitive plugin options' variables and values


def connectors_path(paths: Paths) -> Path:
    return paths.state_dir / "connectors.json"


def load(
    paths: Paths,
    only: Scope | None = None,
    env: Mapping[str, str] | None = None,
    references: bool = False,
) -> Scopes:
    """Every scope, or with `only` (an export's scope: user, project or local) just that
    scope's own entries and the plugins installed in it, under the same policy. Then claude.ai
    connectors and managed servers and hooks are left out (agents read those from their own
    sources), and a present managed-mcp.json still excludes everything else. `env` and
    `references`: how plugins' userConfig values are put in (`plugman.config.contribute`)."""
    report, invalid = Report(), list[Dropped]()
    settings = policy.managed_settings(paths)
    managed = None
    if paths.managed_mcp_files():  # plugman's and Claude Code's managed-mcp.json
        managed = (
            ()
            if only
            else tuple(
                server
                for file in paths.managed_mcp_files()
                for server in _servers_of_file(file, "managed", report, invalid)
            )
        )
    chosen = (only,) if only else SCOPES
    linked = _linked(paths, chosen, report)  # not read
    if "project" in chosen and (said := claude_settings.pre_approved(paths)) is not None:
        report.sink(said.file).warning("project-approval", said.message, (), said.hint)
    tables = {
        scope: {} if file in linked else _toml(file, report)
        for scope in chosen
        for file in [declarations.path_for(paths, scope)]
    }
    layer = _layers(paths, chosen, tables, report)
    manual = _manual(paths, report, tables, invalid, layer, linked, only)
    servers = [*([] if only else _connectors(paths)), *manual]
    hooks = (
        [] if only else _hooks_of(settings.get("hooks"), "managed", paths.managed_settings, report)
    )
    for scope in (only,) if only else SCOPES:
        file, table = declarations.path_for(paths, scope), tables[scope]
        _ignored_keys(table, file, paths, report)
        hooks += _hooks_of(table.get("hooks"), layer[scope], file, report)
    rules = policy.managed(paths, report.sink)
    _direct_mcp_skills(rules, report)
    blocked = _blocked(paths, rules)
    how = (os.environ if env is None else env, references)
    found = _plugins(paths, report, only, how, blocked)
    layers = Layers(
        managed,
        (*servers, *found.servers),
        (*hooks, *found.hooks),
        tuple(found.skills),
        tuple(found.commands),
        tuple(found.agents),
        found.unconsented,
        (*invalid, *found.dropped),
        binding.project_key(paths.project_dir),
    )
    diagnostics = list(dict.fromkeys(report.diagnostics))  # a file read twice, reported once
    return Scopes(bound(layers, paths), rules, found.rows, diagnostics, found.secrets)


def _direct_mcp_skills(rules: Policy, report: Report) -> None:
    """`disableDirectMcpSkills`: Claude Code reads it from its managed settings itself and
    lists no skill of the MCP servers it connects to directly (each keeps its tools). The
    other agents have no such switch, so plugman cannot deliver it: a warning says so."""
    if not rules.disable_direct_mcp_skills:
        return
    where = next(o for k, v, o in rules.flags if k == "disableDirectMcpSkills" and v)
    report.sink(Path(where)).warning(
        "policy-not-delivered",
        "disableDirectMcpSkills: Claude Code loads no skill of an MCP server it connects to "
        "directly; the other agents have no such switch, so any that reads skills from MCP "
        "servers still does (their tools are delivered to every agent as before)",
        ("disableDirectMcpSkills",),
        "to keep a server's skills from every agent, deny the server (deniedMcpServers)",
    )


def _linked(paths: Paths, chosen: tuple[Scope, ...], report: Report) -> frozenset[Path]:
    """The project's files (plugman.toml, .plugman/local.toml, .mcp.json) reached through a
    symbolic link: a clone can make one lead anywhere (the user's own files included), so they
    are not read, and a warning says so (plugman.config.origins)."""
    files = [declarations.path_for(paths, s) for s in chosen if s != "user"]
    if "project" in chosen:
        files.append(paths.project_mcp)
    found = set()
    for file in files:
        link = origins.link_on_path(paths.project_dir, file)
        if link is not None and os.path.lexists(file):
            found.add(file)
            why = origins.of(paths, file).why
            hint = f"replace {link.name} with a real file or folder, or remove it"
            report.sink(file).warning("project-link", f"{why}; not read", (), hint)
    return frozenset(found)


def _layers(
    paths: Paths, chosen: tuple[Scope, ...], tables: dict[Scope, dict[str, Any]], report: Report
) -> dict[Scope, Layer]:
    """The layer each scope's own entries are read as: its own, but the local scope's file is
    read as the project's when it is not the user's (plugman.config.origins.local: git tracks
    it, another user owns it), which a warning says."""
    found: dict[Scope, Layer] = {scope: scope for scope in chosen}
    declares = tables.get("local", {})
    if "local" not in chosen or not (declares.get("mcp_servers") or declares.get("hooks")):
        return found
    verdict = origins.local(paths)
    if not verdict.consents:
        found["local"] = "project"
        said = "its servers and hooks are the project's, pending approval"
        hint = (
            "review them: plugman trust list; keep your own local settings in a file git does "
            "not track (git rm --cached .plugman/local.toml)"
        )
        report.sink(paths.local_config).warning(
            "project-origin", f"{verdict.why}; {said}", (), hint
        )
    return found


def bound(layers: Layers, paths: Paths) -> Layers:
    """`layers` with each entry that needs approval carrying the digests of the files it runs
    (plugman.config.binding), which its approval covers."""

    project = str(origins.plain(paths.project_dir))

    def runs(entry: ServerEntry, origin: Origin, shell: bool) -> tuple[tuple[str, str], ...]:
        plugin = origin.file if origin.scope == "plugin" else None  # the plugin's root
        return binding.files_run(entry, project, plugin, shell)

    waits = layers.unconsented
    servers = tuple(
        s._replace(runs=runs(s.entry, s.origin, False)) if needs_approval(s.origin, waits) else s
        for s in layers.servers
    )
    hooks = tuple(
        h._replace(runs=runs(h.handler, h.origin, True)) if needs_approval(h.origin, waits) else h
        for h in layers.hooks
    )
    return layers._replace(servers=servers, hooks=hooks)


def _ignored_keys(table: dict[str, Any], file: Path, paths: Paths, report: Report) -> None:
    """Warn about policy and approval keys in a plugman.toml: they count only in the managed
    settings and in plugman's own trust store, never in a file a repository can ship (but for
    the user's own `requiredSignatures`, which can only refuse more: plugman.config.signers)."""
    for key in sorted(table):
        if key == USER_POLICY and file == paths.user_config:
            continue
        if key in POLICY_KEYS:
            hint = f"managed policy is read only from {paths.managed_settings}"
        elif key in APPROVAL_KEYS:
            hint = "approvals are stored outside the project: run plugman trust approve NAME"
        else:
            continue
        report.sink(file).warning("ignored-key", f"key {key!r} is ignored here", (key,), hint)


def _toml(file: Path, report: Report) -> dict[str, Any]:
    if not present(file):
        return {}
    try:
        return declarations.read(file)
    except Exception as exc:  # a PlugmanError naming the file and the TOML problem, or worse
        report.diagnostics += declarations.broken(file, exc)
        return {}


def _servers_of_file(
    file: Path, scope: Layer, report: Report, invalid: list[Dropped]
) -> list[Server]:
    origin = Origin(scope, str(file))
    before = len(report.diagnostics)
    found = [Server(s.name, s.entry, origin) for s in mcp.load_file(file, report)]
    if any(d.severity == ERROR for d in report.diagnostics[before:]):
        names, prefix = unread.declared(file)
        report.diagnostics += unread.left_out(names, prefix, found, origin, report, before, invalid)
    return found


def _servers_of_table(
    value: Any, scope: Layer, file: Path, report: Report, invalid: list[Dropped]
) -> list[Server]:
    if value is None:
        return []
    sink = report.sink(file)
    before = len(report.diagnostics)
    schema.validate(value, "mcp-config.schema.json#/$defs/serverMap", sink, ("mcp_servers",))
    origin = Origin(scope, str(file))
    found = [Server(s.name, s.entry, origin) for s in mcp.servers(value, sink, ("mcp_servers",))]
    names = list(value) if isinstance(value, dict) else None
    report.diagnostics += unread.left_out(
        names, ("mcp_servers",), found, origin, report, before, invalid
    )
    return found


def _manual(
    paths: Paths,
    report: Report,
    tables: dict[Scope, dict[str, Any]],
    invalid: list[Dropped],
    layer: dict[Scope, Layer],
    linked: frozenset[Path],
    only: Scope | None = None,
) -> list[Server]:
    found: list[Server] = []
    mcp_json = paths.project_mcp
    if mcp_json.is_file() and mcp_json not in linked and only in (None, "project"):
        ours = exported.owned(paths, paths.project_mcp, ("mcpServers",))
        found += [
            s
            for s in _servers_of_file(paths.project_mcp, "project", report, invalid)
            if ours.get(s.name) != exported.digest(s.entry)  # plugman's export
        ]
    for scope in (only,) if only else SCOPES:
        file = declarations.path_for(paths, scope)
        value = tables[scope].get("mcp_servers")
        found += _servers_of_table(value, layer[scope], file, report, invalid)
    return found


def _connectors(paths: Paths) -> list[Server]:
    file = connectors_path(paths)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    origin = Origin("claude.ai", str(file))
    return [Server(c["name"], c["entry"], origin) for c in data.get("connectors", [])]


def _hooks_of(
    value: Any,
    scope: Layer,
    file: Path,
    report: Report,
    plugin_id: str | None = None,
    env: dict[str, str] | None = None,
) -> list[Hook]:
    if not isinstance(value, dict):
        return []
    sink = report.sink(file)
    origin = Origin(scope, str(file), plugin_id)
    return [
        Hook(h.event, h.matcher, substitute_hook(h.entry, env), origin)
        for h in hook_files.handlers(value, sink, ("hooks",))
    ]


def _blocked(paths: Paths, rules: Policy) -> Callable[[str], Verdict | None]:
    """Why the managed policy blocks a plugin (`plugman.config.policy_plugins.blocked`: by
    what it is, not how its id is spelled); the registry is read only when a rule speaks."""
    if not policy_plugins.speaks(rules):
        return lambda _plugin_id: None
    known = policy_plugins.markets(paths)
    return lambda plugin_id: policy_plugins.blocked(rules, plugin_id, known)


def consented(scope: Scope, entry: InstalledPlugin) -> bool:
    """Whether someone on this machine chose the plugin (see the module's docstring). User and
    local scopes are only ever written by `plugman install` and `update`."""
    return scope != "project" or entry.consented


def _plugins(
    paths: Paths,
    report: Report,
    only: Scope | None,
    how: tuple[Mapping[str, str], bool],
    blocked: Callable[[str], Verdict | None],
) -> Contributions:
    """Every installed plugin (the highest scope's record wins; with `only`, that scope's
    record alone) and what enabled ones bring; nothing from one managed policy blocks
    (`blocked`: its id and where the rule is), which is a warning."""
    chosen: dict[str, tuple[Scope, InstalledPlugin, InstallRecord]] = {}
    for scope in (only,) if only else sorted(SCOPES, key=PRECEDENCE.index):
        record = InstallRecord.load(paths, scope)
        for plugin_id, entry in record.plugins.items():
            chosen.setdefault(plugin_id, (scope, entry, record))
    found = Contributions([], [], [], [], [], [], {}, [], {})
    secret = _secret_reader(paths, how[0])
    for plugin_id, (scope, entry, record) in sorted(chosen.items()):
        refused = blocked(plugin_id) if entry.enabled else None
        why = f"{refused.why} ({refused.origin})" if refused else ""
        found.rows.append(Installed(plugin_id, entry.version, entry.enabled, scope, why))
        if refused is not None:
            message = f"plugin {plugin_id} is {refused.why}: it is not delivered to any agent"
            hint = f"see {refused.origin}; run: plugman uninstall {plugin_id}"
            report.sink(record.path).warning("policy-blocked", message, (), hint)
        elif entry.enabled:
            if not consented(scope, entry):
                found.unconsented[plugin_id] = entry.content_hash
            stored = record.config.get(plugin_id, {})
            read = _reader(secret, plugin_id, record.path.stem)
            given = Given(stored, read, how[0], how[1])
            contribute(found, paths, plugin_id, entry, report, given, scope)
    return found


def _reader(
    secret: Callable[[str], str | None], plugin_id: str, record: str
) -> Callable[[str], str | None]:
    return lambda key: secret(user_config.store_key(plugin_id, key, record))


def _secret_reader(paths: Paths, env: Mapping[str, str]) -> Callable[[str], str | None]:
    """A reader of the secret store, opened on the first read (most plugins have no secret; an
    unusable store is a warning here, and the values it holds are unset)."""
    opened: list[secrets.Store | None] = []

    def read(key: str) -> str | None:
        if not opened:
            try:
                opened.append(secrets.open_store(paths, env))
            except PlugmanError as exc:
                progress.warn(f"sensitive plugin options are unavailable: {exc}")
                opened.append(None)
        store = opened[0]
        return None if store is None else store.get(key)

    return read
