"""`plugman import claude`: a Claude Code user's marketplaces and installed plugins, made
plugman's.

`plan` reads Claude's own state (`<claude config>/plugins/known_marketplaces.json` and
`installed_plugins.json`, the `extraKnownMarketplaces` and `enabledPlugins` of the user's
`settings.json` and the project's `.claude/settings.json` and `.claude/settings.local.json`;
`CLAUDE_CONFIG_DIR` relocates `~/.claude`) and says, per marketplace and per plugin and scope,
what importing does, or why it cannot (a source plugman cannot add, a name that is not a safe
folder name, a marketplace the policy blocks, one registered in plugman from another source, a
plugin another project installed). `applied` does it in the caller's session (`import claude
--apply`, plugman.commands.claude_import, which then rewrites the linked agents' files): the
marketplaces registered, the plugins installed in their scopes with their enabled state, and
what it added recorded in `<state>/claude-import.json`, which `undo` reads
to take exactly that away again (and nothing a later command added). A plugin's option values
come from Claude's user settings (`pluginConfigs`), checked against its `userConfig` as
`install --config` checks them; the sensitive ones Claude keeps in its credential store are not
read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from plugman.agents import claude_own, links
from plugman.config import claude_settings, declarations, origins
from plugman.config.claude_source import ClaudeSource
from plugman.core.errors import PlugmanError
from plugman.core.fs import read_bytes
from plugman.core.jsonvalue import PluginFields
from plugman.core.paths import Paths
from plugman.core.session import Session
from plugman.core.state import SCOPES, InstallRecord, Scope, as_scope
from plugman.plugins.catalog import marketplaces, registry
from plugman.plugins.importing import retire as claude_retire
from plugman.plugins.importing.retire import DISABLE, KEEP, UNINSTALL, Retire, Retirement
from plugman.plugins.lifecycle import planner as resolver
from plugman.plugins.lifecycle.install import install_planned
from plugman.plugins.lifecycle.installed import PluginChange, save

OWN_PREFIX = "plugman-"  # the marketplaces plugman's native delivery declares in Claude
NOT_MARKETPLACE = "skills-dir"  # Claude's name for plugins found in a skills folder


class MarketStep(NamedTuple):
    name: str
    source: str  # the source in words
    action: str  # add | known | skip
    reason: str = ""
    text: str = ""  # what `marketplace add` takes
    helper: str | None = None  # a url marketplace's headers helper (Claude's `headersHelper`)
    origin: str = "user"  # "project": named by the project's settings (never forced consent)


class PluginStep(NamedTuple):
    id: str
    scope: Scope
    enabled: bool
    action: str  # install | installed | skip
    reason: str = ""
    options: tuple[str, ...] = ()  # KEY=VALUE: its options in Claude's user settings


class Plan(NamedTuple):
    claude_dir: Path
    marketplaces: list[MarketStep]
    plugins: list[PluginStep]
    notes: tuple[str, ...] = ()  # what was not taken as the user's, and why
    retire: tuple[Retire, ...] = ()  # Claude's own installs the plugman copies replace


class Imported(NamedTuple):
    plan: Plan
    applied: bool
    changes: list[PluginChange]


def claude_dir(env: Mapping[str, str]) -> Path:
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given) if given else Path(env.get("HOME") or Path.home()) / ".claude"


def record_path(paths: Paths) -> Path:
    return paths.state_dir / "claude-import.json"


def plan(
    paths: Paths, env: Mapping[str, str], scopes: tuple[Scope, ...] = SCOPES, keep: bool = False
) -> Plan:
    """What importing Claude's state in `scopes` would do; reads, changes nothing. With `keep`,
    Claude's own installs of what it imports stay (and plugman gives Claude no copy of them)."""
    home = claude_dir(env)
    read = claude_settings.read
    declarations.check_project_file(paths, claude_settings.settings_file(paths))
    local, notes = _local_settings(paths)
    settings = {
        "user": read(home / "settings.json"),
        "project": read(claude_settings.settings_file(paths)),
        "local": local,
    }
    theirs = bool(notes)  # the local settings are the project's: they enable nothing
    sources: dict[str, ClaudeSource] = {}
    came: dict[str, Scope] = {}  # which settings file each source was taken from
    for scope in reversed([s for s in SCOPES if s in scopes]):  # user's wins, as Claude's
        found = claude_settings.marketplaces(settings[scope])
        sources |= found
        came |= dict.fromkeys(found, scope)
    known = read(home / "plugins" / "known_marketplaces.json")
    mine = {
        str(n): ClaudeSource.of(v["source"])
        for n, v in known.items()
        if isinstance(v, dict) and isinstance(v.get("source"), dict)
    }
    sources |= mine
    came |= dict.fromkeys(mine, "user")
    markets = [
        _market(paths, name, source, came.get(name, "user"))
        for name, source in sorted(sources.items())
        if not name.startswith(OWN_PREFIX)
    ]
    installed = read(home / "plugins" / "installed_plugins.json").get("plugins")
    usable = {m.name: m for m in markets}
    steps = []
    for plugin_id, entries in sorted((installed if isinstance(installed, dict) else {}).items()):
        for entry in entries if isinstance(entries, list) else []:
            at = as_scope(str(entry.get("scope"))) if isinstance(entry, dict) else None
            if at is not None and at in scopes:
                enabled = claude_settings.enabled_plugins(settings[at]).get(plugin_id) is True
                refused = enabled and theirs and at == "local"
                step = _plugin(paths, plugin_id, at, entry, enabled and not refused, usable)
                if refused and step.action == "install":
                    step = step._replace(reason=_not_yours(plugin_id))
                steps.append(
                    step._replace(options=claude_settings.options(settings["user"], plugin_id))
                )
    retire = _retire(paths, home, steps, keep, bool(notes))
    return Plan(home, markets, steps, notes, retire)


def _retire(
    paths: Paths, home: Path, steps: list[PluginStep], keep: bool, theirs: bool
) -> tuple[Retire, ...]:
    """Claude's own install of each plugin imported into a scope Claude Code is linked at
    (where plugman then gives Claude its copy): retired, or kept when asked or when the file
    that would turn it off is not the user's."""
    linked = {link.scope for link in links.every(paths) if link.agent == CLAUDE}
    own = {(i.id, i.scope): i for i in claude_own.installs(home, paths.project_dir)}
    found = []
    for step in steps:
        install = own.get((step.id, step.scope))
        if step.action == "skip" or step.scope not in linked or install is None:
            continue
        how = DISABLE if step.scope == "project" else UNINSTALL
        settings = {
            "user": home / "settings.json",
            "project": origins.claude_local(paths),
            "local": origins.claude_local(paths),
        }[step.scope]
        reason = ""
        if theirs and step.scope != "user":
            reason = f"{LOCAL_FILE} is not yours here, so plugman does not edit it"
        found.append(Retire(step.id, step.scope, KEEP if keep or reason else how, settings,
                            install.record, reason))  # fmt: skip
    return tuple(found)


CLAUDE = "claude-code"
LOCAL_FILE = ".claude/settings.local.json"


def _not_yours(plugin_id: str) -> str:
    return (
        f"the project's {LOCAL_FILE} enables it, not you: if you want it, run: plugman enable "
        f"{plugin_id} --scope local"
    )


def _local_settings(paths: Paths) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Claude's local settings when they are the user's (`origins.personal`: not tracked by
    git, no link on the path, the user's own); else what they ask for is the project's (read,
    never through a link), and a note says why."""
    file = origins.claude_local(paths)
    verdict = origins.of(paths, file)
    if verdict.consents:
        return claude_settings.read(file), ()
    linked = origins.link_on_path(paths.project_dir, file) is not None
    said = "not read" if linked else "the plugins it enables are imported disabled and its "
    said += "" if linked else "marketplaces' headers helpers are not run"
    return ({} if linked else claude_settings.read(file)), (f"{verdict.why}; {said}",)


def _market(paths: Paths, name: str, source: ClaudeSource, came: Scope) -> MarketStep:
    """What to do with one of Claude's marketplaces. A headers helper named by the project's
    `.claude/settings.json` or `settings.local.json` (files a clone can bring) is a command
    the project chose: plugman never runs it, so that marketplace is skipped with the command
    that adds it knowingly."""
    text, words = source.text()
    if text is None:
        return MarketStep(name, words, "skip", f"plugman cannot add {words}")
    helper = source.helper
    if helper and came != "user":
        file = ".claude/settings.json" if came == "project" else LOCAL_FILE
        return MarketStep(
            name,
            words,
            "skip",
            f"the project's {file} names the headers helper `{helper}`; plugman does not run "
            "a command a project names: if you trust it, add it yourself: plugman marketplace "
            f"add {text} --name {name} --headers-helper '{helper}'",
        )
    try:
        classified = registry.classify(text, paths.project_dir, helper)
        registry.check_name(name, classified, given=True)  # before the name is a folder
        registry.check_policy(paths, classified)
    except PlugmanError as error:
        return MarketStep(name, words, "skip", error.message)
    mine = registry.known(paths).get(name)
    if mine is None:  # a clone's .claude/settings(.local).json: registered as the project's
        origin = "user" if came == "user" else "project"
        return MarketStep(name, words, "add", text=text, helper=helper, origin=origin)
    if mine.source[:2] == classified[:2] and mine.source.ref == classified.ref:
        return MarketStep(name, words, "known", text=text, helper=helper)
    return MarketStep(
        name, words, "skip", f"plugman has a marketplace {name!r} from {mine.source.location}"
    )


def _plugin(
    paths: Paths,
    plugin_id: str,
    scope: Scope,
    entry: PluginFields,
    enabled: bool,
    markets: dict[str, MarketStep],
) -> PluginStep:
    market = _market_of(plugin_id)
    where = entry.get("projectPath")
    if market == NOT_MARKETPLACE or not market:
        return PluginStep(plugin_id, scope, enabled, "skip", "not from a marketplace")
    if scope != "user" and (
        not isinstance(where, str) or Path(where).resolve() != paths.project_dir.resolve()
    ):
        reason = f"installed for another project ({where}): run the import there"
        return PluginStep(plugin_id, scope, enabled, "skip", reason)
    step = markets.get(market)
    if step is None or step.action == "skip":
        reason = f"its marketplace {market!r} " + (
            "is not known to Claude" if step is None else "cannot be added"
        )
        return PluginStep(plugin_id, scope, enabled, "skip", reason)
    if plugin_id in InstallRecord.load(paths, scope).plugins:
        return PluginStep(plugin_id, scope, enabled, "installed", "already installed in plugman")
    return PluginStep(plugin_id, scope, enabled, "install")


def applied(work: Session, found: Plan) -> Imported:
    """Do what `found` says, in `work`; recorded for `undo`. The caller redeploys after
    (plugman.commands.claude_import.apply): Claude's own installs, retired here, no longer keep
    plugman's out."""
    paths = work.paths
    added: list[str] = []
    changes: list[PluginChange] = []
    markets = []
    for step in found.marketplaces:
        if step.action == "add":
            source = registry.classify(step.text, paths.project_dir, step.helper)
            try:
                marketplaces.add_in(work, source, step.name, origin=step.origin)
            except PlugmanError as error:  # fetched before anything is written
                step = step._replace(action="skip", reason=error.message)
            else:
                added.append(step.name)
        markets.append(step)
    usable = {m.name for m in markets if m.action != "skip"}
    plugins = [
        p._replace(action="skip", reason=f"its marketplace {_market_of(p.id)!r} was not added")
        if p.action == "install" and _market_of(p.id) not in usable
        else p
        for p in found.plugins
    ]
    for scope in SCOPES:
        if any(p.scope == scope and p.action == "install" for p in plugins):
            changes += _install_scope(work, scope, plugins)
    kept = {(p.id, p.scope) for p in plugins if p.action != "skip"}
    retire = tuple(r for r in found.retire if (r.id, r.scope) in kept)
    retired = claude_retire.apply(work.tx, found.claude_dir, list(retire))
    _remember(work.tx, paths, added, [p for p in plugins if p.action == "install"], retired)
    done = found._replace(marketplaces=markets, plugins=plugins, retire=retire)
    return Imported(done, True, changes)


def _install_scope(work: Session, scope: Scope, plugins: list[PluginStep]) -> list[PluginChange]:
    """Install the steps of `scope` one at a time (each with its own options), in `work`; a
    plugin its marketplace no longer offers (found while planning, before anything is
    written) becomes a skipped step in `plugins`, in place."""
    record = InstallRecord.load(work.paths, scope)
    changes: list[PluginChange] = []
    for index, p in enumerate(plugins):
        if p.scope != scope or p.action != "install":
            continue
        spec = resolver.PluginRequest(p.id, p.id.partition("@")[0], _market_of(p.id))
        try:
            planned = resolver.plan(work.paths, work.store, [spec], record.plugins)
        except PlugmanError as error:
            plugins[index] = p._replace(action="skip", reason=error.message)
            continue
        changes += install_planned(work, record, planned, list(p.options), None)
        if not p.enabled:
            record.plugins[p.id] = record.plugins[p.id]._replace(enabled=False)
    save(work, record)
    return changes


def _market_of(plugin_id: str) -> str:
    return plugin_id.partition("@")[2]


def _remember(
    tx: Any, paths: Paths, added: list[str], plugins: list[PluginStep], retired: Retirement
) -> None:
    if not added and not plugins and not retired.entries:
        return
    before = recorded(paths) or ImportRecord()
    project = str(paths.project_dir)
    now = [ImportedPlugin(p.id, p.scope, project if p.scope != "user" else None) for p in plugins]
    body = ImportRecord(
        before.retired + ((retired,) if retired.entries else ()),
        before.marketplaces + tuple(added),
        before.plugins + tuple(now),
    )
    tx.write(record_path(paths), (json.dumps(body.to_json(), indent=2) + "\n").encode())


class ImportedPlugin(NamedTuple):
    """A plugin an import installed: its id, scope and (not user scope) project folder."""

    id: str
    scope: Scope
    project: str | None = None

    def to_json(self) -> dict[str, str]:
        found = {"id": self.id, "scope": self.scope}
        return found | ({"project": self.project} if self.project is not None else {})


class ImportRecord(NamedTuple):
    """`<state>/claude-import.json`: what the imports added, which `undo` takes away (read once
    by `recorded`, written with `to_json` as the file always was)."""

    retired: tuple[Retirement, ...] = ()
    marketplaces: tuple[str, ...] = ()
    plugins: tuple[ImportedPlugin, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "format": 1,
            "retired": [item.to_json() for item in self.retired],
            "marketplaces": list(self.marketplaces),
            "plugins": [item.to_json() for item in self.plugins],
        }

    @classmethod
    def from_json(cls, body: object) -> ImportRecord:
        """The record as `to_json` wrote it; ValueError for any other shape."""
        if not isinstance(body, dict):
            raise ValueError("not a JSON object")
        retired, names, plugins = (body.get(key, []) for key in cls._fields)
        if not all(isinstance(v, list) for v in (retired, names, plugins)):
            raise ValueError("a table is not a list")
        if not all(isinstance(name, str) for name in names):
            raise ValueError("a marketplace is not a name")
        return cls(
            tuple(Retirement.from_json(item) for item in retired),
            tuple(names),
            tuple(_imported(item) for item in plugins),
        )


def _imported(item: object) -> ImportedPlugin:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        raise ValueError("a plugin is not an object with an id")
    scope = as_scope(str(item.get("scope")))
    project = item.get("project")
    if scope is None or not isinstance(project, (str, type(None))):
        raise ValueError("a plugin's scope or project is not one plugman writes")
    return ImportedPlugin(item["id"], scope, project)


def recorded(paths: Paths) -> ImportRecord | None:
    """The import record, None when there is none; any other shape is an error naming it."""
    data = read_bytes(record_path(paths))
    if data is None:
        return None
    try:
        return ImportRecord.from_json(json.loads(data))
    except ValueError:
        raise PlugmanError(
            "the record of the last Claude import cannot be read",
            where=str(record_path(paths)),
            hint="undo it by hand (plugman uninstall, plugman marketplace remove), then "
            "delete the file",
        ) from None


def undo_commands(paths: Paths) -> list[str]:
    """The commands that take the recorded import away, in order (what `undo` runs)."""
    body = recorded(paths) or ImportRecord()
    found = [
        "plugman "
        + (f"--project {p.project} " if p.project else "")
        + f"uninstall {p.id} --scope {p.scope}"
        for p in reversed(body.plugins)
    ]
    found += [f"plugman marketplace remove {name}" for name in reversed(body.marketplaces)]
    return found + [
        f"give Claude Code back its own install {e.id} ({e.scope})"
        for retired in reversed(body.retired)
        for e in reversed(retired.entries)
    ]
