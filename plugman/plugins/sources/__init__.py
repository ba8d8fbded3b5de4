"""Fetching a plugin tree from any source kind into a staging folder, safely, and the source
an install spec names (`claim`).

`fetch` dispatches on `PluginSource.kind` through the registered source kinds and, whatever
goes wrong, raises PlugmanError and leaves nothing behind in `dest`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from plugman import extensions
from plugman.core.errors import FetchError, PlugmanError
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.kind import Fetcher, Progress, SourceKind

__all__ = [
    "FetchError",
    "Fetched",
    "Fetcher",
    "Progress",
    "SourceKind",
    "builtin",
    "claim",
    "common",
    "fetch",
    "kind",
    "members",
    "oci",
    "purls",
]

FRESH = "a fetch needs a new folder (that does not exist yet) inside an existing one"


class Fetched(NamedTuple):
    root: Path  # the plugin folder inside `dest` (dest itself, or a subfolder of it)
    pin: str | None  # git commit for git sources, sha256 for archives, None for paths
    kind: str  # the source kind


def fetch(
    source: PluginSource,
    dest: Path,
    *,
    base: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Fetched:
    """Put the plugin tree of `source` under `dest` (a folder that does not exist yet; its
    parent exists). `base` is the marketplace root for relative `path` sources; without it a
    `path` location is used as given. Raises PlugmanError (with a hint) on any failure, and
    then leaves nothing behind in `dest`."""
    # lazy: plugins.sources.common not loaded by plugman list --json (+37 ms)
    from plugman.plugins.sources.common import remove

    if os.path.lexists(dest):
        raise FetchError(
            f"staging folder {str(dest)!r} already exists", where=str(dest), hint=FRESH
        )
    if not dest.parent.is_dir():
        raise FetchError(f"folder {str(dest.parent)!r} does not exist", where=str(dest), hint=FRESH)
    try:
        return _dispatch(source, dest, base, progress)
    except PlugmanError:
        remove(dest)
        raise
    except OSError as exc:
        remove(dest)
        raise FetchError(
            f"could not fetch the {source.kind} source {source.location!r}: {exc}",
            hint="check free disk space and permissions of the plugin store",
        ) from exc
    except BaseException:
        remove(dest)
        raise


def _dispatch(source: PluginSource, dest: Path, base: Path | None, progress: Progress) -> Fetched:
    root, pin = extensions.source_kind(source.kind).fetch(source, dest, base, progress)
    return Fetched(root, pin, source.kind)


def claim(text: str, cwd: Path, *, entry_points: bool = False) -> PluginSource | None:
    """The source the install spec `text` names, as the first kind that claims it says: the
    built-in kinds, in their order (with `entry_points`: the extensions' kinds instead). None
    when none claims it."""
    own = extensions.source_kinds(entry_points=False)
    kinds = own
    if entry_points:
        kinds = {name: kind for name, kind in extensions.source_kinds().items() if name not in own}
    for name, kind in kinds.items():
        if name == kind.kinds[0]:  # a kind registered under several names is asked once
            found = kind.claim(text, cwd)
            if found is not None:
                return found
    return None
