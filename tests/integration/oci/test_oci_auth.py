"""OCI registries behind a login (docker-registry with htpasswd Basic auth on 127.0.0.1):
no credentials, the Docker config (`auths`, a credential helper), `plugman registry login`;
the password appears in no output and in no file under PLUGMAN_HOME but the secret store."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from plugman.cli import invoke
from plugman.core.oci.client import push
from tests.integration.helpers import fails, run
from tests.integration.oci.registry import PASSWORD, USER, Registry, plugin_tgz
from tests.integration.oci.tokens import Tokens


@pytest.fixture(autouse=True)
def no_docker_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Docker config: the machine's own ~/.docker is never read."""
    folder = tmp_path / "docker-empty"
    folder.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(folder))
    return folder


@pytest.fixture
def pushed(auth_registry: Registry, tmp_path: Path) -> Registry:
    config = auth_registry.docker_config(tmp_path / "docker-push")
    env = {**os.environ, "DOCKER_CONFIG": str(config)}
    push(auth_registry.ref(), plugin_tgz(), name="plugin", version="1.0.0", env=env)
    return auth_registry


def test_without_credentials_the_error_says_how_to_log_in(pushed: Registry) -> None:
    shown = fails("install", pushed.ref())
    assert f"{pushed.host} requires a login and plugman has no credentials for it" in shown
    assert f"plugman registry login {pushed.host}" in shown
    with pytest.raises(Exception, match="requires a login"):
        push(pushed.ref(tag="2.0.0"), plugin_tgz(), name="plugin", version="2.0.0")


def test_credentials_from_the_docker_config(
    pushed: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(pushed.docker_config(tmp_path / "docker")))
    assert [c["id"] for c in run("install", pushed.ref())["changes"]] == ["plugin@direct"]


def test_wrong_credentials_are_refused_naming_where_they_came_from(
    pushed: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docker-wrong"
    folder.mkdir()
    wrong = {"auths": {f"https://{pushed.host}": {"username": USER, "password": "nope"}}}
    (folder / "config.json").write_text(json.dumps(wrong))
    monkeypatch.setenv("DOCKER_CONFIG", str(folder))
    shown = fails("install", pushed.ref())
    assert f"{pushed.host} refused the credentials from the Docker config" in shown


def test_a_docker_credential_helper(
    pushed: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    helper = bin_ / "docker-credential-plugmantest"
    answer = json.dumps({"ServerURL": pushed.host, "Username": USER, "Secret": PASSWORD})
    helper.write_text(
        "#!/bin/sh\nread server\n"
        f'[ "$1" = get ] && [ "$server" = "{pushed.host}" ] || exit 1\n'
        f"echo '{answer}'\n"
    )
    helper.chmod(helper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "docker-helper"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"credHelpers": {pushed.host: "plugmantest"}}))
    monkeypatch.setenv("DOCKER_CONFIG", str(folder))
    assert [c["id"] for c in run("install", pushed.ref())["changes"]] == ["plugin@direct"]


def test_registry_login_then_logout(pushed: Registry, isolated_home: Path) -> None:
    wrong = invoke(["registry", "login", pushed.host, "-u", USER], input="nope\n")
    assert wrong.exit_code == 1 and "refused the credentials" in wrong.output
    assert not list(isolated_home.rglob("secrets.json"))
    done = invoke(["registry", "login", pushed.host, "-u", USER, "--json"], input=PASSWORD + "\n")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["registry"] == pushed.host and result["checked"] is True
    run("install", pushed.ref())
    outputs = [wrong.output, done.output, fails("install", "oci://" + pushed.host + "/x/y:1")]
    assert not [o for o in outputs if PASSWORD in o]
    files = [p for p in isolated_home.rglob("*") if p.is_file()]
    holding = [p.name for p in files if PASSWORD.encode() in p.read_bytes()]
    assert holding == ["secrets.json"]
    store = next(isolated_home.rglob("secrets.json"))
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    gone = run("registry", "logout", pushed.host)
    assert gone["removed"] is True
    assert PASSWORD not in store.read_text()
    run("uninstall", "plugin")
    assert "requires a login" in fails("install", pushed.ref())


def test_bearer_token_flow(
    token_registry: tuple[Registry, Tokens], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, tokens = token_registry
    monkeypatch.setenv("DOCKER_CONFIG", str(found.docker_config(tmp_path / "docker")))
    digest = push(found.ref(), plugin_tgz(), name="plugin", version="1.0.0")
    scopes = {s for r in tokens.requests for s in r["query"].get("scope", [])}
    pushing = {s for s in scopes if set(s.rsplit(":", 1)[-1].split(",")) == {"pull", "push"}}
    assert pushing and all(s.startswith("repository:team/plugin:") for s in pushing)
    assert all(r["query"]["service"] == ["plugman-test-registry"] for r in tokens.requests)
    run("install", found.ref())
    assert run("info", "plugin@direct")["plugin"]["source"]["digest"] == digest
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker-empty"))
    run("uninstall", "plugin")
    shown = fails("install", found.ref())
    assert "requires a login" in shown
