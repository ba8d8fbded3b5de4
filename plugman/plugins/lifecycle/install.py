"""Installing plugins into a scope's record, in the session of the command that installs
(`plugman install`: plugman.commands.install; uninstall: plugman.plugins.lifecycle.uninstall): the
store trees, the scope's record, the declaration file and, for the project, plugman.lock, journaled
and committed together, or all rolled back.
"""

from __future__ import annotations

import os

from plugman.config import declarations, user_config
from plugman.core.errors import PlugmanError, UsageError
from plugman.core.session import Session
from plugman.core.state import InstalledPlugin, InstallRecord, PluginContent
from plugman.manifest.model import Plugin
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.lifecycle import configure
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.lifecycle.installed import PluginChange, save
from plugman.plugins.supply_chain import signing


def install_planned(
    work: Session,
    record: InstallRecord,
    planned: list[resolver.Planned],
    config: list[str],
    ask: configure.Ask | None,
) -> list[PluginChange]:
    """Install what `resolver.plan` chose into `record`'s scope, in the caller's session, its
    options' secrets set around it (`configure.writing`); the agents are not deployed to
    (plugman.plugins.importing.claude deploys once, after several scopes)."""
    writes = options(record, [p for p in planned if not p.required_by], config, ask)
    with configure.writing(work.paths, os.environ, writes):
        return add_planned(work, record, planned)


def add_planned(
    work: Session, record: InstallRecord, planned: list[resolver.Planned]
) -> list[PluginChange]:
    """The trees, the record, the declaration and, for the project, the marketplaces it names
    and plugman.lock, for what `resolver.plan` chose; inside `configure.writing` of the
    plugins' `options`."""
    changes = [_add(work, record, p, explicit=not p.required_by) for p in planned]
    declare(work, record, {p.id: p.specifier or "*" for p in planned if not p.required_by})
    if record.scope == "project":
        for name in dict.fromkeys(p.marketplace for p in planned):
            if name != resolver.DIRECT:
                _declare_marketplace(work, record, name)
    save(work, record)
    return changes


def options(
    record: InstallRecord,
    named: list[resolver.Planned],
    pairs: list[str],
    ask: configure.Ask | None,
) -> list[configure.Writes]:
    """Each named plugin's userConfig values checked and put into `record`; the secret store's
    writes. A KEY goes to every named plugin that has that option; one none has is an error."""
    given = user_config.parse_pairs(pairs, ", ".join(p.id for p in named) or "install")
    keys = {p.id: {o.key for o in p.plugin.user_config} for p in named}
    stray = sorted(k for k in given if not any(k in mine for mine in keys.values()))
    if stray and len(named) == 1:  # the plugin's own check names it, and what it has
        keys[named[0].id] |= set(stray)
    elif stray:
        known = "; ".join(f"{i}: {', '.join(sorted(k)) or 'none'}" for i, k in keys.items())
        message = f"no plugin installed here has the option(s) {', '.join(stray)}"
        raise UsageError(message, hint=f"options: {known or 'none'}")
    return [
        configure.apply(
            record,
            p.id,
            p.plugin,
            {k: v for k, v in given.items() if k in keys[p.id]},
            ask=ask,
        )
        for p in named
        if p.plugin.user_config or keys[p.id]
    ]


def _add(
    work: Session, record: InstallRecord, planned: resolver.Planned, explicit: bool
) -> PluginChange:
    content_hash = work.tx.add_tree(planned.tree)
    previous = record.plugins.get(planned.id)
    signer = planned.signer
    if previous is not None and previous.signer is not None:  # installed again: its pin holds
        signer = signing.pinned(previous.signer, signing.Admitted(signer, planned.signers))
        refused = signing.changed(planned.id, previous.signer, signer)
        if refused is not None:
            raise PlugmanError(refused.message, hint=f"{refused.hint} (or uninstall it first)")
    record.plugins[planned.id] = InstalledPlugin.made(
        content_of(planned),
        content_hash,
        previous,
        explicit=explicit or (previous is not None and previous.explicit),
        # installed here by hand: its servers and hooks run (plugman.config.scopes)
        consented=True,
        required_by=(*(previous.required_by if previous else ()), *planned.required_by[-1:]),
        declared=previous.declared if previous else None,
        hidden_text="allowed" if planned.hidden_text else None,
        signer=signer,
        released=planned.released,
    )
    return PluginChange("installed", planned.id, planned.version, record.scope, content_hash)


def content_of(planned: resolver.Planned) -> PluginContent:
    """What installing `planned` records of its content."""
    p = planned
    return PluginContent(p.name, p.marketplace, p.version, p.source, p.entry, components(p.plugin))


def components(plugin: Plugin) -> dict[str, list[str]]:
    """What a plugin brings, by kind, as `list` shows it."""
    return {
        "skills": sorted(skill.name for skill in plugin.skills),
        "commands": sorted(path.stem for path in plugin.commands),
        "agents": sorted(path.stem for path in plugin.agents),
        "hooks": sorted({hook.event for hook in plugin.hooks}),
        "mcpServers": sorted(server.name for server in plugin.mcp_servers),
    }


def declare(work: Session, record: InstallRecord, wanted: dict[str, str]) -> None:
    """Add `plugin_id = specifier` for each of `wanted` to the scope's plugman.toml, in one
    edit, unless it is declared already (then what is there stays, and is what uninstall
    expects to find)."""
    current = declarations.declared(work.paths, record.scope, "plugins") if wanted else {}
    for plugin_id, specifier in wanted.items():
        declared = current.get(plugin_id, specifier)
        record.plugins[plugin_id] = record.plugins[plugin_id]._replace(declared=declared)
    new = {plugin_id: spec for plugin_id, spec in wanted.items() if plugin_id not in current}
    if new:
        declarations.set_entries(work.tx, work.paths, record, "plugins", new)


def _declare_marketplace(work: Session, record: InstallRecord, name: str) -> None:
    """Name the marketplace in the project's plugman.toml, so `plugman sync` finds it anywhere."""
    known = registry.known(work.paths).get(name)
    if known is not None and marketplaces.declare(work, record, name, known.source):
        record.declared_marketplaces.append(name)
