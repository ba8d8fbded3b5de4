"""The built-in source kinds, registered through the same hook third-party extensions use (the
function is named as the hook; plugman.extensions takes it without pluggy's marker, so looking
up a built-in source kind does not import pluggy).

Each kind's module is imported when it fetches: archives and OCI artifacts pull in http and
ssl.
"""

from __future__ import annotations

from pathlib import Path

from plugman.core.errors import FetchError
from plugman.manifest.model import PluginSource
from plugman.plugins.sources.kind import Progress, SourceKind


def plugman_sources() -> list[SourceKind]:
    return [
        SourceKind(("path",), _path),
        SourceKind(("github", "git-subdir", "url"), _git),
        SourceKind(("archive",), _archive),
        SourceKind(("oci",), _oci, location="ref"),
        SourceKind(("npm",), _npm),
        SourceKind(("command",), _command),
    ]


def _path(
    source: PluginSource, dest: Path, base: Path | None, _progress: Progress
) -> tuple[Path, str | None]:
    from plugman.plugins.sources.local import copy_plugin

    return copy_plugin(source.location, base, dest), None


def _git(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    from plugman.plugins.sources.git import fetch_git

    return fetch_git(source, dest, progress)


def _archive(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    from plugman.plugins.sources.archive import fetch_archive

    return fetch_archive(source, dest, progress)


def _oci(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    from plugman.plugins.sources.oci import fetch_oci

    return fetch_oci(source, dest, progress)


def _npm(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    from plugman.plugins.sources.npm import fetch_npm

    return fetch_npm(source, dest, progress)


def _command(
    _source: PluginSource, _dest: Path, _base: Path | None, _progress: Progress
) -> tuple[Path, str | None]:
    raise FetchError(
        "command sources are not supported: plugman never runs code from a plugin or "
        "marketplace at install time",
        hint="fetch the plugin yourself and install it from its folder, or ask the "
        "publisher for a github, git or archive source",
    )
