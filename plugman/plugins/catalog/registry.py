"""The registry of known marketplaces (`<state>/marketplaces.json`) and their sources.

Each marketplace name maps to its source: a local folder read in place, or a git repository or
marketplace.json URL fetched into `<cache>/marketplaces/<name>/`. Which names a source may use
(reserved names only from GitHub's `anthropics` organization) and which sources the managed
policy allows are decided here, before anything is fetched.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config.policy_plugins import registry_path as registry_path  # also registry's own
from plugman.core import identity
from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import JSONObject
from plugman.core.paths import Paths
from plugman.core.state import read_state, timestamp
from plugman.core.transaction import Transaction
from plugman.manifest import marketplace as catalog
from plugman.manifest.names import RESERVED_MARKETPLACES, marketplace_refusal, unsafe_reason
from plugman.plugins.sources.builtin import GIT_PREFIXES
from plugman.plugins.sources.kind import DRIVE

FORMAT = 1


GITHUB = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:@(?P<ref>[^\s@]+))?$")


GITHUB_URL = "https://github.com"


POLICY_HINT = "ask your administrator, or use an allowed marketplace"
PATH_PREFIXES = ("/", "./", "../", "~", ".\\", "..\\")  # what can only be a path


class MarketplaceSource(NamedTuple):
    kind: str  # directory | git | url
    location: str  # an absolute folder, a git URL or a marketplace.json URL
    ref: str | None = None
    helper: str | None = None  # a url marketplace's headers helper (a command, never its output)


class Known(NamedTuple):
    name: str
    source: MarketplaceSource
    root: Path  # the folder holding .claude-plugin/marketplace.json
    commit: str | None


def classify(text: str, cwd: Path, helper: str | None = None) -> MarketplaceSource:
    """What kind of marketplace source `text` is (a folder, a git repository, a URL); `helper`:
    the headers helper of a marketplace.json URL (plugman.core.http_auth)."""
    source = _classify(text, cwd)
    if helper is None:
        return source
    if source.kind != "url":
        raise PlugmanError(
            "a headers helper is for a marketplace.json URL only",
            hint="a git marketplace authenticates through git's credential helpers or SSH "
            "(see docs/private-sources.md); a folder needs none",
        )
    if not source.location.lower().startswith("https://"):
        raise PlugmanError(
            "a headers helper runs only for an https:// marketplace URL (as in Claude Code)",
            hint="use the marketplace's https:// URL",
        )
    if not helper.strip() or any(not (" " <= char <= "~") for char in helper):
        raise PlugmanError(
            f"headers helper {helper!r} is empty or not printable ASCII",
            hint="give the command that prints the headers, e.g. --headers-helper 'get-token'",
        )
    return source._replace(helper=helper)


def _classify(text: str, cwd: Path) -> MarketplaceSource:
    local = (cwd / Path(text).expanduser()) if not text.startswith(("http", "git@")) else None
    if local is not None and local.exists():
        if local.is_file() and not local.name.endswith(".json"):
            raise PlugmanError(
                f"{text!r} is a file, not a marketplace: plugman adds a marketplace from its "
                "folder (the one holding .claude-plugin/marketplace.json) or that JSON file",
                hint="for an archive, extract it and add the folder it holds",
            )
        folder = catalog.root_of(local) if local.is_file() else local
        return MarketplaceSource("directory", str(folder.resolve()))
    if local is not None and (text.startswith(PATH_PREFIXES) or DRIVE.match(text.lower())):
        relative = not Path(text).expanduser().is_absolute()
        raise PlugmanError(
            f"the folder {text!r} does not exist" + (f" (looked for {local})" if relative else ""),
            hint="check the path"
            + ("; a relative path is read from the project folder" if relative else ""),
        )
    base, _, ref = text.partition("#")
    if base.startswith(("http://", "https://")) and base.endswith(".json"):
        return MarketplaceSource("url", base)
    if base.startswith(GIT_PREFIXES) or base.endswith(".git") or base.startswith("https://"):
        return MarketplaceSource("git", base, ref or None)
    github = GITHUB.match(text)
    if github:
        url = f"{os.environ.get('PLUGMAN_GITHUB_URL', GITHUB_URL)}/{github['repo']}"
        return MarketplaceSource(
            "git", url if url.endswith(".git") else url + ".git", github["ref"]
        )
    raise PlugmanError(
        f"{text!r} is not a marketplace source plugman understands",
        hint="use a folder, a git URL (https://, ssh://, file://, with an optional #ref), "
        "owner/repo[@ref], or an https:// URL of a marketplace.json",
    )


class Registered(NamedTuple):
    """A marketplace's entry in the registry file, read once where the file is read; `to_json`
    writes it back under the keys (and in the order) the file always had."""

    source: MarketplaceSource
    root: str  # the folder holding .claude-plugin/marketplace.json
    commit: str | None
    updated: str | None  # when it was last fetched (None: not said)
    # who had it registered (user, project, managed: `plugman.config.policy_plugins.forced`);
    # None: an older plugman's entry, of unknown origin
    origin: str | None

    @classmethod
    def from_json(cls, entry: JSONObject) -> Registered:
        source = MarketplaceSource(
            entry["kind"], entry["location"], entry.get("ref"), entry.get("headers_helper")
        )
        origin = entry.get("origin")
        commit, updated = entry.get("commit"), entry.get("updated")
        return cls(source, entry["root"], commit, updated, None if origin is None else str(origin))

    def to_json(self) -> JSONObject:
        source = self.source
        return (
            {"kind": source.kind, "location": source.location, "ref": source.ref}
            | {"root": self.root, "commit": self.commit}
            | ({"updated": self.updated} if self.updated is not None else {})
            | ({"headers_helper": source.helper} if source.helper else {})
            | ({"origin": self.origin} if self.origin is not None else {})
        )

    def known(self, name: str) -> Known:
        return Known(name, self.source, Path(self.root), self.commit)


def registry(paths: Paths) -> dict[str, Registered]:
    """The registered marketplaces by name, as the registry file holds them."""
    data = read_state(registry_path(paths), "move it away and add your marketplaces again")
    found = (data or {}).get("marketplaces", {})
    return {name: Registered.from_json(entry) for name, entry in found.items()}


def known(paths: Paths) -> dict[str, Known]:
    """Every registered marketplace, by name."""
    return {name: entry.known(name) for name, entry in sorted(registry(paths).items())}


def write_registry(paths: Paths, entries: dict[str, Registered], tx: Transaction) -> None:
    listed = {name: entry.to_json() for name, entry in sorted(entries.items())}
    body = {"format": FORMAT, "marketplaces": listed}
    data = None if not entries else (json.dumps(body, indent=2) + "\n").encode()
    tx.write(registry_path(paths), data)


def check_name(name: str, source: MarketplaceSource, *, given: bool = False) -> None:
    """Refuse a marketplace name (its own, or the one given with --name) that is unsafe,
    passes for another, or that Claude Code refuses (spaces, '..', its own sources' names,
    impersonating an official one), or that is reserved for Anthropic's marketplaces while
    `source` is not one of theirs (as Claude Code does). `given`: a name the user chose
    (--name, a plugman.toml key), not the marketplace's own."""
    reason = unsafe_reason(name) or lookalike(name)
    if reason:
        raise PlugmanError(
            f"marketplace name {name!r} {reason}; plugman will not use it",
            hint="choose a name of letters, digits and '-'"
            if given
            else "ask the marketplace's owner to fix its name, or pass --name",
        )
    refused = marketplace_refusal(name)
    if refused:
        _code, reason, hint = refused
        other = "" if given else ": ask its owner to rename it, or pass --name with another"
        raise PlugmanError(
            f"marketplace name {name!r} {reason} (Claude Code refuses it too)", hint=hint + other
        )
    if name.lower() in RESERVED_MARKETPLACES and not official(source):
        raise PlugmanError(
            f"the name {name!r} is reserved for official Anthropic marketplaces and can only "
            "be used with GitHub sources from the 'anthropics' organization",
            hint="add the marketplace from github.com/anthropics, or give this copy another "
            "name with --name",
        )


def lookalike(name: str) -> str | None:
    """Why a marketplace or plugin name could pass for another one: a non-ASCII character
    (Cyrillic U+0456, fullwidth U+FF47 or the hyphen U+2010 look like 'i', 'g' and '-')."""
    odd = next((char for char in name if not char.isascii()), None)
    if odd is None:
        return None
    if 0xD800 <= ord(odd) <= 0xDFFF:
        return f"contains the lone surrogate U+{ord(odd):04X}, which is not valid text"
    return (
        f"contains the non-ASCII character {odd!r} (U+{ord(odd):04X}), which can pass for "
        "another letter"
    )


def official(source: MarketplaceSource) -> bool:
    """Whether a marketplace is one of Anthropic's own, as Claude Code decides it: fetched with
    git from GitHub's `anthropics` organization (`PLUGMAN_GITHUB_URL` stands for GitHub),
    however the URL is spelled (`plugman.core.identity.git`: a `..` segment, case, `.git`,
    ssh or https, percent-escapes all resolve to the repository git reaches)."""
    if source.kind != "git":
        return False
    found = identity.git(source.location, identity.github_base())
    return found.startswith("github.com/anthropics/")


def remote(source: MarketplaceSource) -> bool:
    """A marketplace fetched from another machine (a URL, or a git URL that is not local)."""
    if source.kind == "url":
        return True
    return source.kind == "git" and not source.location.lower().startswith(("file:", "/"))


def check_policy(paths: Paths, source: MarketplaceSource) -> None:
    """Refuse a marketplace source the managed policy does not allow."""
    # lazy: config.policy takes ~3 ms to import, only this path needs it
    from plugman.config import policy

    found = policy.marketplace_verdict(
        source.kind, source.location, source.ref, policy.managed(paths)
    )
    if found is not None and not found.allowed:
        raise PlugmanError(
            f"marketplace {source.location!r} is {found.why} (managed policy)",
            where=found.origin or None,
            hint=POLICY_HINT,
        )


def refuse_project_helper(name: str, value: dict[str, Any]) -> None:
    """A project's plugman.toml may name a url marketplace's headers helper, but sync does not
    run a command a cloned repository names (nothing in a project approves itself): the user
    adds that marketplace once, knowingly, and sync then finds it known."""
    helper = value.get("headersHelper")
    if helper is None:
        return
    raise PlugmanError(
        f"the project declares marketplace {name!r} with the headers helper `{helper}`; "
        "plugman does not run a command a project names",
        hint=f"if you trust it, add the marketplace yourself, then sync again: plugman "
        f"marketplace add {value.get('source')} --name {name} --headers-helper '{helper}'",
    )


def credentials(known: Known | None) -> AbstractContextManager[None]:
    """Around fetching a plugin of `known`: its archive, when on the url marketplace's own
    origin, downloads with the marketplace's headers helper (plugman.core.http_auth)."""
    # lazy: core.http_auth takes ~5 ms to import, only this path needs it
    from plugman.core import http_auth

    helper = known.source.helper if known and known.source.kind == "url" else None
    return http_auth.inherit(known.source.location if known else "", helper, known and known.name)


def check_plugin_policy(paths: Paths, plugin_id: str) -> None:
    """Refuse a plugin the managed policy blocks: `enabledPlugins: {"name@market": false}`,
    for that plugin under any marketplace name of the same source or installed directly, and
    every plugin of a marketplace the policy blocks (`plugman.config.policy_plugins`)."""
    refused = plugin_block(paths, plugin_id)
    if refused is not None:
        raise refused


def plugin_block(paths: Paths, plugin_id: str) -> PlugmanError | None:
    """The refusal of a plugin the managed policy blocks, naming the rule and its file (see
    `check_plugin_policy`), or None; sync skips such a plugin with it as the warning."""
    # lazy: config.policy takes ~3 ms to import, only this path needs it
    from plugman.config import policy, policy_plugins

    rules = policy.managed(paths)
    if not policy_plugins.speaks(rules):
        return None
    found = policy_plugins.blocked(rules, plugin_id, policy_plugins.markets(paths))
    if found is None:
        return None
    return PlugmanError(
        f"plugin {plugin_id} is blocked by managed policy ({found.why}, {found.origin})",
        hint="ask your administrator; run: plugman policy explain " + plugin_id,
    )


def blocked_plugins(paths: Paths) -> set[str]:
    """The plugins managed policy blocks, as name@marketplace."""
    # lazy: config.policy takes ~3 ms to import, only this path needs it
    from plugman.config import policy

    return {r.plugin for r in policy.managed(paths).plugins if not r.enabled}


def portable(source: MarketplaceSource, project: Path) -> str:
    """How a project's plugman.toml names this source: folders inside the project relatively."""
    if source.kind == "directory" and Path(source.location).is_relative_to(project):
        return "./" + Path(source.location).relative_to(project).as_posix()
    return source.location


def entry_for(
    source: MarketplaceSource, root: Path, commit: str | None, origin: str = "user"
) -> Registered:
    """A registry entry fetched now; `origin`: who had it registered (user, or a project's or
    the managed settings' declaration: `plugman.config.policy_plugins.forced` tells them
    apart), always written: an entry without one (an older plugman's) is of unknown origin,
    never forced."""
    return Registered(source, str(root), commit, timestamp(), origin)
