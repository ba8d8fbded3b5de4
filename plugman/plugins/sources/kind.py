"""The source-kind contract: everything plugman knows of a kind of plugin source, in one object
(hook `plugman_sources`; the built-in kinds in plugman.plugins.sources.builtin implement it the
same way).

A source-kind author gives `SourceKind(kinds, fetch, location=KEY)` and, for a kind of its
own, subclasses it to override what the defaults guess:

- `fetch(source, dest, base, progress) -> (root, pin)`: put the plugin tree into `dest` (a
  new folder; `base` is the marketplace root), return the plugin folder and what pins it.
- `lock_fields(source, pin, marketplace_commit)` and `from_lock(locked)`: the fields of the
  plugin's lock entry (its own names, text values; plugman adds `type` and makes the
  `LockedSource`, plugman.core.sources) and the source that fetches exactly that tree again.
  Default: `{LOCATION: …, "pin": pin, "ref": …, "path": …}`.
- `describe(locked, marketplace)`: how a locked source is said to users ("archive …").
- `pin_of(locked)`, `version_of(pin)`: what pins it, and a plugin's version without one.
- `follow(locked, paths)`: where the moving ref a locked source follows (a git branch, an OCI
  tag, an npm dist-tag, an extension's own) points now, as a `Followed` (the source pinned
  there, and that pin), asked without fetching the tree; None for a source pinned to an exact
  commit, digest or version, or a kind that follows nothing (the default). `outdated` offers
  what it finds and `update` installs it through the same checks as any update; nothing is
  installed because a ref moved.
- `names_local_file(source)`: whether it names this machine's files; a remote marketplace (or
  a project's shared declaration of one) may not list such a source. Default: a file: URL or
  an absolute path (`looks_local`).
- `plugin_name(source)`: the name of a plugin without a manifest. Default: the location's last
  part.
- `claim(text, cwd)`: the source an install spec on the command line names (`hg+https://…`),
  else None. Default: none claimed. A spec starting `NAME+` is left to extensions.
- `package_ref(locked, name, version)`: how an SBOM (`plugman lock export`) names the locked
  source: a package URL, where its repository or bytes are. Default: `pkg:generic/NAME@VERSION`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import purls

if TYPE_CHECKING:
    from plugman.core.paths import Paths
    from plugman.plugins.sources.purls import PackageRef

Progress = Callable[[str], None] | None
# Fetch `source` into `dest` (`base`: the marketplace root): the plugin folder and its pin.
Fetcher = Callable[[PluginSource, Path, Path | None, Progress], tuple[Path, str | None]]
# a kind's fields of a lock entry's source (text; None: not known yet), without its `type`
LockFields = Mapping[str, str | None]


class Followed(NamedTuple):
    """Where a followed ref points now (`SourceKind.follow`)."""

    source: PluginSource  # the source that fetches exactly that revision
    pin: str  # that revision, as `pin_of` reads a lock entry (a commit, a digest, …)


DRIVE = re.compile(r"^[a-z]:[\\/]")  # a Windows path, C:\ or C:/
SCHEMED = re.compile(r"^[A-Za-z][A-Za-z0-9.-]*\+")  # `hg+https://…`: a spec left to extensions


def looks_local(location: str) -> bool:
    """Whether a location names this machine's files: a file: URL or an absolute path."""
    text = location.strip().lower()
    return text.startswith(("file:", "/", "~", "\\")) or bool(DRIVE.match(text))


def pinned(text: str, pin: str | None, width: int = 12) -> str:
    """A description with its pin (its first `width` characters; 0: all of it)."""
    return text + (f" (pinned to {pin[:width] if width else pin})" if pin else "")


class SourceKind:
    """A kind of plugin source (hook `plugman_sources`); see the module docstring. (A plain
    class, not a dataclass: `dataclasses` costs the hot commands ~8 ms to import.)"""

    def __init__(self, kinds: tuple[str, ...], fetch: Fetcher, location: str = "url") -> None:
        self.kinds = kinds  # the `source` values of marketplace entries it takes
        self.fetch = fetch
        # The key of a marketplace entry's source object that names what to fetch (it becomes
        # `PluginSource.location`), e.g. "package" for `{"source": "shelf", "package": "tool"}`;
        # "" for a kind with no object form (a plain path string).
        self.location = location

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        """What the lock records of a source fetched at `pin` (None: not fetched yet)."""
        found = {self.location: source.location}
        return found | _present(pin=pin, ref=source.ref, path=source.subdir)

    def from_lock(self, locked: LockedSource) -> PluginSource:
        """The source that fetches exactly what `locked` (a lock entry's source) pins."""
        ref, path = locked.get("ref"), locked.get("path")
        location = str(locked.get(self.location))
        return PluginSource(self.kinds[0], location, ref, self.pin_of(locked), path)

    def pin_of(self, locked: LockedSource) -> str | None:
        """What exactly a lock entry fetched (a commit, a digest), if it says."""
        return locked.get("pin") or None

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        """A locked source in a user's words (`marketplace`: None for a direct install)."""
        what = f"{locked.kind} source {locked.get(self.location)}"
        return pinned(what, self.pin_of(locked))

    def follow(self, locked: LockedSource, paths: Paths) -> Followed | None:
        """Where the moving ref `locked` follows points now, asked of its origin without
        fetching the tree (`paths`: for the credentials plugman keeps); None when it follows
        none. Default: none (a kind that cannot say is never offered an update)."""
        return None

    def version_of(self, pin: str | None) -> str:
        """A plugin's version when its plugin.json has none: the start of its pin."""
        return (pin or "unknown").removeprefix("sha256:")[:12]

    def names_local_file(self, source: PluginSource) -> bool:
        """Whether `source` names this machine's files."""
        return looks_local(source.location)

    def plugin_name(self, source: PluginSource) -> str:
        """The name of a plugin without a manifest, from where it came from."""
        last = source.subdir or source.location.rstrip("/").rsplit("/", 1)[-1]
        return last.rsplit(":", 1)[-1] or "plugin"

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        """The source the install spec `text` names, if it is one of this kind."""
        return None

    def package_ref(self, locked: LockedSource, name: str, version: str) -> PackageRef:
        """How an SBOM names the locked source `locked` of the plugin `name` at `version`
        (plugman.plugins.sources.purls). Default: the plugin itself, `pkg:generic`."""
        return purls.generic(name, version)


def _present(**fields: str | None) -> dict[str, str]:
    return {key: value for key, value in fields.items() if value}
