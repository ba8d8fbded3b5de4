"""Claude Code's managed settings, read as plugman's managed policy
(docs/claude-format.md#organization-policy).

Claude Code 2.1.332 reads `managed-settings.json` in its managed folder (`Paths.claude_managed_dir`)
and then each `managed-settings.d/*.json` that is not hidden, in name order, and merges them: a
later scalar wins, lists are concatenated without duplicates, objects merge key by key (an
`extraKnownMarketplaces` entry is replaced whole). plugman reads the same files the same way.
Each file is parsed on its own (`policy_rules.parse`), so each rule keeps its file and key path, and
then the files are merged as Claude merges them.

Fail closed, as for managed-settings.toml: a file that is not a JSON object is an error (every
command stops until it is fixed); a broken rule inside one is a located error and counts as
`policy_rules.parse` says; an `enabledPlugins` value that is not true, false or a list of
version constraints (which force it) blocks the plugin, where Claude Code ignores it.
Where Claude Code 2.1.332 keeps a plugin's hooks under `allowManagedHooksOnly` (the plugins
managed settings force on), plugman does too (`plugman.config.merge`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from plugman.config.claude_source import ClaudeSource
from plugman.config.policy_rules import FLAGS, PluginRule, Policy, parse
from plugman.core.errors import PlugmanError
from plugman.core.paths import Paths
from plugman.manifest.diagnostics import Sink, format_path

T = TypeVar("T")
HINT = "fix it in Claude Code's managed settings (docs/claude-format.md#organization-policy)"


def documents(paths: Paths) -> list[tuple[Path, dict[str, Any]]]:
    """Claude Code's managed settings files that exist, in the order Claude merges them."""
    files = [paths.claude_managed_settings]
    folder = paths.claude_managed_dropins
    if folder.is_dir():
        files += sorted(
            (
                f
                for f in folder.iterdir()
                if f.name.endswith(".json") and not f.name.startswith(".")
            ),
            key=lambda f: f.name,
        )
    return [(file, _read(file)) for file in files if file.is_file()]


def _read(file: Path) -> dict[str, Any]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PlugmanError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}",
            where=str(file),
            hint="fix the file; until then plugman refuses to work under an unread policy",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlugmanError(f"cannot read it: {exc}", where=str(file), hint=HINT) from None
    if not isinstance(data, dict):
        raise PlugmanError("managed settings must be a JSON object", where=str(file), hint=HINT)
    return data


def load(paths: Paths, sink_for: Callable[[Path], Sink] | None = None) -> Policy:
    """Claude Code's managed policy, merged over its files as Claude merges them."""
    docs = documents(paths)
    sinks = [(sink_for or (lambda f: Sink(str(f))))(file) for file, _ in docs]
    parts = [parse(data, sink) for (_, data), sink in zip(docs, sinks, strict=True)]
    flags = {key: flag for part in parts for flag in part.flags for key in [flag[0]]}
    value = {key: found for key, (_, found, _) in flags.items()}
    plugins: dict[str, PluginRule] = {}
    extra: dict[str, tuple[str, ClaudeSource, str]] = {}
    for (file, data), sink in zip(docs, sinks, strict=True):
        plugins.update(_plugins(data.get("enabledPlugins"), str(file), sink))
        extra.update(_extra(data.get("extraKnownMarketplaces"), str(file), sink))
    return Policy(
        allowed=_merged(part.allowed for part in parts),
        denied=_merged(part.denied for part in parts) or (),
        allow_all_claude_ai=value.get("allowAllClaudeAiMcps", False),
        allow_managed_hooks_only=value.get("allowManagedHooksOnly", False),
        disable_direct_mcp_skills=value.get("disableDirectMcpSkills", False),
        known_marketplaces=_merged(part.known_marketplaces for part in parts),
        blocked_marketplaces=_merged(part.blocked_marketplaces for part in parts) or (),
        plugins=tuple(plugins.values()),
        extra_marketplaces=tuple(extra.values()),
        flags=tuple(flags[key] for key in FLAGS if key in flags),
    )


def _merged(lists: Iterable[tuple[T, ...] | None]) -> tuple[T, ...] | None:
    """Lists concatenated without duplicates (a rule written twice counts once); None when no
    file has the list."""
    present = [found for found in lists if found is not None]
    if not present:
        return None
    seen: dict[Any, T] = {}
    for rule in (rule for found in present for rule in found):
        seen.setdefault(rule._replace(origin=""), rule)  # type: ignore[attr-defined]
    return tuple(seen.values())


def _plugins(value: Any, file: str, sink: Sink) -> dict[str, PluginRule]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        sink.error("policy-type", "enabledPlugins must be an object", ("enabledPlugins",), HINT)
        return {}
    found = {}
    for plugin, enabled in value.items():
        where = f"{file}: {format_path(('enabledPlugins', str(plugin)))}"
        if isinstance(enabled, list) and all(isinstance(v, str) for v in enabled):
            enabled = True  # forced on, within version constraints (plugman forces it whole)
        if not isinstance(enabled, bool):
            message = "must be true or false: until it is fixed, the plugin is blocked"
            sink.error("policy-type", message, ("enabledPlugins", plugin), HINT)
            enabled = False
        found[str(plugin)] = PluginRule(str(plugin), enabled, where)
    return found


def _extra(value: Any, file: str, sink: Sink) -> dict[str, tuple[str, ClaudeSource, str]]:
    if value is None:
        return {}
    key = "extraKnownMarketplaces"
    if not isinstance(value, dict):
        sink.error("policy-type", f"{key} must be an object", (key,), HINT)
        return {}
    found = {}
    for name, entry in value.items():
        source = entry.get("source") if isinstance(entry, dict) else None
        if not isinstance(source, dict):
            sink.error("policy-type", "a marketplace needs a source object", (key, name), HINT)
            continue
        where = f"{file}: {format_path((key, str(name)))}"
        found[str(name)] = (str(name), ClaudeSource.of(source), where)
    return found
