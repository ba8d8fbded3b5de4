"""A marketplace source as Claude Code's settings spell it (`extraKnownMarketplaces.NAME.source`,
`known_marketplaces.json`): its kind and the kind's own fields, typed once where a settings file
is read (`claude_settings`, `claude_policy`, `import claude`), and what plugman makes of it.

Claude's kinds (docs/claude-format.md): `github` (`repo`, `ref`, `path`), `git` (`url`, `ref`,
`path`), `url` (`url`, `headers`, `headersHelper`), `directory` and `file` (`path`); `npm` and
`settings` plugman does not fetch.
"""

from __future__ import annotations

from typing import NamedTuple

from plugman.core.jsonvalue import JSONObject

# the field that holds each kind's location
LOCATION = {"github": "repo", "git": "url", "url": "url", "directory": "path", "file": "path"}


class ClaudeSource(NamedTuple):
    kind: str  # its `source`, in words ("" when it has none)
    location: str | None = None  # the kind's location field (LOCATION) when it is a string
    ref: str | None = None  # `ref` (github, git) when a string, as written
    within: bool = False  # a `path` inside the repository is given (github, git)
    headers: bool = False  # static request headers are written in (url)
    helper: str | None = None  # `headersHelper` (url): a command printing the headers

    @classmethod
    def of(cls, fields: JSONObject) -> ClaudeSource:
        """The source object as a settings file holds it (any shape: the fields of the wrong
        type count as absent)."""
        raw = fields.get("source")
        kind = str(raw) if raw else ""
        value = fields.get(LOCATION[kind]) if kind in LOCATION else None
        ref, helper = fields.get("ref"), fields.get("headersHelper")
        return cls(
            kind,
            value if isinstance(value, str) else None,
            ref if isinstance(ref, str) else None,
            kind in ("github", "git") and bool(fields.get("path")),
            kind == "url" and bool(fields.get("headers")),
            helper if kind == "url" and isinstance(helper, str) and helper.strip() else None,
        )

    def text(self) -> tuple[str | None, str]:
        """The source as `marketplace add` text, and the words for it; the text is None when
        plugman cannot add it (the words then say why)."""
        kind, at, ref = self.kind, self.location, self.ref
        if at is None or kind not in LOCATION:
            return None, f"a {kind or 'unknown'} source (plugman has no such marketplace source)"
        if kind in ("directory", "file"):
            return at, at
        if kind == "git":
            if self.within:
                return None, f"git {at} with a path inside it (plugman reads the root)"
            text = at + (f"#{ref}" if ref else "")
            return text, text
        if kind == "github":
            if self.within:
                return None, f"GitHub {at} with a path inside it (plugman reads the root)"
            text = at + (f"@{ref}" if ref else "")
            return text, f"GitHub {text}"
        if self.headers:  # a secret written in a settings file: plugman keeps none
            return None, f"{at} with static request headers (use a headersHelper)"
        return at, at

    def pinned(self) -> str | None:
        """How plugman names it as a managed policy's marketplace (a `#ref` on a github or git
        one), or None for a form plugman does not fetch (npm, settings)."""
        if self.location is None:
            return None
        pin = self.ref is not None and self.kind in ("github", "git")
        return self.location + (f"#{self.ref}" if pin else "")
