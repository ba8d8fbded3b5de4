"""What plugman has installed: one JSON record per scope (and project), under the state dir.

A record lists each installed plugin (an `InstalledPlugin`: source, pin, version, content hash,
time, enabled, consent) and what plugman created in the scope's declaration file, so uninstall
can undo exactly that. JSON is read and written only here (`InstalledPlugin.from_json` and
`to_json`); the rest of plugman reads attributes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, get_args

from plugman.core.errors import PlugmanError
from plugman.core.fs import current
from plugman.core.jsonvalue import PluginFields
from plugman.core.owned import Owned
from plugman.core.paths import Paths
from plugman.core.sources import LockedSource

FORMAT = 1
# The scopes plugman writes, lowest precedence first, and every layer a resolved entry can come
# from, highest first (docs/claude-format.md#scopes-and-precedence). The one place they are spelled.
Scope = Literal["user", "project", "local"]
Layer = Literal["managed", "local", "project", "user", "plugin", "claude.ai"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
PRECEDENCE: tuple[Layer, ...] = ("managed", "local", "project", "user", "plugin", "claude.ai")


def as_scope(text: str) -> Scope | None:
    """`text` as a scope plugman writes (a word read from a state file), or None."""
    return next((scope for scope in SCOPES if scope == text), None)


def timestamp() -> str:
    """Now, as every state file records a time (UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record_path(paths: Paths, scope: Scope) -> Path:
    folder = paths.state_dir / "installed"
    if scope == "user":
        return folder / "user.json"
    key = hashlib.sha256(str(paths.project_dir).encode()).hexdigest()[:16]
    return folder / f"{scope}-{key}.json"


class InstalledPlugin(NamedTuple):
    """One installed plugin as its scope's record holds it: made by `made` (the one constructor
    install, sync and update use), changed with `_replace`, written with `to_json` under the
    keys the file always had. (A NamedTuple: `dataclasses` costs `plugman list` ~7 ms to
    import.)"""

    name: str
    marketplace: str
    version: str
    source: LockedSource  # the pinned source, as plugman.lock writes it (plugins.pins)
    content_hash: str  # its tree in the store
    installed_at: str | None = None
    enabled: bool = True
    explicit: bool = False  # asked for by name (not only installed as a dependency)
    required_by: tuple[str, ...] = ()  # the installed plugins that depend on it
    entry: PluginFields | None = None  # JSON: the marketplace entry, when it defines it
    components: Mapping[str, list[str]] = MappingProxyType({})  # kind -> names (`list`)
    # someone on this machine chose this content: its servers and hooks run (config.scopes)
    consented: bool = False
    # its entry in the declaration file when installed (a specifier or a table), which uninstall
    # expects to find there still
    declared: str | dict[str, Any] | None = None
    # "allowed": installed with hidden text by --allow-hidden-text (plugman.manifest.hidden)
    hidden_text: str | None = None
    # who signed it (plugman.plugins.supply_chain.signing): a key's fingerprint, `sha256:<hex>`;
    # None: unsigned
    signer: str | None = None
    # installed because this machine's managed policy forces it, not because the project
    # declares it: kept out of plugman.lock (a teammate without that policy has no such pin)
    forced: bool = False
    # when its signed OCI manifest says it was published (`org.opencontainers.image.created`):
    # update refuses an older one (plugman.plugins.lifecycle.rollback); None: unsigned or not said
    released: str | None = None

    @classmethod
    def made(
        cls,
        content: PluginContent,
        content_hash: str,
        previous: InstalledPlugin | None,
        *,
        explicit: bool,
        consented: bool,
        required_by: tuple[str, ...],
        declared: str | dict[str, Any] | None,
        hidden_text: str | None = None,
        signer: str | None = None,
        released: str | None = None,
    ) -> InstalledPlugin:
        """`content` installed now under `content_hash`; enabled as before (else enabled)."""
        return cls(
            **content._asdict(),
            content_hash=content_hash,
            installed_at=timestamp(),
            enabled=previous.enabled if previous else True,
            explicit=explicit,
            required_by=tuple(sorted(set(required_by))),
            consented=consented,
            declared=declared,
            hidden_text=hidden_text,
            signer=signer,
            released=released,
        )

    def to_json(self) -> dict[str, Any]:
        data = self._asdict()
        data["source"] = self.source.table()
        data["components"] = dict(self.components)
        data["required_by"] = list(self.required_by)
        for key, unset in (
            ("consented", False),
            ("declared", None),
            ("installed_at", None),
            ("hidden_text", None),
            ("signer", None),
            ("forced", False),
            ("released", None),
        ):
            if data[key] == unset:
                del data[key]
        return data

    @classmethod
    def from_json(cls, data: object, where: str) -> InstalledPlugin:
        """An entry as any plugman wrote it (older ones lack `entry`, `components`,
        `required_by`, `explicit`; only `install` writes `consented`)."""
        if not isinstance(data, dict):
            raise _bad(where, "an installed plugin is not a JSON object")
        for key, kinds in _KINDS.items():
            if key in data and not isinstance(data[key], kinds):
                raise _bad(where, f"{key!r} of an installed plugin has the wrong type")
        if any(key not in data for key in _REQUIRED):
            raise _bad(where, f"an installed plugin lacks one of {', '.join(_REQUIRED)}")
        known = {key: data[key] for key in _KINDS if key in data}
        known["required_by"] = tuple(str(k) for k in data.get("required_by", ()))
        components = data.get("components") or {}
        if not all(isinstance(names, list) for names in components.values()):
            raise _bad(where, "'components' of an installed plugin has the wrong type")
        known["components"] = {str(k): [str(n) for n in v] for k, v in components.items()}
        known["consented"] = data.get("consented") is True
        known["source"] = LockedSource.parse(data["source"], where, HINT)
        return cls(**known)


class PluginContent(NamedTuple):
    """What a tree installed is: the fields of an `InstalledPlugin` its content decides."""

    name: str
    marketplace: str
    version: str
    source: LockedSource
    entry: PluginFields | None
    components: dict[str, list[str]]


_REQUIRED = ("name", "marketplace", "version", "source", "content_hash")
_KINDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "marketplace": str,
    "version": str,
    "source": dict,
    "content_hash": str,
    "installed_at": str,
    "enabled": bool,
    "explicit": bool,
    "required_by": list,
    "entry": (dict, type(None)),
    "components": (dict, type(None)),
    "consented": bool,
    "declared": (str, dict),
    "hidden_text": str,
    "signer": str,
    "forced": bool,
    "released": str,
}


HINT = "run 'plugman doctor', or move the file away and reinstall"


def _bad(where: str, message: str) -> PlugmanError:
    return PlugmanError(f"not a plugman state file: {message}", hint=HINT, where=where)


def installed_plugins(data: Mapping[str, Any], where: str) -> dict[str, InstalledPlugin]:
    """The `plugins` table of a record file's JSON, typed."""
    found = data.get("plugins", {})
    if not isinstance(found, dict):
        raise _bad(where, "'plugins' is not a JSON object")
    return {key: InstalledPlugin.from_json(value, where) for key, value in found.items()}


def _table(data: Mapping[str, Any], key: str, kind: type, where: str) -> dict[str, Any]:
    """A record's table of plugin id -> a `kind` value (a copy)."""
    found = data.get(key, {})
    if not isinstance(found, dict) or not all(isinstance(v, kind) for v in found.values()):
        raise _bad(where, f"{key!r} has the wrong type")
    return {plugin_id: kind(value) for plugin_id, value in found.items()}


class InstallRecord:
    """The installed plugins of one scope, their userConfig values, and what plugman declared
    for them, what it created in files it shares with the user (`owned`); `data` is the rest of
    the file (the scope), kept as read."""

    def __init__(self, path: Path, scope: Scope, project: Path | None, data: dict[str, Any]):
        where = str(path)
        self.path = path
        self.scope = scope
        self.project = project
        self.plugins = installed_plugins(data, where)
        # plugin id -> its non-sensitive userConfig values (JSON values, as given)
        self.config: dict[str, dict[str, Any]] = _table(data, "config", dict, where)
        # plugin id -> the option keys whose sensitive values the secret store holds
        self.secrets: dict[str, list[str]] = _table(data, "secrets", list, where)
        marketplaces = data.get("declared_marketplaces", [])
        if not isinstance(marketplaces, list) or not all(isinstance(m, str) for m in marketplaces):
            raise _bad(where, "'declared_marketplaces' has the wrong type")
        # the marketplaces plugman named in the project's plugman.toml for these plugins
        self.declared_marketplaces: list[str] = list(marketplaces)
        self._owned = Owned.parse(data.get("owned", {}), where)
        self.data = data

    @classmethod
    def load(cls, paths: Paths, scope: Scope) -> InstallRecord:
        path = record_path(paths, scope)
        project = None if scope == "user" else paths.project_dir
        data = read_record(path) or {"format": FORMAT, "scope": scope, "plugins": {}, "owned": {}}
        if project is not None:
            data["project"] = str(project)
        return cls(path, scope, project, data)

    @property
    def owned(self) -> Owned:
        """What plugman created in declaration files and `.mcp.json` (plugman.core.owned); the
        file keeps an `owned` table from the first time it is asked for."""
        self.data.setdefault("owned", {})
        return self._owned

    def to_bytes(self) -> bytes | None:
        """The file's new content; None (delete it) when nothing is installed in the scope."""
        if not self.plugins and not self.owned:
            return None
        self.data["plugins"] = {key: value.to_json() for key, value in self.plugins.items()}
        if "owned" in self.data:
            self.data["owned"] = self._owned.to_json()
        tables = {
            "config": {k: v for k, v in self.config.items() if v},
            "secrets": {k: v for k, v in self.secrets.items() if v},
            "declared_marketplaces": self.declared_marketplaces,
        }
        for key, value in tables.items():
            if value:
                self.data[key] = value
            else:
                self.data.pop(key, None)
        return (json.dumps(self.data, indent=2, sort_keys=True) + "\n").encode()


def read_state(path: Path, hint: str, newest: int = FORMAT) -> dict[str, Any] | None:
    """A JSON state file plugman wrote (None when absent); unreadable or newer than `newest`
    is an error."""
    try:
        raw = current(path)
        if raw is None:
            return None
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise PlugmanError(f"unreadable: {exc}", hint=hint, where=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get("format", 0), int):
        raise PlugmanError("not a plugman state file", hint=hint, where=str(path))
    if data.get("format", 0) > newest:
        raise PlugmanError(
            f"written by a newer plugman (format {data['format']})",
            hint="upgrade plugman",
            where=str(path),
        )
    return data


def read_record(path: Path) -> dict[str, Any] | None:
    return read_state(path, "run 'plugman doctor', or move the file away and reinstall")


def all_installed(paths: Paths) -> list[tuple[str, InstalledPlugin]]:
    """(id, plugin) of every record of every scope and every project."""
    folder = paths.state_dir / "installed"
    if not folder.is_dir():
        return []
    return [
        pair
        for path in sorted(folder.glob("*.json"))
        for pair in installed_plugins(read_record(path) or {}, str(path)).items()
    ]


def referenced_hashes(paths: Paths) -> set[str]:
    """Every content hash any record (any scope, any project) refers to: the store's roots."""
    return {plugin.content_hash for _id, plugin in all_installed(paths)}


def installed_ids(paths: Paths) -> set[str]:
    """Every plugin id installed in any scope of any project."""
    return {plugin_id for plugin_id, _plugin in all_installed(paths)}
