"""`archive` sources: download, verify the sha256 pin, then extract safely."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from plugman.core.download import download
from plugman.core.errors import FetchError
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.common import plugin_root, scratch
from plugman.plugins.sources.extract import extract

__all__ = ["download", "fetch_archive"]  # download is also used for marketplace.json URLs

SHA256 = re.compile(r"^[0-9a-f]{64}$")


def fetch_archive(
    source: PluginSource, dest: Path, progress: Callable[[str], None] | None = None
) -> tuple[Path, str]:
    """Download and extract the archive into `dest`; return the plugin root and the sha256."""
    expected = _expected(source.sha)
    local = _local_path(source.location)
    with scratch(dest, ".download") as temporary:
        if progress:
            progress(f"reading {local}" if local else f"downloading {source.location}")
        digest = download(source.location, temporary)
        if expected and digest != expected:
            raise FetchError(
                f"sha256 mismatch: expected {expected}, got {digest}",
                hint="the archive is not the one the marketplace pinned; nothing was extracted",
            )
        if progress:
            progress("extracting")
        extract(temporary, dest, local)
    return plugin_root(dest, "the archive"), digest


def _local_path(location: str) -> str | None:
    """The file a file:// archive URL names (a local archive), else None."""
    if not location.startswith("file:"):
        return None

    return unquote(urlsplit(location).path)


def _expected(sha: str | None) -> str | None:
    if sha is None:
        return None
    value = sha.lower().removeprefix("sha256:")
    if not SHA256.match(value):
        raise FetchError(
            f"archive sha256 {sha!r} is not 64 hexadecimal digits",
            hint="set 'sha256' to the archive's full SHA-256 digest",
        )
    return value
