"""Claude Code's own plugin installs (`claude plugin install`), as plugman sees them beside its
own delivery: the one place that reads them for deployment, doctor and `import claude`.

Claude keeps them in `<claude config>/plugins/installed_plugins.json` (`{"version": 2,
"plugins": {"name@marketplace": [{"scope", "projectPath"?, "installPath", ...}]}}`, one record
per scope and project). Read from Claude Code 2.1.328 and checked with it
(docs/claude-import.md, "Two copies"): a plugin in that record takes its name from a
skills-folder plugin of the same name even when it is disabled ("Not loaded — the name ... is
already taken by an installed plugin"), and loads beside a marketplace plugin of the same name.
So a plugman copy of a name Claude installed itself either never loads or loads twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from plugman.core.jsonvalue import JSONObject
from plugman.core.state import Scope, as_scope

RECORD = ("plugins", "installed_plugins.json")
FOREIGN = ("skills-dir", "plugman-")  # not Claude's installs: skills folders, plugman's own


class OwnInstall(NamedTuple):
    id: str  # Claude's id: name@marketplace
    scope: Scope
    record: JSONObject  # its entry in installed_plugins.json, as Claude wrote it
    enabled: bool = True  # turned on here (`enabledPlugins`: local, else project, else user)

    @property
    def name(self) -> str:
        return self.id.partition("@")[0]

    def uninstall(self) -> str:
        """The step that takes it away, in Claude's own words."""
        return f"claude plugin uninstall {self.id} --scope {self.scope}"


def record_file(config: Path) -> Path:
    return config.joinpath(*RECORD)


def installs(config: Path, project: Path) -> list[OwnInstall]:
    """Claude's own installs that load in `project`: its user ones and this project's (project
    and local scope), from its record in `config` (Claude's user folder); none when the record
    is missing or cannot be read."""
    try:
        data = json.loads(record_file(config).read_bytes())
    except (OSError, ValueError):
        return []
    plugins = data.get("plugins") if isinstance(data, dict) else None
    found = []
    here = project.resolve()
    turned = _enabled(config, project)
    for claude_id, records in (plugins if isinstance(plugins, dict) else {}).items():
        market = str(claude_id).partition("@")[2]
        if not market or market.startswith(FOREIGN):
            continue
        for record in records if isinstance(records, list) else []:
            scope = as_scope(str(record.get("scope"))) if isinstance(record, dict) else None
            if scope is None or not _here(record, scope, here):
                continue
            on = turned.get(str(claude_id)) is True
            found.append(OwnInstall(str(claude_id), scope, record, on))
    return found


def _enabled(config: Path, project: Path) -> dict[str, object]:
    """`enabledPlugins` as Claude merges its settings files here: local over project over
    user."""
    merged: dict[str, object] = {}
    for file in (
        config / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ):
        try:
            data = json.loads(file.read_bytes())
        except (OSError, ValueError):
            continue
        found = data.get("enabledPlugins") if isinstance(data, dict) else None
        merged |= found if isinstance(found, dict) else {}
    return merged


def _here(record: JSONObject, scope: Scope, project: Path) -> bool:
    where = record.get("projectPath")
    if scope == "user":
        return True
    return isinstance(where, str) and Path(where).resolve() == project


def taking(found: list[OwnInstall], name: str, scope: Scope) -> OwnInstall | None:
    """Claude's own install that holds `name` against plugman's copy delivered at `scope`. A
    user delivery (a skills-folder plugin) reaches every project and gives way to any user
    install, even a disabled one; a project or local delivery (plugman's marketplace) loads
    beside an install turned on here, and a disabled one leaves it alone."""
    for item in found:
        if item.name != name:
            continue
        if (scope == "user" and item.scope == "user") or (scope != "user" and item.enabled):
            return item
    return None
