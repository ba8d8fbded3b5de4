"""Rollback protection (TUF's rollback attack; Cargo keeps what its lock recorded): `update` and
`sync` never take a plugin back to an older release than the one installed unless the user
asks for it (`--allow-downgrade`).

Older means, first, a lower version (plugman.core.versions.order: semver for npm-style
versions, else PEP 440); and, when the versions are equal (or cannot be compared), a signed OCI
manifest published earlier than the installed one (its `org.opencontainers.image.created`
annotation, inside the bytes the publisher signed:
plugman.plugins.supply_chain.signing.Admitted.released). The second catches a tag re-pointed at an
older, validly signed build of the same version (a republished fix replayed away). Unsigned content
has no trustworthy time: only its version counts.
"""

from __future__ import annotations

from datetime import datetime

from plugman.core.errors import PlugmanError
from plugman.core.sources import LockedSource
from plugman.core.state import InstalledPlugin
from plugman.core.versions import order
from plugman.plugins.catalog import pins

FLAG = "--allow-downgrade"


def downgrade(installed: InstalledPlugin, version: str, released: str | None) -> str | None:
    """Why the release offered (`version`, its signed manifest's creation time `released`) is
    older than the installed one, in words; None when it is not older."""
    found = order(version, installed.version)
    if found is not None and found < 0:
        return f"version {version} is older than the installed {installed.version}"
    if found is not None and found > 0:
        return None
    was, now = _moment(installed.released), _moment(released)
    if was is not None and now is not None and now < was:
        return (
            f"its signed manifest was published {released}, before the installed one "
            f"({installed.released}), under the same version {version}"
        )
    return None


def _moment(text: str | None) -> datetime | None:
    """An RFC 3339 time as `plugman publish` writes it; None when absent or unreadable (or
    without a time zone: not comparable)."""
    if not text:
        return None
    try:
        found = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


def refusal(
    plugin_id: str, scope: str, reason: str, source: LockedSource, command: str
) -> PlugmanError:
    """The error of a refused downgrade: what is installed, what is offered and from where
    (`source`: the offered release's lock source), and what to do."""
    market = plugin_id.rpartition("@")[2]
    where = pins.describe(source, None if market == "direct" else market)
    return PlugmanError(
        f"{plugin_id} ({scope}) would go back to an older release: {reason}, offered by "
        f"{where}; nothing was changed",
        hint=f"if you mean to go back, run: plugman {command} {FLAG}"
        + (f" {plugin_id}" if command == "update" else "")
        + "; otherwise ask the publisher why their tag or catalog now names an older release "
        "(a re-pointed tag is how a rollback attack looks)",
    )
