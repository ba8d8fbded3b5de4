"""`plugman registry login|logout`: a registry's user name and password (or token) in the
secret store, checked against the registry first; never in any other file or output."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NamedTuple

from plugman.core import secrets
from plugman.core.errors import UsageError
from plugman.core.oci.credentials import Credential, normalize, secret_key
from plugman.core.oci.reference import HOST, Reference
from plugman.core.oci.transport import Client, drain
from plugman.core.paths import Paths


class LoginResult(NamedTuple):
    registry: str
    username: str
    store: str  # keyring | file
    where: str
    checked: bool  # the registry accepted the credentials (False: it asks for none)


class LogoutResult(NamedTuple):
    registry: str
    removed: bool
    store: str
    where: str


def registry_of(text: str) -> str:
    """The registry host[:port] of `text` (`oci://` and a path after it are allowed)."""
    found = normalize(text.removeprefix("oci://"))
    if not HOST.match(found):
        raise UsageError(
            f"{text!r} is not a registry host", hint="give the registry as HOST or HOST:PORT"
        )
    return found


def login(
    paths: Paths,
    registry: str,
    username: str,
    password: str,
    env: Mapping[str, str] | None = None,
) -> LoginResult:
    """Check the credentials against the registry's /v2/, then store them."""
    host = registry_of(registry)
    if not password:
        raise UsageError("the password (or token) is empty", hint="give it on stdin or when asked")
    store = secrets.open_store(paths, env)  # before the network: a broken store fails first
    credential = Credential(f"the login to {host}", username, password)
    client = Client(Reference(host, "v2"), lambda: credential)
    try:
        response = client.request("GET", "/v2/")
        drain(response)
    finally:
        client.close()
    if response.status != 200:
        raise UsageError(
            f"{host} answered HTTP {response.status} to /v2/: is it an OCI registry?",
            hint="give the registry's host (and port), e.g. ghcr.io or 127.0.0.1:5000",
        )
    store.set(secret_key(host), json.dumps({"username": username, "password": password}))
    return LoginResult(host, username, store.kind, store.where, client.asked)


def logout(paths: Paths, registry: str, env: Mapping[str, str] | None = None) -> LogoutResult:
    host = registry_of(registry)
    store = secrets.open_store(paths, env)
    return LogoutResult(host, store.delete(secret_key(host)), store.kind, store.where)
