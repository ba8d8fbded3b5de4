"""The real registries the OCI tests run against (see registry.py and tokens.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.oci.registry import Registry, start
from tests.integration.oci.tokens import Tokens, serve


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    """docker-registry on 127.0.0.1, anonymous."""
    yield from start(tmp_path / "registry", auth=False)


@pytest.fixture
def auth_registry(tmp_path: Path) -> Iterator[Registry]:
    """docker-registry on 127.0.0.1 behind htpasswd Basic auth (USER, PASSWORD)."""
    yield from start(tmp_path / "auth-registry", auth=True)


@pytest.fixture
def token_registry(tmp_path: Path) -> Iterator[tuple[Registry, Tokens]]:
    """docker-registry on 127.0.0.1 behind Bearer tokens from a token service of its own."""
    yield from serve(tmp_path)
