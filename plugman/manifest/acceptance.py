"""What install accepts: Claude Code 2.1.328's tolerance, where `validate` is the strict lint.

`validate` reports every finding as it is. `marketplace add|update`, `install`, `update` and
`sync` read the same files with the same loaders, then sort the errors here, as Claude Code does:

- a finding in one plugin entry of a marketplace skips that entry (a skipped entry is never
  fetched); the rest stays usable;
- a finding in one component file (a hooks file, `.mcp.json`, a SKILL.md, a command or agent)
  skips that component, which the loaders never return ("Hook load failed" in Claude Code);
- LINT_ONLY findings are warnings wherever they are (Claude Code installs such plugins);
- a plugin.json field Claude Code ignores when malformed (IGNORED_FIELDS: "… is malformed and
  ignored") is a warning, and so is a component path of plugin.json leaving the plugin (Claude
  leaves that component out, as plugman does);
- FATAL findings refuse the plugin wherever they are: a duplicate key (a reviewer reads the
  first value while the agent uses the last), which also refuses a whole marketplace. Claude
  Code installs such a file (its `validate` warns); plugman is stricter on purpose.

Everything else in a manifest (the marketplace's top level, plugin.json, the entry that
defines a plugin) refuses it, as it makes Claude Code refuse it. The rules were read from the
real Claude Code 2.1.328: `tests/claude_rules/rules.json` holds what it did with each mutated
manifest, and `tests/integration/test_claude_rules.py` holds plugman to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from plugman.manifest.diagnostics import ERROR, Diagnostic
from plugman.manifest.reader import REFUSED

# Claude Code accepts these at install: reserved plugin names (a warning there), declared
# component paths that do not exist (or name a file where a folder belongs), name lengths and
# rename chains (checked by `claude plugin validate` only). The standard hooks file listed
# again is a warning already (Claude Code loads it once).
LINT_ONLY = frozenset(
    {
        "reserved-name",
        "missing-file",
        "duplicate-hooks",
        "default-folder-ignored",
        "too-long",
        "bad-rename",
        "skill-name-mismatch",
        "not-a-folder",
    }
)
FATAL = frozenset(REFUSED)
# plugin.json fields Claude Code drops when malformed, loading the rest ("… is malformed and
# ignored"); in a marketplace entry the same mistakes make it refuse the entry.
IGNORED_FIELDS = frozenset(
    {
        "description",
        "displayName",
        "author",
        "homepage",
        "repository",
        "license",
        "keywords",
        "$schema",
        "metadata",
    }
)
# Missing marketplace fields Claude Code does without (none in 2.1.328: `owner` is required).
OPTIONAL_KEYS: frozenset[str] = frozenset()
# Compiled when first used (re's cache): `plugman validate` never sorts findings.
ENTRY = r"^plugins\[(\d+)\]"
FIELD = r"^(?:\[\"(?P<quoted>[^\"]+)\"\]|(?P<plain>[^.\[]+))"


class Sorted(NamedTuple):
    fatal: list[Diagnostic]
    skipped: list[Diagnostic]  # skip the entry or component they are in
    tolerated: list[Diagnostic]  # shown as warnings


def _ignored(finding: Diagnostic) -> bool:
    """A malformed plugin.json field Claude Code ignores (IGNORED_FIELDS)."""
    field = re.match(FIELD, finding.path)
    if field is None or Path(finding.file).name != "plugin.json":
        return False
    return (field["quoted"] or field["plain"]) in IGNORED_FIELDS


def _lint_only(finding: Diagnostic) -> bool:
    if finding.code in LINT_ONLY or _ignored(finding):
        return True
    if Path(finding.file).name == "plugin.json" and finding.code == "path-escape":
        return True
    missing = finding.code == "schema-required" and not finding.path
    return missing and any(finding.message.endswith(f"'{key}'") for key in OPTIONAL_KEYS)


def breaks(finding: Diagnostic) -> bool:
    """Whether a finding in a component file keeps that component from being used."""
    return finding.severity == ERROR and not _lint_only(finding)


def sort(findings: Iterable[Diagnostic], manifests: set[str], entries: bool = False) -> Sorted:
    """Sort errors: in a `manifests` file they are fatal, elsewhere they skip what they are in.
    With `entries` (a marketplace), a finding under `plugins[N]` skips that entry."""
    result = Sorted([], [], [])
    for finding in findings:
        if finding.severity != ERROR:
            continue
        if _lint_only(finding):
            result.tolerated.append(finding)
        elif finding.code in REFUSED:
            result.fatal.append(finding)
        elif entries and entry_index(finding) is not None:
            result.skipped.append(finding)
        elif finding.code in FATAL or finding.file in manifests:
            result.fatal.append(finding)
        else:
            result.skipped.append(finding)
    return result


def tolerated(finding: Diagnostic, root: Path | None = None) -> str:
    """A tolerated finding for a warning: `where`, and what Claude Code does with it."""
    shown = where(finding, root)
    if _ignored(finding):
        return f"{shown} (Claude Code ignores this field)"
    if finding.code == "path-escape":
        return f"{shown} (that component is left out, as Claude Code leaves it out)"
    return shown


def entry_index(finding: Diagnostic) -> int | None:
    """The marketplace entry a finding is in (`plugins[3].source` → 3)."""
    match = re.match(ENTRY, finding.path)
    return int(match[1]) if match else None


def where(finding: Diagnostic, root: Path | None = None) -> str:
    """`file:line key.path: message`, for one line of a warning or an error; the file relative
    to `root` (a staging folder means nothing to the user)."""
    file = Path(finding.file)
    if root is not None and file.is_relative_to(root):
        file = file.relative_to(root)
    line = f":{finding.line}" if finding.line else ""
    path = f" {finding.path}" if finding.path else ""
    return f"{file.as_posix()}{line}{path}: {finding.message}"


MANIFEST_NAMES = frozenset({"plugin.json", "marketplace-entry"})


def claude_refusal(findings: Iterable[Diagnostic]) -> str | None:
    """Why Claude Code 2.1.328 will not load a plugin with these findings (those of loading it:
    `plugin.load`'s report), in words for a warning; None when it loads it. Pure: only the
    findings are read. An error in plugin.json or the entry defining the plugin that Claude does
    not tolerate is its reason (as `claude plugin list` says "Manifest validation failed");
    a finding in a component file only leaves that component out, and a duplicate key is
    plugman's own refusal, not Claude's."""
    for finding in findings:
        if finding.severity != ERROR or _lint_only(finding) or finding.code in REFUSED:
            continue
        if Path(finding.file).name in MANIFEST_NAMES:
            path = f"{finding.path}: " if finding.path else ""
            return f"Claude Code refuses its manifest: {path}{finding.message}"
    return None
