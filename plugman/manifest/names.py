"""Rules for names that become path segments, tool names or IDs."""

from __future__ import annotations

import re
import unicodedata

from plugman.manifest.diagnostics import KeyPath, Sink

KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 128

RESERVED_MARKETPLACES = frozenset(
    {
        "claude-code-marketplace",
        "claude-code-plugins",
        "claude-plugins-official",
        "claude-plugins-community",
        "claude-community",
        "anthropic-marketplace",
        "anthropic-plugins",
        "agent-skills",
        "anthropic-agent-skills",
        "knowledge-work-plugins",
        "life-sciences",
        "claude-for-legal",
        "claude-for-financial-services",
        "financial-services-plugins",
        "first-party-plugins",
        "healthcare",
        "claude-tag-plugins",
        "anthropic-plugin-directory",
        "claude-plugin-directory",
    }
)
# Marketplace names Claude Code keeps for its own plugin sources (compared in lowercase).
SESSION_MARKETPLACES = {
    "inline": "--plugin-dir session plugins",
    "builtin": "built-in plugins",
    "skills-dir": "plugins auto-loaded from .claude/skills/",
    "synced": "plugins synced from your claude.ai account",
    "claude-plugin-test": "plugins loaded by claude plugin test",
}
DESKTOP_REJECTED_MARKETPLACES = frozenset({"org", "org-provisioned", "unknown"})
# Plugin names only Anthropic's own marketplaces may use, as Claude Code 2.1.328 enforces them.
_ANTHROPIC_PREFIX = re.compile(r"^(?:claude|anthropics?|cc[-_.]?plugin)[-_.]", re.IGNORECASE)
_ANTHROPIC_NAMES = frozenset({"claude", "anthropic", "anthropics", "claude-code", "claude-mods"})
_OFFICIAL_BESIDE = re.compile(
    r"official[-_.]?(?:claude|anthropic)|(?:claude|anthropic)s?[-_.]?official", re.IGNORECASE
)
# Claude Code 2.1.328's test for a marketplace name passing for an official one: "official"
# next to "anthropic"/"claude", or "anthropic"/"claude" followed by one of these words, with
# anything but letters and digits between (also once the words are run together).
_OFFICIAL_WORDS = ("marketplace", "plugins", "official", "directory", "directories")
_OFFICIAL_NEAR = "official[^a-z0-9]*(?:anthropic|claude)|(?:anthropic|claude)[^a-z0-9]*official"
# Compiled when a marketplace name is first checked (~1.8 ms, a thirtieth of `validate`).
_POSING = rf"{_OFFICIAL_NEAR}|^(?:anthropic|claude)[^a-z0-9]*(?:{'|'.join(_OFFICIAL_WORDS)})"
_POSING_JOINED = rf"^(?:anthropic|claude)(?:{'|'.join(_OFFICIAL_WORDS)})s?$"
_JOINED_MAX = len("anthropic") + max(len(w) for w in _OFFICIAL_WORDS) + 1
RESERVED_SERVERS = frozenset(
    {"workspace", "claude-in-chrome", "computer-use", "Claude Preview", "Claude Browser"}
)


def unsafe_reason(name: str) -> str | None:
    """Why `name` cannot be used as one path segment, or None when it can."""
    if not name.strip():
        return "is empty"
    if name in (".", ".."):
        return "is a relative path"
    if "/" in name or "\\" in name:
        return "contains a path separator"
    if len(name) > MAX_NAME:
        return f"is longer than {MAX_NAME} characters"
    for char in name:
        category = unicodedata.category(char)
        if category == "Cc":
            return "contains a control character"
        if category == "Cf":
            return f"contains the invisible character U+{ord(char):04X}"
    if name.startswith("-"):
        return "starts with '-'"
    return None


def check_segment(name: str, kind: str, sink: Sink, path: KeyPath) -> bool:
    """Report an error when `name` is unsafe as a path segment; True when it is safe."""
    reason = unsafe_reason(name)
    if reason is None:
        return True
    sink.error(
        "unsafe-name",
        f"{kind} name {name!r} {reason}",
        path,
        "use letters, digits and '-' only, e.g. 'my-plugin'",
    )
    return False


def check_kebab(name: str, kind: str, sink: Sink, path: KeyPath) -> None:
    """Warn when a name is not kebab-case (claude.ai sync rejects such names)."""
    if not KEBAB.match(name):
        sink.warning(
            "name-not-kebab",
            f"{kind} name {name!r} is not kebab-case",
            path,
            "use lowercase letters, digits and single hyphens; claude.ai marketplace sync "
            "rejects other names",
        )


def is_reserved_plugin(name: str) -> bool:
    return bool(
        _ANTHROPIC_PREFIX.match(name)
        or name.lower() in _ANTHROPIC_NAMES
        or _OFFICIAL_BESIDE.search(name)
    )


def check_plugin_name(name: str, sink: Sink, path: KeyPath, *, official: bool = False) -> bool:
    """A plugin name: safe as a path segment, kebab-case, not one of Anthropic's (unless the
    plugin is listed by one of Anthropic's own marketplaces, `official`)."""
    if not check_segment(name, "plugin", sink, path):
        return False
    check_kebab(name, "plugin", sink, path)
    if not official and is_reserved_plugin(name):
        sink.error(
            "reserved-name",
            f"plugin name {name!r} is reserved for Anthropic's own plugins",
            path,
            "names starting with 'claude-', 'anthropic-' or 'cc-plugin-', or pairing "
            "'official' with 'claude' or 'anthropic', are refused; choose another name",
        )
    return True


def impersonates(name: str) -> bool:
    """A marketplace name made to pass for one of Anthropic's official marketplaces, as Claude
    Code 2.1.328 decides it (the reserved names themselves are checked against their source)."""
    if name.lower() in RESERVED_MARKETPLACES:
        return False
    if any(not " " <= char <= "~" for char in name):
        return True  # a non-ASCII or control character (a look-alike letter)
    trimmed = re.sub(r"^[^a-z0-9]+", "", name, flags=re.IGNORECASE)
    if re.search(_POSING, name, re.I) or re.search(_POSING, trimmed, re.I):
        return True
    run_together = re.sub(r"[^a-z0-9]+", "", name, flags=re.IGNORECASE)
    if re.search(r"official(?:anthropic|claude)|(?:anthropic|claude)official", run_together, re.I):
        return True
    joined = ""
    for word in filter(None, re.split(r"[^a-z0-9]+", name, flags=re.IGNORECASE)):
        joined += word
        if re.match(_POSING_JOINED, joined, re.I):
            return True
        if len(joined) > _JOINED_MAX:
            break
    return False


def marketplace_refusal(name: str) -> tuple[str, str, str] | None:
    """Why Claude Code 2.1.328 refuses `name` as a marketplace name beyond what makes it unsafe
    as a path segment (`unsafe_reason`): (finding code, reason, what to do), or None."""
    if " " in name:
        return "unsafe-name", "cannot contain spaces", "use kebab-case, e.g. 'my-marketplace'"
    if ".." in name:
        return "unsafe-name", "cannot contain '..'", "use letters, digits and '-' only"
    if name.lower() in SESSION_MARKETPLACES:
        why = f"is reserved for Claude Code's {SESSION_MARKETPLACES[name.lower()]}"
        return "reserved-name", why, "choose another name"
    if impersonates(name):
        return (
            "reserved-name",
            "impersonates an official Anthropic/Claude marketplace",
            "choose a name without 'official' next to 'claude' or 'anthropic', and not "
            "'claude' or 'anthropic' followed by 'marketplace', 'plugins' or 'directory'",
        )
    return None


def check_marketplace_name(name: str, sink: Sink, path: KeyPath) -> bool:
    if not check_segment(name, "marketplace", sink, path):
        return False
    refusal = marketplace_refusal(name)
    if refusal is not None:
        code, reason, hint = refusal
        sink.error(code, f"marketplace name {name!r} {reason}", path, hint)
        return False
    check_kebab(name, "marketplace", sink, path)
    if name.lower() in RESERVED_MARKETPLACES:
        sink.warning(
            "reserved-name",
            f"marketplace name {name!r} is reserved for Anthropic's official marketplaces",
            path,
            "third-party marketplaces cannot use it; choose another name",
        )
    elif name.lower() in DESKTOP_REJECTED_MARKETPLACES:
        sink.warning(
            "reserved-name",
            f"marketplace name {name!r} is rejected by Claude Desktop",
            path,
            "choose another name",
        )
    return True
