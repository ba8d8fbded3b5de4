"""Results of install, uninstall, enable, list, lock, lock export, outdated, search, info and
marketplace commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plugman.output import readback
from plugman.output.common import display_path, envelope, verbosity
from plugman.output.versions import catalog_says, change_json, moved, version_line

if TYPE_CHECKING:
    from plugman.agents.readback import Item, Report
    from plugman.core.sources import LockedSource
    from plugman.manifest.diagnostics import Diagnostic
    from plugman.plugins.catalog.failed import Failed
    from plugman.plugins.catalog.listings import Info, Listed, Outdated, SearchHit
    from plugman.plugins.catalog.mcp_registry import RegistryHit
    from plugman.plugins.catalog.registry import Known
    from plugman.plugins.lifecycle.configure import Option
    from plugman.plugins.lifecycle.installed import PluginChange
    from plugman.plugins.supply_chain.lockfile import LockEntry
    from plugman.plugins.supply_chain.sbom import Document


def changes(command: str, done: list[PluginChange], as_json: bool) -> str:
    """What an install, uninstall, enable or disable did."""
    if as_json:
        return envelope(command, changes=[change_json(c) for c in done])
    if not done:
        return "nothing to do"
    level = verbosity()
    if level < 0 or (level == 0 and len(done) > SUMMED_UP_PAST):
        return summed_up(done, names=level >= 0)
    return "\n".join(
        f"{c.action} {c.id} ({c.scope}): "
        + moved(
            c.from_version, c.version, (c.from_pin, c.pin), (c.from_content_hash, c.content_hash)
        )
        if c.from_version is not None
        else f"{c.action} {c.id} {c.version} ({c.scope})"
        for c in done
    )


SUMMED_UP_PAST = 8  # more changes than this are summed up, one line per action (-v: each)


def summed_up(done: list[PluginChange], *, names: bool) -> str:
    """`installed 40 plugins (project): a@m 1.0.0, b@m 2.1.0, ...`, wrapped between plugins
    (-q: the count)."""
    groups: dict[tuple[str, str], list[PluginChange]] = {}
    for change in done:
        groups.setdefault((change.action, change.scope), []).append(change)
    lines = []
    for (action, scope), changes in groups.items():
        count = f"{len(changes)} plugin{'s' if len(changes) > 1 else ''}"
        head = f"{action} {count} ({scope})"
        if not names:
            lines.append(head)
            continue
        line = f"{head}:"
        for n, change in enumerate(changes, 1):
            item = f" {change.id} {change.version}{',' if n < len(changes) else ''}"
            if len(line) + len(item) > 80:
                lines.append(line)
                line = " "
            line += item
        lines.append(line)
    return "\n".join(lines)


def installed(
    rows: list[Listed],
    as_json: bool,
    checked: list[Report] | None = None,
    broken: Sequence[Diagnostic] = (),
) -> str:
    """`plugman list`; with `checked` (`--check`), what each agent said of each plugin; under
    JSON, `broken`: the problems of the declaration files (text shows them on stderr)."""
    said = _by_plugin(checked)
    if as_json:
        plugins = [row.as_json() for row in rows]
        problems = [{**d._asdict(), "file": display_path(d.file)} for d in broken]
        if checked is None:
            return envelope("list", plugins=plugins, diagnostics=problems)
        for doc in plugins:
            doc["checked"] = {
                agent: [item.as_json() for item in items]
                for agent, items in said.get((doc["id"], doc["scope"]), {}).items()
            }
        agents = [r.as_json() for r in checked]
        return envelope("list", plugins=plugins, agents=agents, diagnostics=problems)
    if not rows:
        return "no plugins installed"
    width = max(len(row.id) for row in rows)
    lines = [f"{'plugin':{width}}  {'version':10} {'scope':8} {'enabled':8} content"]
    for row in rows:
        enabled = "yes" if row.enabled else "no"
        lines.append(
            f"{row.id:{width}}  {row.version:10} {row.scope:8} {enabled:8} {row.content_hash[:19]}"
        )
        if row.blocked:
            lines.append(f"{'':{width}}  not delivered: {row.blocked}")
        if row.agents or row.loading:
            lines.append(f"{'':{width}}  agents: {_reached(row)}")
        for agent, items in said.get((row.id, row.scope), {}).items():
            lines += [f"{'':{width}}  {line}" for line in readback.said(agent, items)]
    return "\n".join(lines + readback.summary(checked or []))


def _reached(row: Listed) -> str:
    """Each agent a plugin reached, with what, and whether it loads it (`plugman list`)."""
    said = []
    for agent, kinds in row.agents.items():
        loads = row.loading.get(agent)
        said.append(f"{agent} ({', '.join(kinds)})" + (f" {loads.words()}" if loads else ""))
    said += [f"{a} {loads.words()}" for a, loads in row.loading.items() if a not in row.agents]
    return "; ".join(said)


def _by_plugin(checked: list[Report] | None) -> dict[tuple[str, str], dict[str, list[Item]]]:
    if checked is None:
        return {}
    from plugman.agents.readback import by_plugin  # only when asked: list is a hot command

    return by_plugin(checked)


def markets(
    command: str,
    found: list[Known],
    as_json: bool,
    verb: str = "",
    failed: list[Failed] | None = None,
) -> str:
    """The marketplaces a command lists or changed, then those it could not act on (`failed`)."""
    if as_json:
        extra = {"failed": [f.as_json() for f in failed]} if failed else {}
        return envelope(
            command,
            marketplaces=[
                {
                    "name": m.name,
                    "kind": m.source.kind,
                    "source": m.source.location,
                    "ref": m.source.ref,
                    "root": str(m.root),
                    "commit": m.commit,
                }
                | ({"headersHelper": m.source.helper} if m.source.helper else {})
                for m in found
            ],
            **extra,
        )
    if not found and not failed:
        return "no marketplaces"
    lines = [
        f"{verb + ' ' if verb else ''}{m.name}  {m.source.kind}  {m.source.location}"
        + (f"#{m.source.ref}" if m.source.ref else "")
        for m in found
    ]
    for failure in failed or []:
        lines += failure.lines(f"not {verb or 'read'}")
    return "\n".join(lines)


def locked(pins: list[LockEntry], as_json: bool) -> str:
    """`plugman lock`: the pins written to plugman.lock (its entries, as the file has them)."""
    if as_json:
        return envelope("lock", plugins=[p.fields() for p in pins])
    lines = [f"locked {p.id} {p.version} {p.content_hash[:19]}" for p in pins]
    return "\n".join(lines) or "nothing to lock"


def sbom_written(document: Document, as_json: bool) -> str:
    """`plugman lock export --output FILE`: what was written where."""
    where = display_path(str(document.path))
    if as_json:
        counts = {"plugins": document.plugins, "server_packages": document.packages}
        body = {"path": where, "sbom_format": document.form, "spec": document.spec}
        return envelope("lock export", **body, **counts, remote_servers=document.remote)
    listed = [(document.plugins, "plugin"), (document.packages, "server package")]
    listed += [(document.remote, "remote server")] if document.remote else []
    said = ", ".join(f"{n} {word}{'' if n == 1 else 's'}" for n, word in listed)
    return f"wrote {where} ({document.spec}): {said}"


def outdated(found: list[Outdated], as_json: bool) -> str:
    """`plugman outdated`: what is newer, or why it cannot be checked."""
    if as_json:
        return envelope("outdated", plugins=[row.as_json() for row in found])
    return "\n".join(_outdated_line(row) for row in found) or "everything is up to date"


def searched(
    found: list[SearchHit], query: str, as_json: bool, failed: Sequence[Failed] = ()
) -> str:
    """`plugman search`: one line per catalog entry that matches, then each marketplace that
    could not be searched."""
    if as_json:
        extra = {"failed": [f.as_json() for f in failed]} if failed else {}
        return envelope("search", plugins=[hit.as_json() for hit in found], **extra)
    lines = [
        f"{hit.id} {hit.version or ''}{catalog_says(hit.version, hit.catalog_version)}  "
        f"{hit.description or ''}"
        for hit in found
    ]
    if not lines:
        lines = [f"no plugin matches {query!r}"]
    for failure in failed:
        lines += failure.lines("not searched")
    return "\n".join(lines)


def registry_searched(found: list[RegistryHit], query: str, registry: str, as_json: bool) -> str:
    """`plugman search --registry`: each server, then what it can run as."""
    if as_json:
        return envelope("search", registry=registry, servers=[hit.as_json() for hit in found])
    lines = []
    for hit in found:
        status = f" [{hit.status}]" if hit.status and hit.status != "active" else ""
        lines.append(f"{hit.name} {hit.version}{status}  {hit.description or ''}".rstrip())
        lines += [f"  package {p}" for p in hit.packages]
        lines += [f"  remote  {r}" for r in hit.remotes]
    return "\n".join(lines) or f"no server in {registry} matches {query!r}"


def plugin_info(found: Info, as_json: bool, checked: list[Report] | None = None) -> str:
    """`plugman info`: version, source in words, components and where it is installed; with
    `checked` (`--check`), what each agent said of it."""
    if checked is not None:  # only what the agents said of this plugin
        checked = [r._replace(items=[i for i in r.items if i.plugin == found.id]) for r in checked]
    said = _by_plugin(checked)
    mine = {
        scope: said.get((found.id, scope), {}) for scope in found.installed if checked is not None
    }
    if as_json:
        if checked is None:
            return envelope("info", plugin=found.as_json())
        doc = {
            **found.as_json(),
            "checked": {
                scope: {a: [i.as_json() for i in items] for a, items in agents.items()}
                for scope, agents in mine.items()
            },
        }
        return envelope("info", plugin=doc, agents=[r.as_json() for r in checked])
    lines = [f"{found.id} {found.version or '(no version)'}"]
    if found.description:
        lines.append(f"  {found.description}")
    lines += version_line(found)
    lines.append(f"source:     {source_words(found.source, found.marketplace)}")
    lines.append(f"components: {_components(found.components)}")
    if found.refused:
        lines.append(f"refused:    install would refuse it: {found.refused}")
    scopes = [
        f"{scope} {version}" + ("" if found.enabled[scope] else " (disabled)")
        for scope, version in found.installed.items()
    ]
    lines.append(f"installed:  {', '.join(scopes) or 'no'}")
    for scope, agents in mine.items():
        for agent, items in agents.items():
            lines += [f"  {scope}: {line}" for line in readback.said(agent, items)]
    return "\n".join(lines + readback.summary(checked or []))


def source_words(source: LockedSource | None, marketplace: str | None) -> str:
    """Where a plugin comes from, as a sentence fragment (a lock-file source), in its source
    kind's words."""
    if not source:
        return "unknown (its marketplace gives none)"
    from plugman.plugins.catalog.pins import describe  # lazy: not loaded by `plugman list` (empty)

    return describe(source, marketplace if marketplace != "direct" else None)


def _components(components: dict[str, list[str]] | None) -> str:
    if components is None:
        return "known once installed"
    label = {"mcpServers": "MCP servers"}
    parts = [f"{label.get(k, k)} {', '.join(names)}" for k, names in components.items() if names]
    return "; ".join(parts) or "none"


def _outdated_line(row: Outdated) -> str:
    head = f"{row.id} ({row.scope}): "
    if row.problem:
        hint = f"\n  hint: {row.hint}" if row.hint else ""
        return f"{head}{row.version}: {row.problem}{hint}"
    hashes = (row.content_hash, row.available_hash)
    said = moved(row.version, row.available, (row.pin, row.available_pin), hashes)
    if row.downgrade:  # plugman.plugins.lifecycle.rollback: update refuses it
        return (
            f"{head}DOWNGRADE {said}: {row.downgrade}; update refuses it "
            f"(plugman update --allow-downgrade {row.id} takes it)"
        )
    return head + said


def configured(rows: list[Option], as_json: bool) -> str:
    """A plugin's userConfig options and which are set; never a sensitive value."""
    if as_json:
        return envelope("configure", options=[row.as_json() for row in rows])
    if not rows:
        return "this plugin has no options"
    lines = []
    for row in rows:
        shown = row.state if row.sensitive or row.value is None else f"{row.state}: {row.value}"
        flags = ", ".join(
            f for f, on in (("required", row.required), ("sensitive", row.sensitive)) if on
        )
        lines.append(f"{row.key} ({row.type}{', ' + flags if flags else ''})  {shown}")
        lines.append(
            f"    {row.title}: {row.description}" if row.description else f"    {row.title}"
        )
    return "\n".join(lines)
