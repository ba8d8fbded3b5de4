"""`plugman agents add|remove`: declare agents in a scope's plugman.toml (`[agents]`, plugman.
agents.links) or take them out, and deploy to them or take plugman's entries out of their
files, in one transaction (plugman.agents.deploy.refresh). An agent linked through the gateway
is linked in one scope only."""

from __future__ import annotations

from collections.abc import Mapping

from plugman import extensions
from plugman.agents import handedits, links
from plugman.agents.deploy import Deployed, refresh
from plugman.agents.links import Link
from plugman.config import declarations
from plugman.core import progress
from plugman.core.errors import UsageError
from plugman.core.paths import Paths
from plugman.core.session import session
from plugman.core.state import InstallRecord, Scope


def link(
    paths: Paths,
    names: list[str],
    scope: Scope,
    env: Mapping[str, str],
    via_gateway: bool = False,
    notify: bool = False,
) -> list[Deployed]:
    """`plugman agents add`: declare the agents in `scope` and deploy to them, one transaction;
    `notify`: each with the update notice hook (plugman.runtime.launch.notices)."""
    links.check(names, scope, _scopes())
    _one_gateway(paths, names, scope, via_gateway)
    with session(paths) as work:
        record = InstallRecord.load(paths, scope)
        for name in names:
            value = Link(name, scope, via_gateway, notify).declaration()
            declarations.set_entry(work.tx, paths, record, links.TABLE, name, value)
        work.tx.write(record.path, record.to_bytes())
        done = refresh(work, env)
    return [d for d in done if d.link.agent in names and d.link.scope == scope]


def unlink(
    paths: Paths, names: list[str], scope: Scope, env: Mapping[str, str], force: bool = False
) -> list[Deployed]:
    """`plugman agents remove`: take plugman's entries out of the agents' `scope` files and
    their declaration out of `scope`, one transaction; entries the user has edited since stay
    only with `force` (`handedits`), with a warning each."""
    links.check(names, scope, _scopes())
    declared = {link.agent for link in links.linked(paths, scope)}
    missing = [n for n in names if n not in declared]
    if missing:
        raise UsageError(
            f"{', '.join(missing)} is not linked in the {scope} scope",
            hint="see what is linked: plugman agents list",
        )
    with session(paths) as work:
        for name in names:
            found = handedits.for_export(paths, name, scope)
            for note in handedits.refuse(found, f"unlinking {name}", force):
                progress.warn(note)
        record = InstallRecord.load(paths, scope)
        for name in names:
            declarations.drop_entry(work.tx, paths, record, links.TABLE, name)
        work.tx.write(record.path, record.to_bytes())
        done = refresh(work, env, unlink=[Link(name, scope) for name in names])
    return done[: len(names)]


def _one_gateway(paths: Paths, names: list[str], scope: Scope, via_gateway: bool) -> None:
    """A gateway serves every scope's servers, so an agent linked through it is linked in that
    one scope only: otherwise it would get each server twice."""
    for link in links.every(paths):
        if link.agent in names and link.scope != scope and (via_gateway or link.via_gateway):
            raise UsageError(
                f"{link.agent} is already linked in the {link.scope} scope"
                + (" through the gateway" if link.via_gateway else "")
                + "; the gateway serves every scope, so an agent linked through it is linked "
                "in one scope only",
                hint=f"first: plugman agents remove {link.agent} --scope {link.scope}",
            )


def _scopes() -> dict[str, tuple[Scope, ...]]:
    return {name: spec.scopes_of() for name, spec in extensions.targets().items()}
