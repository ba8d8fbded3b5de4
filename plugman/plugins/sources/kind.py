"""What an extension implements to add a kind of plugin source (hook `plugman_sources`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from plugman.manifest.model import PluginSource

Progress = Callable[[str], None] | None
# Fetch `source` into `dest` (`base`: the marketplace root): the plugin folder and its pin.
Fetcher = Callable[[PluginSource, Path, Path | None, Progress], tuple[Path, str | None]]


class SourceKind(NamedTuple):
    """A kind of plugin source an extension can fetch (hook `plugman_sources`)."""

    kinds: tuple[str, ...]  # the `source` values of marketplace entries it takes
    fetch: Fetcher
    # The key of a marketplace entry's source object that names what to fetch (it becomes
    # `PluginSource.location`), e.g. "package" for `{"source": "shelf", "package": "tool"}`.
    # The built-in types have their own keys, in the marketplace schema.
    location: str = "url"
