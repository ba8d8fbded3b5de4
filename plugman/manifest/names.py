"""Rules for names that become path segments, tool names or IDs."""

from __future__ import annotations

import re
import unicodedata

from plugman.diagnostics import KeyPath, Sink

KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 128

RESERVED_MARKETPLACES = frozenset(
    {
        "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
        "claude-plugins-community", "claude-community", "anthropic-marketplace",
        "anthropic-plugins", "agent-skills", "anthropic-agent-skills", "knowledge-work-plugins",
        "life-sciences", "claude-for-legal", "claude-for-financial-services",
        "financial-services-plugins", "first-party-plugins", "healthcare",
    }
)  # fmt: skip
DESKTOP_REJECTED_MARKETPLACES = frozenset({"org", "org-provisioned", "unknown"})
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


def check_marketplace_name(name: str, sink: Sink, path: KeyPath) -> bool:
    if not check_segment(name, "marketplace", sink, path):
        return False
    check_kebab(name, "marketplace", sink, path)
    if name in RESERVED_MARKETPLACES:
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
