"""An OCI reference, `REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`, checked and taken apart.

The grammar is the distribution spec's: a repository is lower-case path components joined by
`.`, `_`, `__` or dashes; a tag (`latest` when neither a tag nor a digest is given) is at most
128 characters of `[A-Za-z0-9_.-]`, not starting with `.` or `-`; a digest here is always
sha256. The registry is a host with an optional port;
plain http is used only for this machine (127.0.0.1, localhost, ::1), as for archive downloads.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from plugman.core.errors import UsageError

SCHEME = "oci://"
COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
REPOSITORY = re.compile(rf"^{COMPONENT}(?:/{COMPONENT})*$")
TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
NAME = r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?"
HOST = re.compile(rf"^(?:\[[0-9A-Fa-f:.]+\]|{NAME})(?::\d{{1,5}})?$")
LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
DOCKER_HUB = {"docker.io": "registry-1.docker.io", "index.docker.io": "registry-1.docker.io"}
FORM = "REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST"


class Reference(NamedTuple):
    registry: str  # host[:port], as written (the key of its credentials)
    repository: str
    tag: str | None = None
    digest: str | None = None  # sha256:<64 hex>; wins over the tag when both are given

    @property
    def host(self) -> str:
        """The host the API is asked (Docker Hub's registry for docker.io)."""
        return DOCKER_HUB.get(self.registry, self.registry)

    @property
    def scheme(self) -> str:
        return "http" if hostname(self.registry) in LOOPBACK else "https"

    @property
    def reference(self) -> str:
        """What the manifest is asked for: the digest when pinned, else the tag."""
        return self.digest or self.tag or "latest"

    def pinned(self, digest: str) -> Reference:
        return self._replace(digest=digest)

    def following(self) -> Reference:
        """The same reference without its digest: it follows the tag."""
        return self._replace(digest=None)

    def __str__(self) -> str:
        text = f"{self.registry}/{self.repository}"
        text += f":{self.tag}" if self.tag else ""
        return text + (f"@{self.digest}" if self.digest else "")


def hostname(registry: str) -> str:
    """The registry's host without its port (`[::1]` for an IPv6 literal)."""
    if registry.startswith("["):
        return registry[: registry.index("]") + 1]
    return registry.rsplit(":", 1)[0] if ":" in registry else registry


def parse(text: str) -> Reference:
    """`text` (with or without `oci://`) as a Reference; UsageError saying what is wrong."""
    body = text.removeprefix(SCHEME)
    registry, slash, rest = body.partition("/")
    if not slash or not HOST.match(registry) or not rest:
        raise _bad(text, "it must start with a registry host (and port), then a repository")
    rest, at, digest = rest.partition("@")
    if at and not DIGEST.match(digest):
        raise _bad(text, f"{digest!r} is not a sha256 digest (sha256: and 64 hex digits)")
    path, colon, tag = rest.rpartition(":") if ":" in rest.rsplit("/", 1)[-1] else (rest, "", "")
    if colon and not TAG.match(tag):
        raise _bad(text, f"{tag!r} is not a valid tag")
    if registry in DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    if not REPOSITORY.match(path):
        raise _bad(text, f"{path!r} is not a valid repository name (lower-case, a-z 0-9 . _ -)")
    return Reference(registry, path, tag or (None if at else "latest"), digest or None)


def _bad(text: str, why: str) -> UsageError:
    return UsageError(f"{text!r} is not an OCI reference: {why}", hint=f"use oci://{FORM}")
