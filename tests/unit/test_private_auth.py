"""What a failed clone says about credentials (from the lines git and ssh print), the URLs that
carry credentials, a netrc entry as a header, and a headers helper's output rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugman.core import http_auth
from plugman.core.errors import FetchError
from plugman.plugins.sources.gitauth import auth_failure
from plugman.plugins.sources.giturl import check_url, shown

HTTPS = "https://git.example.com/team/market.git"
SSH = "git@git.example.com:team/market.git"


@pytest.mark.parametrize(
    ("url", "stderr", "said", "hint"),
    [
        (
            HTTPS,
            "fatal: could not read Username for 'https://git.example.com': terminal prompts "
            "disabled",
            "needs credentials and no git credential helper gave any",
            "credential.helper",
        ),
        (
            HTTPS,
            "remote: HTTP Basic: Access denied\nfatal: Authentication failed for "
            "'https://git.example.com/team/market.git/'",
            "refused the credentials git gave it",
            "git credential reject",
        ),
        (
            HTTPS,
            "fatal: unable to access 'https://git.example.com/team/market.git/': The requested "
            "URL returned error: 403",
            "refused access with these credentials (HTTP 403)",
            "read access",
        ),
        (
            SSH,
            "git@git.example.com: Permission denied (publickey).\nfatal: Could not read from "
            "remote repository.",
            "refused your SSH key",
            "ssh -T git@git.example.com",
        ),
        (
            "ssh://git@git.example.com:2222/team/market.git",
            "Host key verification failed.\nfatal: Could not read from remote repository.",
            "SSH host key of git@git.example.com is not known",
            "known_hosts",
        ),
    ],
)
def test_a_failed_clone_names_the_credential_to_set(
    url: str, stderr: str, said: str, hint: str
) -> None:
    error = auth_failure(url, stderr)
    assert error is not None and said in error.message and hint in (error.hint or "")


def test_other_failures_are_not_about_credentials() -> None:
    stderr = "fatal: repository 'https://git.example.com/x.git/' not found"
    assert auth_failure(HTTPS, stderr) is None


@pytest.mark.parametrize(
    "url",
    [
        "https://user:tok3n@git.example.com/x.git",
        "https://tok3n@git.example.com/x.git",
        "ssh://git:tok3n@git.example.com/x.git",
        "http://user:tok3n@git.example.com/x.git",  # refused for plain http first
        "https://user:tok3n@git.example.com:port/x.git",  # refused as malformed first
    ],
)
def test_a_url_with_credentials_is_refused_and_redacted(url: str) -> None:
    with pytest.raises(FetchError) as caught:
        check_url(url)
    assert "tok3n" not in caught.value.message and "tok3n" not in shown(url)
    assert check_url("ssh://git@git.example.com/x.git")  # a user name for ssh is no secret


def test_netrc_entry_is_a_basic_header_for_its_host_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine plugins.example.com login you password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    found = http_auth.from_netrc("https://plugins.example.com/m.json")
    assert found.headers == {"Authorization": "Basic eW91OnMzY3JldA=="}
    assert "machine plugins.example.com" in found.how
    assert http_auth.from_netrc("https://other.example.com/m.json").headers == {}
    netrc.chmod(0o644)  # a password others can read: Python's netrc refuses it, as ftp does
    with pytest.raises(FetchError, match="cannot be read") as caught:
        http_auth.from_netrc("https://plugins.example.com/m.json")
    assert "s3cret" not in caught.value.message and "chmod 600" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("""printf '{"X-Token": "a", "Authorization": "Bearer b"}'""", None),
        ("exit 2", "failed (exit 2"),
        ("printf '{\"a\": 1}'", "JSON object of string headers"),
        ('printf \'{"Bad Name": "x"}\'', "malformed or not allowed"),
        ('printf \'{"a": "x\\\\ny"}\'', "malformed or not allowed"),
    ],
)
def test_headers_helper_output(command: str, said: str | None) -> None:
    if said is None:
        headers = http_auth.run_helper(command, "https://plugins.example.com/m.json")
        assert headers == {"X-Token": "a", "Authorization": "Bearer b"}
        return
    with pytest.raises(FetchError, match=said.replace("(", r"\(")):
        http_auth.run_helper(command, "https://plugins.example.com/m.json")


def test_headers_helper_sees_the_marketplace_url() -> None:
    command = """printf '{"Url": "%s", "Name": "%s"}' "$CLAUDE_CODE_MARKETPLACE_URL" \
"$CLAUDE_CODE_MARKETPLACE_NAME" """
    headers = http_auth.run_helper(command, "https://h.example/m.json", "team")
    assert headers == {"Url": "https://h.example/m.json", "Name": "team"}
