"""Claude Code's own plugin declarations, read as plugman reads its own.

A Claude Code settings file (`~/.claude/settings.json`, a project's committed
`.claude/settings.json`, its `.claude/settings.local.json`) declares marketplaces
(`extraKnownMarketplaces`, alias `additionalMarketplaces`: `{name: {"source": {...}}}`) and
plugins (`enabledPlugins`: `{"plugin@marketplace": true|false}`) and, in the user's file, their
option values (`pluginConfigs`); `known_marketplaces.json`
keeps the same source shape. `source_text` turns one such source into the text plugman's
`marketplace add` takes (or says why it cannot), and `project` reads a project's committed file
as part of its declaration for `plugman sync`, with the conflicts against plugman.toml, which
wins, named as warnings: nothing here is resolved silently.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config import declarations, origins
from plugman.config.claude_source import ClaudeSource
from plugman.core.errors import InputError, PlugmanError
from plugman.core.paths import Paths
from plugman.manifest.diagnostics import KeyPath

MARKETPLACE_KEYS = ("extraKnownMarketplaces", "additionalMarketplaces")
PRE_APPROVALS = ("enableAllProjectMcpServers", "enabledMcpjsonServers")


class PreApproval(NamedTuple):
    file: Path
    message: str
    hint: str


def pre_approved(paths: Paths) -> PreApproval | None:
    """A warning when the project's `.claude/settings.local.json` pre-approves the project's
    `.mcp.json` servers (`enableAllProjectMcpServers`, `enabledMcpjsonServers`) and is not the
    user's (`origins.personal`: git tracks it, it is a link): Claude Code honours it and starts
    those servers without asking. Costs a read of a small file when there is one; git's index
    is read only when one of the keys is in it."""
    file = origins.claude_local(paths)
    linked = origins.link_on_path(paths.project_dir, file) is not None
    if not linked:
        try:
            data = file.read_bytes()
        except OSError:
            return None
        if not any(key.encode() in data for key in PRE_APPROVALS):
            return None
        try:
            settings = json.loads(data)
        except ValueError:
            return None
        keys = [
            k
            for k in PRE_APPROVALS
            if isinstance(settings, dict) and settings.get(k) not in (None, False, [])
        ]
        if not keys:
            return None
    else:
        keys = list(PRE_APPROVALS)
    verdict = origins.of(paths, file)
    if verdict.consents:
        return None
    said = (
        " or ".join(keys) if not linked else "what it says (Claude Code reads it through the link)"
    )
    message = (
        f"{verdict.why}; Claude Code takes {said} from it as your own approval and starts the "
        "project's .mcp.json servers without asking (plugman's trust does not cover Claude "
        "Code's own reading of .mcp.json)"
    )
    hint = (
        "remove the key from .claude/settings.local.json, or keep the file out of git: "
        "git rm --cached .claude/settings.local.json"
    )
    return PreApproval(file, message, hint)


def settings_file(paths: Paths) -> Path:
    """The project's committed Claude Code settings."""
    return paths.project_dir / ".claude" / "settings.json"


def read(path: Path) -> dict[str, Any]:
    """A Claude settings (or state) file as a JSON object; `{}` when absent. A file that is not
    a JSON object is an error naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PlugmanError(
            f"cannot read {path}: {exc}", where=str(path), hint="fix the file (it is JSON)"
        ) from None
    if not isinstance(data, dict):
        raise PlugmanError(
            f"{path} is not a JSON object", where=str(path), hint="fix the file (it is JSON)"
        )
    return data


def checked(path: Path) -> dict[str, Any]:
    """A project's committed settings as sync acts on them; `{}` when absent. A merge left
    unresolved, text that is not JSON, or a wrong type where sync reads (`enabledPlugins`,
    the marketplaces' `source`) is an `InputError` at its line and key path (exit 2)."""
    # lazy: manifest.tomlloc is not loaded by `plugman config resolve` (+1 ms)
    from plugman.manifest import jsonloc, tomlloc

    hint = f"fix {path} (plugman leaves it as it is), then run the command again"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read: {exc}", where=str(path), hint=hint) from None
    line = tomlloc.conflict_line(text)
    if line is not None:
        raise tomlloc.merge_conflict(str(path), line)
    try:
        doc = jsonloc.parse(text)
    except jsonloc.JsonSyntaxError as exc:
        where = f"{path}:{exc.line}"
        raise InputError(f"not valid JSON: {exc.message}", where=where, hint=hint) from None
    found = list(_wrong_types(doc.value))
    if found:
        raise tomlloc.refused(str(path), doc.locate, found, hint)
    settings: dict[str, Any] = doc.value
    return settings


def _wrong_types(value: object) -> Iterator[tuple[KeyPath, str]]:
    """The key paths sync reads that hold the wrong type, and what they should hold."""
    if not isinstance(value, dict):
        yield (), "must be a JSON object"
        return
    table = value.get("enabledPlugins")
    if table is not None and not isinstance(table, dict):
        yield ("enabledPlugins",), "must be an object of plugin@marketplace: true or false"
    for plugin_id, on in table.items() if isinstance(table, dict) else ():
        if not isinstance(on, bool):
            yield ("enabledPlugins", plugin_id), "must be true or false"
    for key in MARKETPLACE_KEYS:
        markets = value.get(key)
        if markets is not None and not isinstance(markets, dict):
            yield (key,), "must be an object of marketplace name: {source: {...}}"
        for name, entry in markets.items() if isinstance(markets, dict) else ():
            source = entry.get("source") if isinstance(entry, dict) else None
            if not isinstance(entry, dict):
                yield (key, name), "must be an object with a source"
            elif not isinstance(source, dict):
                yield (key, name, "source"), "missing, or not an object ({source: KIND, ...})"
            elif not isinstance(source.get("source"), str):
                yield (key, name, "source", "source"), "missing, or not a string (its kind)"


def marketplaces(settings: dict[str, Any]) -> dict[str, ClaudeSource]:
    """A settings file's declared marketplaces: name -> its `source` (the first of the two
    spellings wins, as in Claude)."""
    found: dict[str, ClaudeSource] = {}
    for key in reversed(MARKETPLACE_KEYS):
        table = settings.get(key)
        if isinstance(table, dict):
            for name, value in table.items():
                if isinstance(value, dict) and isinstance(value.get("source"), dict):
                    found[str(name)] = ClaudeSource.of(value["source"])
    return found


def enabled_plugins(settings: dict[str, Any]) -> dict[str, bool]:
    """A settings file's `enabledPlugins`, the entries that are booleans."""
    table = settings.get("enabledPlugins")
    if not isinstance(table, dict):
        return {}
    return {str(k): v for k, v in table.items() if isinstance(v, bool)}


def options(user_settings: dict[str, Any], plugin_id: str) -> tuple[str, ...]:
    """A plugin's option values as Claude Code 2.1.328 keeps them, in the user's settings
    (`pluginConfigs[id].options`; sensitive ones are in Claude's credential store, not read),
    as the KEY=VALUE texts `plugman install --config` takes."""
    table = user_settings.get("pluginConfigs")
    entry = table.get(plugin_id) if isinstance(table, dict) else None
    given = entry.get("options") if isinstance(entry, dict) else None
    found = []
    for key, value in (given if isinstance(given, dict) else {}).items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            text = str(value)
        elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
            text = ",".join(str(v) for v in value)
        else:
            continue
        found.append(f"{key}={text}")
    return tuple(found)


def source_text(source: ClaudeSource) -> tuple[str | None, str]:
    """A Claude marketplace source as `marketplace add` text, and the words for it; the text is
    None when plugman cannot add it (the words then say why)."""
    return source.text()


class ProjectDeclaration(NamedTuple):
    """What a project's `.claude/settings.json` adds to plugman.toml, and the conflicts."""

    marketplaces: dict[str, str]  # name -> `marketplace add` text, plugman.toml lacks them
    plugins: list[str]  # plugin@marketplace enabled there, plugman.toml lacks them
    warnings: list[str]


def project(
    paths: Paths,
    toml_markets: dict[str, Any],
    toml_plugins: dict[str, Any],
    registered: Collection[str],
) -> ProjectDeclaration:
    """The project's committed Claude settings beside plugman.toml's `toml_markets` and
    `toml_plugins` tables (plugman.toml wins where both declare). A plugin enabled there whose
    marketplace neither file declares and plugman has not `registered` (Claude's official
    one, say) is a warning, not a failed sync."""
    path = settings_file(paths)
    declarations.check_project_file(paths, path)  # read like plugman.toml: never through a link
    settings = checked(path)
    ours, theirs = "plugman.toml", ".claude/settings.json"
    markets: dict[str, str] = {}
    warnings: list[str] = []
    declared_there = marketplaces(settings)
    for name, source in declared_there.items():
        text, words = source_text(source)
        declared = toml_markets.get(name)
        if declared is not None:
            mine = declared.get("source") if isinstance(declared, dict) else None
            same = isinstance(mine, str) and text is not None and _same(paths, mine, text)
            if not same:
                warnings.append(
                    f"marketplace {name!r}: {ours} says {mine}, {theirs} says {words}; "
                    f"using {ours}'s"
                )
        elif text is None:
            warnings.append(f"marketplace {name!r} in {theirs}: cannot add {words}")
        elif (helper := source.helper) and name not in registered:
            warnings.append(
                f"marketplace {name!r} in {theirs} names the headers helper `{helper}`; plugman "
                f"does not run a command a project names: if you trust it, add it yourself: "
                f"plugman marketplace add {text} --name {name} --headers-helper '{helper}'"
            )
        else:
            markets[name] = text
    plugins = []
    for plugin_id, enabled in enabled_plugins(settings).items():
        if plugin_id in toml_plugins and not enabled:
            warnings.append(
                f"plugin {plugin_id}: {ours} declares it, {theirs} disables it; "
                f"installing it as {ours} says"
            )
        elif enabled and plugin_id not in toml_plugins and "@" in plugin_id:
            market = plugin_id.partition("@")[2]
            if market in markets or market in toml_markets or market in registered:
                plugins.append(plugin_id)
            elif market in declared_there:  # its source is the warning above
                warnings.append(f"plugin {plugin_id} in {theirs}: not installed")
            else:
                warnings.append(
                    f"plugin {plugin_id} in {theirs}: its marketplace {market!r} is declared "
                    f"in neither file nor known to plugman; not installed (run: plugman "
                    f"marketplace add SOURCE, or declare it in {ours})"
                )
    return ProjectDeclaration(markets, plugins, warnings)


def _same(paths: Paths, mine: str, theirs: str) -> bool:
    if mine == theirs:
        return True
    here, there = paths.project_dir / Path(mine), paths.project_dir / Path(theirs)
    return here.exists() and there.exists() and here.resolve() == there.resolve()
