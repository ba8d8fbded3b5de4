"""The built-in source kinds, registered through the same hook third-party extensions use (the
function is named as the hook; plugman.extensions takes it without pluggy's marker, so looking
up a built-in source kind does not import pluggy). Each is a `SourceKind` (the contract, in
plugman.plugins.sources.kind) with its own lock fields, words, locality and install specs.

The order is the one install specs are tried in: an archive URL before a git URL (both may
start with https://), a folder last. Each kind's module is imported when it fetches: archives
and OCI artifacts pull in http and ssl.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, assert_never

from plugman.core.errors import FetchError, UsageError
from plugman.core.sources import LockedSource
from plugman.manifest.model import PluginSource
from plugman.plugins.sources import purls
from plugman.plugins.sources.kind import (
    SCHEMED,
    Fetcher,
    Followed,
    LockFields,
    Progress,
    SourceKind,
    pinned,
)
from plugman.plugins.sources.purls import PackageRef

if TYPE_CHECKING:
    from plugman.core.paths import Paths

# What pins a built-in kind's tree in its lock entry: a closed set.
PinField = Literal["commit", "sha256", "digest", "integrity"]
ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar")
GIT_PREFIXES = ("file://", "ssh://", "git@", "git://")  # what can only be a git URL
OCI = "oci://"


def plugman_sources() -> list[SourceKind]:
    return [
        Oci(("oci",), _oci, location="ref", pin_field="digest"),
        Archive(("archive",), _archive, pin_field="sha256"),
        Git(("github",), _git, location="repo"),
        Git(("url", "git-subdir"), _git),
        Npm(("npm",), _npm, location="package", pin_field="integrity"),
        Command(("command",), _command, location="command"),
        Folder(("path",), _path, location=""),
    ]


class Builtin(SourceKind):
    """A built-in kind: its pin is one of `PinField`, under that name in its lock entry."""

    def __init__(
        self,
        kinds: tuple[str, ...],
        fetch: Fetcher,
        location: str = "url",
        pin_field: PinField = "commit",
    ) -> None:
        super().__init__(kinds, fetch, location)
        self.pin_field: PinField = pin_field

    def pin_of(self, locked: LockedSource) -> str | None:
        return locked.get(self.pin_field) or None

    def version_of(self, pin: str | None) -> str:
        match self.pin_field:
            case "integrity":  # an npm pin is `VERSION#INTEGRITY`: the package's own version
                return (pin or "").partition("#")[0] or "unknown"
            case "commit" | "sha256" | "digest":
                return (pin or "unknown").removeprefix("sha256:")[:12]
            case _:
                assert_never(self.pin_field)

    def pinned(self, text: str, locked: LockedSource) -> str:
        """`text` with the pin of `locked`, shortened but for an OCI digest."""
        match self.pin_field:
            case "digest":
                return pinned(text, self.pin_of(locked), width=0)
            case "commit" | "sha256" | "integrity":
                return pinned(text, self.pin_of(locked))
            case _:
                assert_never(self.pin_field)


class Folder(Builtin):
    """`path`: a folder of the marketplace (pinned by the marketplace's commit), or one given
    on the command line."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        found = {"path": source.location}
        return found | ({"commit": marketplace_commit} if marketplace_commit else {})

    def from_lock(self, locked: LockedSource) -> PluginSource:
        return PluginSource("path", str(locked.get("path")), None, locked.get("commit"))

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        text = f"folder {locked.get('path')}"
        return self.pinned(text + (f" of marketplace {marketplace}" if marketplace else ""), locked)

    def names_local_file(self, source: PluginSource) -> bool:
        return False  # relative to its marketplace: checked to stay inside it when copied

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        local = (cwd / text).expanduser()
        if not (text.startswith((".", "/", "~")) or local.is_dir()):
            return None
        if not local.exists():
            raise UsageError(
                f"{text!r}: no such folder or archive",
                hint="give a plugin folder, a .zip/.tar.gz archive, or NAME[@MARKETPLACE]",
            )
        return PluginSource("path", str(local.resolve()))


class Git(Builtin):
    """`github` (`owner/repo`), `url` and `git-subdir` (a git URL): a commit of a repository."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        found = {self.location: source.location, "commit": pin}
        found |= {"ref": source.ref} if source.ref else {}
        return found | ({"path": source.subdir} if source.subdir else {})

    def from_lock(self, locked: LockedSource) -> PluginSource:
        location, path = str(locked.get(self.location)), locked.get("path")
        return PluginSource(locked.kind, location, None, locked.get("commit"), path)

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        ref = f" at {locked['ref']}" if locked.get("ref") else ""
        host = "GitHub repository" if self.location == "repo" else "git repository"
        text = f"{host} {locked.get(self.location)}{ref}"
        return self.pinned(
            f"folder {locked['path']} of {text}" if locked.get("path") else text, locked
        )

    def follow(self, locked: LockedSource, paths: Paths) -> Followed | None:
        """The commit the branch or tag `ref` (the default branch, without one) names now, by
        `git ls-remote`; None for a source pinned to a commit."""
        # lazy: plugins.sources.git not loaded by plugman list --json (+31 ms)
        from plugman.plugins.sources.git import follow

        return follow(locked, self.from_lock(locked))

    def plugin_name(self, source: PluginSource) -> str:
        return super().plugin_name(source).removesuffix(".git") or "plugin"

    def package_ref(self, locked: LockedSource, name: str, version: str) -> PackageRef:
        if self.location == "repo":
            return purls.github(locked)
        return purls.git(locked, name, version)

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        base, _, fragment = text.partition("#")
        if self.location == "repo" or SCHEMED.match(text):
            return None
        if base.startswith((*GIT_PREFIXES, "https://", "http://")) or base.endswith(".git"):
            # lazy: plugins.sources.giturl not loaded by plugman list --json (+19 ms)
            from plugman.plugins.sources.giturl import SHA

            # `#COMMIT` pins that commit (recorded as the ref too: a pin, never followed)
            sha = fragment.lower() if SHA.match(fragment.lower()) else None
            return PluginSource("url", base, ref=fragment or None, sha=sha)
        return None


class Archive(Builtin):
    """`archive`: a .zip or .tar(.gz) at a URL, or a local file, pinned by its sha256."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        return {"url": source.location, "sha256": pin}

    def from_lock(self, locked: LockedSource) -> PluginSource:
        return PluginSource("archive", str(locked.get("url")), None, locked.get("sha256"))

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        return self.pinned(f"archive {locked.get('url')}", locked)

    def package_ref(self, locked: LockedSource, name: str, version: str) -> PackageRef:
        return purls.archive(locked, name, version)

    def plugin_name(self, source: PluginSource) -> str:
        name = super().plugin_name(source)
        return next((name.removesuffix(s) for s in ARCHIVES if name.endswith(s)), name)

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        base, _, fragment = text.partition("#")
        if base.startswith(("http://", "https://", "file://")) and base.endswith(ARCHIVES):
            sha = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else None
            return PluginSource("archive", base, sha=sha)
        local = (cwd / text).expanduser()
        if base.endswith(ARCHIVES) and local.is_file():  # a local archive: fetched as file://
            return PluginSource("archive", local.resolve().as_uri())
        return None


class Oci(Builtin):
    """`oci`: a plugin artifact in an OCI registry, pinned by its manifest digest."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        return {"ref": source.location, "digest": pin}

    def from_lock(self, locked: LockedSource) -> PluginSource:
        return PluginSource("oci", str(locked.get("ref")), None, locked.get("digest"))

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        return self.pinned(f"OCI artifact {locked.get('ref')}", locked)

    def package_ref(self, locked: LockedSource, name: str, version: str) -> PackageRef:
        return purls.oci(locked)

    def follow(self, locked: LockedSource, paths: Paths) -> Followed | None:
        """The manifest digest the tag names now (one HEAD request); None for an artifact
        installed by digest."""
        # lazy: plugins.sources.oci not loaded by plugman list --json (+54 ms)
        from plugman.plugins.sources.oci import follow

        return follow(locked, paths)

    def names_local_file(self, source: PluginSource) -> bool:
        return False  # a registry reference

    def plugin_name(self, source: PluginSource) -> str:
        # lazy: core.oci.reference not loaded by plugman list --json (+11 ms)
        from plugman.core.oci import reference

        return reference.parse(source.location).repository.rsplit("/", 1)[-1]

    def claim(self, text: str, cwd: Path) -> PluginSource | None:
        if not text.startswith(OCI):
            return None
        # lazy: core.oci.reference not loaded by plugman list --json (+11 ms)
        from plugman.core.oci import reference

        return PluginSource("oci", str(reference.parse(text)))


class Npm(Builtin):
    """`npm`: a package of an npm registry, pinned by its exact version and integrity."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        # lazy: plugins.sources.npm not loaded by plugman list --json (+140 ms)
        from plugman.plugins.sources.npm import lock_fields

        return lock_fields(source, pin)

    def from_lock(self, locked: LockedSource) -> PluginSource:
        # lazy: plugins.sources.npm not loaded by plugman list --json (+140 ms)
        from plugman.plugins.sources.npm import from_lock

        return from_lock(locked)

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        version = f"@{locked['version']}" if locked.get("version") else ""
        text = f"npm package {locked.get('package')}{version}"
        return self.pinned(
            text + (f" from {locked['registry']}" if locked.get("registry") else ""), locked
        )

    def follow(self, locked: LockedSource, paths: Paths) -> Followed | None:
        """The version (and integrity) the dist-tag `version` names now, from the registry's
        packument; None for an exact version or a range."""
        # lazy: plugins.sources.npm not loaded by plugman list --json (+140 ms)
        from plugman.plugins.sources.npm import follow

        return follow(locked)

    def names_local_file(self, source: PluginSource) -> bool:
        return False  # a package name; its registry is checked when it is asked

    def package_ref(self, locked: LockedSource, name: str, version: str) -> PackageRef:
        return purls.npm(locked)


class Command(Builtin):
    """`command`: a command that would build the plugin; never run (see `_command`)."""

    def lock_fields(
        self, source: PluginSource, pin: str | None, marketplace_commit: str | None
    ) -> LockFields:
        return {"command": source.location}

    def from_lock(self, locked: LockedSource) -> PluginSource:
        return PluginSource("command", str(locked.get("command")))

    def describe(self, locked: LockedSource, marketplace: str | None) -> str:
        return f"command {locked.get('command')} (plugman does not run it)"


def _path(
    source: PluginSource, dest: Path, base: Path | None, _progress: Progress
) -> tuple[Path, str | None]:
    # lazy: plugins.sources.local not loaded by plugman list --json (+11 ms)
    from plugman.plugins.sources.local import copy_plugin

    return copy_plugin(source.location, base, dest), None


def _git(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    # lazy: plugins.sources.git not loaded by plugman list --json (+31 ms)
    from plugman.plugins.sources.git import fetch_git

    return fetch_git(source, dest, progress)


def _archive(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    # lazy: plugins.sources.archive not loaded by plugman list --json (+130 ms)
    from plugman.plugins.sources.archive import fetch_archive

    return fetch_archive(source, dest, progress)


def _oci(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    # lazy: plugins.sources.oci not loaded by plugman list --json (+54 ms)
    from plugman.plugins.sources.oci import fetch_oci

    return fetch_oci(source, dest, progress)


def _npm(
    source: PluginSource, dest: Path, _base: Path | None, progress: Progress
) -> tuple[Path, str | None]:
    # lazy: plugins.sources.npm not loaded by plugman list --json (+140 ms)
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
