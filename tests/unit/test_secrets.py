"""The secret store: the 0600 file, and the choice between it and the OS keychain."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from plugman.core import secrets
from plugman.core.errors import UsageError
from plugman.core.paths import Paths


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.from_env({"PLUGMAN_HOME": str(tmp_path / "pm")}, tmp_path)


def test_the_file_store_keeps_secrets_0600(paths: Paths) -> None:
    store = secrets.open_store(paths, {"PLUGMAN_SECRETS": "file"})
    assert store.kind == "file" and store.get("k") is None
    store.set("k", "s3cret")
    store.set("other", "x")
    file = secrets.file_path(paths)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    file.chmod(0o644)
    store.set("k", "new")
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert store.get("k") == "new"
    assert store.delete("k") and not store.delete("k")
    assert store.get("other") == "x"


def test_without_a_session_bus_linux_uses_the_file(paths: Paths) -> None:
    store = secrets.open_store(paths, {})
    if store.kind == "keyring":
        pytest.fail("no D-Bus session was given, yet the keychain was chosen")
    assert store.where == str(secrets.file_path(paths))
    with pytest.raises(secrets.SecretError, match="does not work here"):
        secrets.open_store(paths, {"PLUGMAN_SECRETS": "keyring"})
    with pytest.raises(UsageError, match="is not a secret store"):
        secrets.open_store(paths, {"PLUGMAN_SECRETS": "vault"})


def test_a_broken_file_is_an_error_with_a_fix(paths: Paths) -> None:
    file = secrets.file_path(paths)
    file.parent.mkdir(parents=True)
    file.write_text("{not json")
    store = secrets.open_store(paths, {"PLUGMAN_SECRETS": "file"})
    with pytest.raises(secrets.SecretError, match="cannot read the secret store") as caught:
        store.get("k")
    assert str(file) in (caught.value.hint or "")
    assert file.read_text() == "{not json"
