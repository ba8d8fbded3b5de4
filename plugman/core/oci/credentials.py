"""Where the credentials for a registry come from, first found wins:

1. `plugman registry login REGISTRY`: the secret store (core/secrets.py), key `oci:<registry>`;
2. the Docker config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`), as docker
   reads it: `credHelpers[registry]`, then `credsStore`, each run as
   `docker-credential-<helper> get` with the server on stdin, then `auths[registry]` (`auth`
   is base64 `user:password`; `identitytoken` is an OAuth2 refresh token).

A credential never appears in a repr, a message or a log: only where it came from (`origin`).
A helper that is missing or fails is a warning, and the registry is then asked anonymously.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugman.core import progress, secrets
from plugman.core.paths import Paths

SECRET_PREFIX = "oci:"
HUB = "docker.io"
HUB_ALIASES = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io"})
HUB_SERVER = "https://index.docker.io/v1/"  # the key docker uses for Docker Hub
HELPER_TIMEOUT = 30.0


class Credential:
    """A user name and password (or token), or an identity token, and where it came from."""

    __slots__ = ("identity_token", "origin", "password", "username")

    def __init__(
        self,
        origin: str,
        username: str | None = None,
        password: str | None = None,
        identity_token: str | None = None,
    ) -> None:
        self.origin = origin
        self.username = username
        self.password = password
        self.identity_token = identity_token

    def __repr__(self) -> str:  # never the secret
        return f"Credential(origin={self.origin!r}, username={self.username!r})"


def normalize(registry: str) -> str:
    """The one spelling of a registry for credentials: host[:port], lower case, no scheme or
    path; Docker Hub's names as docker.io."""
    host = registry.split("://", 1)[-1].split("/", 1)[0].lower()
    return HUB if host in HUB_ALIASES else host


def secret_key(registry: str) -> str:
    return SECRET_PREFIX + normalize(registry)


def find(paths: Paths, registry: str, env: Mapping[str, str] | None = None) -> Credential | None:
    """The credentials for `registry`, or None (then it is asked anonymously)."""
    env = os.environ if env is None else env
    return stored(paths, registry, env) or docker(registry, env)


def stored(paths: Paths, registry: str, env: Mapping[str, str]) -> Credential | None:
    """What `plugman registry login` stored."""
    text = secrets.open_store(paths, env).get(secret_key(registry))
    if text is None:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict) or not isinstance(found.get("password"), str):
        progress.warn(f"the stored login for {normalize(registry)} is damaged; it is ignored")
        return None
    origin = f"plugman registry login {normalize(registry)}"
    return Credential(origin, str(found.get("username") or ""), found["password"])


def docker_config(env: Mapping[str, str]) -> Path:
    folder = env.get("DOCKER_CONFIG")
    if folder:
        return Path(folder).expanduser() / "config.json"
    return Path(env.get("HOME") or Path.home()).expanduser() / ".docker" / "config.json"


def docker(registry: str, env: Mapping[str, str]) -> Credential | None:
    """The Docker config's credentials for `registry` (helpers first, then `auths`)."""
    path = docker_config(env)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        progress.warn(f"cannot read the Docker config {path}: {exc}; it is ignored")
        return None
    if not isinstance(data, dict):
        return None
    wanted = normalize(registry)
    helpers = data.get("credHelpers")
    helper = helpers.get(wanted) if isinstance(helpers, dict) else None
    for name in (helper, data.get("credsStore")):
        if isinstance(name, str) and name:
            found = run_helper(name, wanted, env)
            if found is not None:
                return found
    auths = data.get("auths")
    if not isinstance(auths, dict):
        return None
    for key, entry in auths.items():
        if normalize(str(key)) == wanted and isinstance(entry, dict):
            return _auth_entry(entry, f"the Docker config {path}")
    return None


def _auth_entry(entry: dict[str, Any], origin: str) -> Credential | None:
    token = entry.get("identitytoken")
    username, password = entry.get("username"), entry.get("password")
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            username, _, password = base64.b64decode(auth, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            progress.warn(f"an 'auth' value in {origin} is not base64 user:password; ignored")
    if isinstance(token, str) and token:
        return Credential(origin, str(username or ""), None, token)
    if isinstance(password, str) and password:
        return Credential(origin, str(username or ""), password)
    return None


def run_helper(name: str, registry: str, env: Mapping[str, str]) -> Credential | None:
    """`docker-credential-<name> get` for `registry`; None when it has nothing for it."""
    program = f"docker-credential-{name}"
    server = HUB_SERVER if registry == HUB else registry
    try:
        done = subprocess.run(
            [program, "get"],
            input=server,
            capture_output=True,
            text=True,
            timeout=HELPER_TIMEOUT,
            env=dict(env),
            check=False,
        )
    except FileNotFoundError:
        progress.warn(f"the Docker credential helper {program} is not installed; skipped")
        return None
    except (OSError, subprocess.TimeoutExpired) as exc:
        progress.warn(f"the Docker credential helper {program} failed ({type(exc).__name__})")
        return None
    if done.returncode != 0:
        if "not found" not in (done.stdout + done.stderr).lower():
            progress.warn(f"the Docker credential helper {program} exited {done.returncode}")
        return None
    try:
        found = json.loads(done.stdout)
    except ValueError:
        found = None
    secret = found.get("Secret") if isinstance(found, dict) else None
    if not isinstance(secret, str) or not secret:
        return None
    username = str(found.get("Username") or "") if isinstance(found, dict) else ""
    origin = f"the Docker credential helper {program}"
    if username == "<token>":
        return Credential(origin, None, None, secret)
    return Credential(origin, username, secret)
