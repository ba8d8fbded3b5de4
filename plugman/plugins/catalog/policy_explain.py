"""`plugman policy explain PLUGIN|SERVER|MARKETPLACE`: the managed policy's verdict on one
thing, the rule that decided it and the file (and key path) it is written in
(docs/claude-format.md#organization-policy).

The policy is plugman's managed-settings.toml and Claude Code's managed settings, combined
(`plugman.config.policy.managed`). What is named is read as a plugin when it has an `@`, as a
marketplace when a known marketplace has that name or it is a marketplace source (a folder, a
git or https URL, owner/repo), and otherwise as an MCP server (the resolved server of that name,
or a name alone).

With `--tool`, `--group` or `--gateway` (`gateway`), it is the gateway's question instead: may a
caller in these groups use this server, or this tool of it, through `plugman mcp serve`
(managed `gatewayAccess`, plugman.config.gateway_access)? The tool is the server's own name for
it (`--tool`), or the subject is the gateway's listed name `SERVER__TOOL`, read back to the
served server whose prefix it starts with.
"""

from __future__ import annotations

import os
from typing import Literal, NamedTuple

from plugman.config import claude_policy, gateway_access, policy, scopes
from plugman.config.policy import Policy, Verdict
from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import ServerEntry
from plugman.core.paths import Paths
from plugman.plugins.catalog import registry
from plugman.runtime.gateway.naming import gateway_prefix

Kind = Literal["plugin", "server", "marketplace", "gateway"]
NO_RULE = "no managed rule speaks of it"


class Explained(NamedTuple):
    subject: str
    kind: Kind
    allowed: bool
    why: str  # the rule that decided
    origin: str  # the file and key path it is written in ("" for none)
    notes: tuple[str, ...] = ()  # what else the policy does to it
    files: tuple[str, ...] = ()  # the managed files read
    tool: str | None = None  # gateway: the tool asked about (None: the server itself)
    groups: tuple[str, ...] = ()  # gateway: the caller's groups


def explain(paths: Paths, subject: str) -> Explained:
    rules = policy.managed(paths)
    files = _files(paths)
    known = registry.known(paths)
    if "@" in subject and not subject.startswith(("git@", "http")):
        return _plugin(paths, subject, rules, known)._replace(files=files)
    if subject in known:
        source = known[subject].source
        found = _market(source.kind, source.location, source.ref, rules)
        return found._replace(subject=subject, files=files)
    server = _server(paths, subject, rules)
    if server is not None:
        return server._replace(files=files)
    try:
        source = registry.classify(subject, paths.project_dir)
    except PlugmanError:
        verdict = policy.server_verdict(subject, {}, rules, os.environ)
        return _made(subject, "server", verdict)._replace(files=files)
    found = _market(source.kind, source.location, source.ref, rules)
    return found._replace(subject=subject, files=files)


def gateway(paths: Paths, subject: str, tool: str | None, groups: tuple[str, ...]) -> Explained:
    """Whether a caller in `groups` may use `tool` of server `subject` through the gateway
    (None: the server itself, its prompts and resources), the gatewayAccess rule that decided
    and where it is written; a server the gateway does not serve at all is noted."""
    rules = policy.managed(paths)
    found = scopes.load(paths)
    served = [s.name for s in (*(found.layers.managed or ()), *found.layers.servers)]
    server, notes = subject, []
    if tool is None and subject not in served:
        server, tool = _split(subject, served)
        if tool is not None:
            notes.append(
                f"read as tool {tool!r} of server {server!r} (the gateway's listed name; where "
                "the gateway changed a tool's name, give its own with --tool)"
            )
    where = str(paths.managed_settings)
    verdict = gateway_access.verdict(rules.gateway_access, groups, server, tool, where)
    refused = _server(paths, server, rules)
    if refused is not None and not refused.allowed:
        notes.append(f"the gateway does not serve it: {refused.why}")
    elif server not in served:
        notes.append("no resolved server has this name here")
    files = _files(paths)
    return Explained(
        server, "gateway", verdict.allowed, verdict.why, verdict.origin, tuple(notes), files
    )._replace(tool=tool, groups=groups)


def _split(subject: str, served: list[str]) -> tuple[str, str | None]:
    """(server, tool) of a gateway tool name `SERVER__TOOL`: the served server with the longest
    prefix it starts with; (subject, None) when none."""
    found = [
        (len(prefix), name, subject[len(prefix) :])
        for name in served
        if subject.startswith(prefix := gateway_prefix(name)) and len(subject) > len(prefix)
    ]
    if not found:
        return subject, None
    _, server, tool = max(found)
    return server, tool


def _files(paths: Paths) -> tuple[str, ...]:
    own = [f for f in (paths.managed_settings, *paths.managed_mcp_files()) if f.is_file()]
    claude = [str(file) for file, _ in claude_policy.documents(paths)]
    return tuple(dict.fromkeys([*map(str, own), *claude]))


def _made(subject: str, kind: Kind, verdict: Verdict | None) -> Explained:
    if verdict is None:
        return Explained(subject, kind, True, NO_RULE, "")
    return Explained(subject, kind, verdict.allowed, verdict.why, verdict.origin)


def _market(kind: str, location: str, ref: str | None, rules: Policy) -> Explained:
    verdict = policy.marketplace_verdict(kind, location, ref, rules)
    return _made(location, "marketplace", verdict)


def _plugin(
    paths: Paths, subject: str, rules: Policy, known: dict[str, registry.Known]
) -> Explained:
    notes = []
    if rules.allow_managed_hooks_only:
        rule = rules.plugin_rule(subject)
        if rule is None or not rule.enabled:  # a forced plugin's hooks are managed ones
            where = next((o for k, v, o in rules.flags if k == "allowManagedHooksOnly" and v), "")
            notes.append(f"its hooks do not run: allowManagedHooksOnly ({where})")
    market = known.get(subject.partition("@")[2])
    verdict = None
    if market is not None:
        source = market.source
        verdict = policy.marketplace_verdict(source.kind, source.location, source.ref, rules)
        if verdict is not None and not verdict.allowed:
            why = f"its marketplace {market.name} is {verdict.why}"
            return Explained(subject, "plugin", False, why, verdict.origin, tuple(notes))
    rule = rules.plugin_rule(subject)
    if rule is not None:
        why = "enabledPlugins: " + ("forced on (sync installs it)" if rule.enabled else "blocked")
        return Explained(subject, "plugin", rule.enabled, why, rule.origin, tuple(notes))
    if verdict is not None and market is not None:  # its marketplace is allowed by name
        why = f"its marketplace {market.name} is {verdict.why}"
        return Explained(subject, "plugin", True, why, verdict.origin, tuple(notes))
    return Explained(subject, "plugin", True, NO_RULE, "", tuple(notes))


def _server(paths: Paths, name: str, rules: Policy) -> Explained | None:
    """The verdict on the resolved server `name` (any scope, a plugin's, a managed one)."""
    found = scopes.load(paths)
    servers = [*(found.layers.managed or ()), *found.layers.servers]
    server = next((s for s in servers if s.name == name), None)
    if server is None:
        return None
    entry: ServerEntry = server.entry
    made = _made(name, "server", policy.server_verdict(name, entry, rules, os.environ))
    exclusive = paths.managed_mcp_files()
    if made.allowed and exclusive and server.origin.scope != "managed":
        files = ", ".join(map(str, exclusive))
        return made._replace(allowed=False, why="managed-mcp.json is present", origin=files)
    return made
