"""Where secrets live: sensitive userConfig values and OAuth tokens, never in plugman's other
files, output or logs.

The OS keychain through `keyring` when it has a working backend (a test write, read and delete
succeed); otherwise `<config>/secrets.json`, mode 0600, as Claude Code and Gemini CLI store
theirs on Linux (`~/.claude/.credentials.json`, plain JSON, mode 0600).
`PLUGMAN_SECRETS=keyring|file` forces either (`keyring` with no working backend is an error,
never a silent fallback).
`keyrings.alt`'s plaintext and "fail" backends do not count as working: they only encode.

Keys are plain strings chosen by the owner of each kind of secret (`plugin-config:<id>:<KEY>`,
`oauth:<server url>`); values are strings (JSON for structured ones). `keyring` is imported only
when a secret is read or written, never on plugman's start-up path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.fs import atomic_write
from plugman.core.paths import Paths

SERVICE = "plugman"  # the keychain's service name for every plugman secret
VARIABLE = "PLUGMAN_SECRETS"
Kind = Literal["keyring", "file"]
# Backends that store nothing safely, by module: keyring's "fail" and keyrings.alt's files.
_UNSAFE = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")
# While `recording()` is on: each key read from a store, with whether it held a value (never
# the value): a server's launch plan names the keys its start reads (runtime.launch.server_plans).
_recorders: list[dict[str, bool]] = []


@contextlib.contextmanager
def recording() -> Iterator[dict[str, bool]]:
    """Every key read from a store in this block, and whether it held a value."""
    seen: dict[str, bool] = {}
    _recorders.append(seen)
    try:
        yield seen
    finally:
        _recorders.remove(seen)


def _noted(key: str, value: str | None) -> str | None:
    for seen in _recorders:
        seen[key] = bool(value)
    return value


class SecretError(PlugmanError):
    pass


class Store(Protocol):
    kind: Kind
    where: str  # the keychain backend's name, or the file's path

    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...
    def delete(self, key: str) -> bool: ...


class FileStore:
    """One JSON object in a 0600 file, replaced atomically on every change."""

    kind: Kind = "file"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise SecretError(
                f"cannot read the secret store {self.path}: {exc}",
                hint=f"fix or remove {self.path} (you will have to enter its secrets again)",
            ) from None
        if not isinstance(data, dict):
            raise SecretError(f"{self.path} is not a JSON object", hint=f"remove {self.path}")
        return {str(k): str(v) for k, v in data.items()}

    def _save(self, data: dict[str, str]) -> None:
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        atomic_write(self.path, text.encode(), private=True, mode=0o600)
        self.path.chmod(0o600)  # also when someone loosened it

    def get(self, key: str) -> str | None:
        return _noted(key, self._load().get(key))

    def set(self, key: str, value: str) -> None:
        data = self._load()
        if data.get(key) != value:
            data[key] = value
            self._save(data)

    def delete(self, key: str) -> bool:
        data = self._load()
        if data.pop(key, None) is None:
            return False
        self._save(data)
        return True


class KeyringStore:
    kind: Kind = "keyring"

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.where = f"{type(backend).__module__}.{type(backend).__name__}"

    def get(self, key: str) -> str | None:
        found = self.backend.get_password(SERVICE, key)
        return _noted(key, None if found is None else str(found))

    def set(self, key: str, value: str) -> None:
        self.backend.set_password(SERVICE, key, value)

    def delete(self, key: str) -> bool:
        import keyring.errors  # lazy: keyring is not loaded by `plugman config resolve` (+48 ms)

        try:
            self.backend.delete_password(SERVICE, key)
        except keyring.errors.PasswordDeleteError:
            return False
        return True


def file_path(paths: Paths) -> Path:
    return paths.config_dir / "secrets.json"


def loose(paths: Paths) -> str | None:
    """What is wrong with the secrets file's permissions (others may read it), if anything."""
    path = file_path(paths)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None
    return f"the secret store is mode {mode:o}, not 600" if mode & 0o077 else None


def describe(paths: Paths, env: Mapping[str, str] | None = None) -> str:
    """Which store is in use, for `paths` and `doctor` (or why none can be opened)."""
    try:
        store = open_store(paths, env)
    except PlugmanError as exc:
        return f"unavailable: {exc.message}"
    return f"{store.kind}: {store.where}"


def open_store(paths: Paths, env: Mapping[str, str] | None = None) -> Store:
    """The store in use: forced by PLUGMAN_SECRETS, else the keychain if it works, else the
    file."""
    env = os.environ if env is None else env
    forced = env.get(VARIABLE, "").strip().lower()
    if forced not in ("", "keyring", "file"):
        raise UsageError(
            f"{VARIABLE}={forced!r} is not a secret store",
            hint=f"set {VARIABLE} to keyring or file, or unset it to choose automatically",
        )
    if forced == "file":
        return FileStore(file_path(paths))
    backend, why = _keyring(env)
    if backend is not None:
        return KeyringStore(backend)
    if forced == "keyring":
        raise SecretError(
            f"{VARIABLE}=keyring, but the OS keychain does not work here: {why}",
            hint=f"unlock or install a keychain (Secret Service), or set {VARIABLE}=file",
        )
    return FileStore(file_path(paths))


def _keyring(env: Mapping[str, str]) -> tuple[Any, str]:
    """A keyring backend that passes a test write, read and delete; else None and why."""
    if sys.platform == "linux" and not env.get("DBUS_SESSION_BUS_ADDRESS"):
        # Every Linux keychain backend (Secret Service, KWallet) talks D-Bus: without a session
        # bus none can work, and importing keyring to find that out costs about 130 ms.
        return None, "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)"
    try:
        import keyring  # lazy (~130 ms, above) and optional
    except ImportError:
        return None, "the keyring package is not installed"
    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # any backend failure means "no keychain"
        return None, str(exc) or type(exc).__name__
    module = type(backend).__module__
    if module.startswith(_UNSAFE) or ("chainer" in module and not _chained(backend)):
        return None, f"no safe backend ({module})"
    probe = f"plugman-probe-{os.getpid()}"
    try:
        backend.set_password(SERVICE, probe, "probe")
        ok = backend.get_password(SERVICE, probe) == "probe"
        backend.delete_password(SERVICE, probe)
    except Exception as exc:  # a locked or absent Secret Service, D-Bus errors
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (backend, "") if ok else (None, "a test write did not read back")


def _chained(backend: Any) -> bool:
    """Whether a ChainerBackend holds any backend that is not an unsafe one."""
    return any(not type(b).__module__.startswith(_UNSAFE) for b in getattr(backend, "backends", []))
