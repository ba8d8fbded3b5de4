"""OCI references, auth challenges and Docker-config credentials, without a registry."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from plugman.core.errors import UsageError
from plugman.core.oci import credentials
from plugman.core.oci.connections import RegistryError, check_url
from plugman.core.oci.reference import Reference, parse
from plugman.core.oci.transport import parse_challenge

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("oci://ghcr.io/acme/tools/fmt:1.2.0", Reference("ghcr.io", "acme/tools/fmt", "1.2.0")),
        ("127.0.0.1:5000/team/plugin:1.0.0", Reference("127.0.0.1:5000", "team/plugin", "1.0.0")),
        (f"oci://reg.example/p@{DIGEST}", Reference("reg.example", "p", None, DIGEST)),
        (f"reg.example/p:v1@{DIGEST}", Reference("reg.example", "p", "v1", DIGEST)),
        ("oci://reg.example/a/b", Reference("reg.example", "a/b", "latest")),
        ("docker.io/alpine:3", Reference("docker.io", "library/alpine", "3")),
        ("localhost:5000/a-b__c.d/e:x_Y.1", Reference("localhost:5000", "a-b__c.d/e", "x_Y.1")),
        ("[::1]:5000/p:1", Reference("[::1]:5000", "p", "1")),
    ],
)
def test_references_parse(text: str, expected: Reference) -> None:
    found = parse(text)
    assert found == expected
    assert parse(str(found)) == found


@pytest.mark.parametrize(
    "text",
    [
        "oci://ghcr.io",
        "oci://ghcr.io/",
        "oci://ghcr.io/Acme/x:1",
        "oci://ghcr.io/acme/x:-bad",
        "oci://ghcr.io/acme/x@sha256:1234",
        "oci://ghcr.io/acme/x@md5:" + "0" * 32,
        "oci://bad host/x:1",
        "oci://ghcr.io/a//b:1",
        "oci://ghcr.io/../b:1",
    ],
)
def test_bad_references_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="is not an OCI reference"):
        parse(text)


def test_schemes_and_hosts() -> None:
    assert parse("127.0.0.1:5000/p:1").scheme == "http"
    assert parse("localhost/p:1").scheme == "http"
    assert parse("[::1]:5000/p:1").scheme == "http"
    assert parse("ghcr.io/p:1").scheme == "https"
    assert parse("10.0.0.1:5000/p:1").scheme == "https"
    assert parse("docker.io/alpine:3").host == "registry-1.docker.io"
    check_url("https://auth.example/token", redirect=False)
    check_url("http://127.0.0.1:9/token", redirect=True)
    with pytest.raises(RegistryError, match="is not https"):
        check_url("http://cdn.example/blob", redirect=True)


def test_challenges() -> None:
    found = parse_challenge(
        'Bearer realm="https://ghcr.io/token",service="ghcr.io",'
        'scope="repository:a/b:pull,push repository:c:pull"'
    )
    assert found.scheme == "bearer"
    assert found.params == {
        "realm": "https://ghcr.io/token",
        "service": "ghcr.io",
        "scope": "repository:a/b:pull,push repository:c:pull",
    }
    assert parse_challenge('Basic realm="Registry Realm"') == ("basic", {"realm": "Registry Realm"})
    assert parse_challenge("") == ("", {})


def _config(folder: Path, data: object) -> dict[str, str]:
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(data))
    return {"DOCKER_CONFIG": str(folder), "PATH": ""}


def test_docker_config_auths(tmp_path: Path) -> None:
    auth = base64.b64encode(b"me:s3cret:with-colon").decode()
    env = _config(
        tmp_path / "d",
        {
            "auths": {
                "https://reg.example:5000/v1/": {"auth": auth},
                "https://index.docker.io/v1/": {"identitytoken": "refresh-me"},
                "other.example": {"username": "u", "password": "p"},
            }
        },
    )
    found = credentials.docker("reg.example:5000", env)
    assert found is not None and (found.username, found.password) == ("me", "s3cret:with-colon")
    assert "s3cret" not in repr(found) and "Docker config" in found.origin
    hub = credentials.docker("registry-1.docker.io", env)
    assert hub is not None and hub.identity_token == "refresh-me" and hub.password is None
    other = credentials.docker("OTHER.example", env)
    assert other is not None and other.password == "p"
    assert credentials.docker("nowhere.example", env) is None


def test_a_missing_helper_is_a_warning_and_no_credentials(tmp_path: Path) -> None:
    from plugman.core import progress

    env = _config(tmp_path / "d", {"credsStore": "plugman-absent-helper"})
    warnings: list[str] = []
    with progress.listening(None, warnings.append):
        assert credentials.docker("reg.example", env) is None
    assert warnings and "docker-credential-plugman-absent-helper" in warnings[0]


def test_no_docker_config_is_no_credentials(tmp_path: Path) -> None:
    assert credentials.docker("reg.example", {"DOCKER_CONFIG": str(tmp_path / "none")}) is None
