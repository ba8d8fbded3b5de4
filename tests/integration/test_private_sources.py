"""Private marketplaces that authenticate as their ecosystems do, against real servers on this
machine: a git smart-HTTP server behind Basic auth (git's credential helpers), and a
token-guarded HTTPS marketplace (a headers helper, a netrc entry). With the credential each
installs; without, it fails at once with an error naming what to set; no credential reaches a
file plugman wrote, its output, or another host a redirect points to."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.integration import git_http, http_fixture
from tests.integration.helpers import fails, run, snapshot

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
USER, PASSWORD = "alice", "git-pass-5d81c0"
TOKEN = "tok-https-9a4e22"
PRIVATE, ELSEWHERE = "127.0.0.2", "127.0.0.3"  # plugman treats neither as this machine


def files(root: Path) -> dict[str, tuple[str, bytes]]:
    """The files under `root`, without plugman's standing layout (folders, its empty lock)."""
    found = snapshot(root)
    return {k: v for k, v in found.items() if v[0] != "dir" and not k.endswith("/state/lock")}


def secrets_in(*roots: Path, skip: tuple[Path, ...] = ()) -> list[str]:
    """Every file under `roots` (but `skip`) holding one of the test's credentials."""
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    found = []
    for key, (kind, data) in snapshot(*roots).items():
        secret = any(s.encode() in data for s in (PASSWORD, TOKEN, basic))
        if kind == "file" and Path(key) not in skip and secret:
            found.append(key)
    return found


@pytest.fixture
def git_server(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The sample marketplace as a private repository; its clone URL."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    work = tmp_path / "work"
    shutil.copytree(SAMPLES, work, ignore=shutil.ignore_patterns("invalid"))
    subprocess.run([*GIT, "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([*GIT, "-C", str(work), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(work), "commit", "-qm", "first"], check=True)
    served = tmp_path / "served"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(served / "m.git")], check=True)
    with git_http.serving(served, USER, PASSWORD) as site:
        yield f"{site.base}/m.git"


def helper_store(home: Path, url: str, password: str = PASSWORD) -> Path:
    """The user's git config names the `store` credential helper, which knows `url`."""
    store = home / "git-credentials"
    host = url.split("//", 1)[1].split("/", 1)[0]
    store.write_text(f"http://{USER}:{password}@{host}\n")
    store.chmod(0o600)
    (home / ".gitconfig").write_text(f"[credential]\n\thelper = store --file={store}\n")
    return store


def test_private_git_marketplace_through_a_credential_helper(
    git_server: str, home: Path, isolated_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = helper_store(home, git_server)
    [added] = run("marketplace", "add", git_server, "--scope", "project", project=project)[
        "marketplaces"
    ]
    assert added["name"] == "plugman-samples"
    installed = run("install", "toolbox@plugman-samples", "--scope", "project", project=project)
    assert installed["changes"][0]["version"]
    run("marketplace", "update", project=project)
    assert "toolbox@plugman-samples" in json.dumps(run("list", project=project))
    assert secrets_in(home, isolated_home, project, skip=(store,)) == []
    assert git_server in (project / "plugman.toml").read_text()


def test_a_helper_in_the_users_git_config_global_is_used(
    git_server: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper_store(home, git_server)
    moved = tmp_path / "my-gitconfig"
    (home / ".gitconfig").rename(moved)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(moved))
    assert run("marketplace", "add", git_server)["marketplaces"][0]["name"] == "plugman-samples"


def test_private_git_marketplace_without_credentials_fails_clearly(
    git_server: str, home: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = home / "asked"
    askpass = home / "askpass"
    askpass.write_text(f"#!/bin/sh\ntouch {canary}\necho {PASSWORD}\n")
    askpass.chmod(0o755)
    monkeypatch.setenv("SSH_ASKPASS", str(askpass))  # a GUI prompt would be run, and wait
    monkeypatch.setenv("DISPLAY", ":0")
    before = files(isolated_home)
    started = time.monotonic()
    shown = fails("marketplace", "add", git_server)
    assert time.monotonic() - started < 30  # no prompt waited for
    assert not canary.exists()
    assert "needs credentials and no git credential helper gave any" in shown
    assert "credential.helper" in shown and "ssh" in shown.lower()
    helper_store(home, git_server, password="wrong-password")
    shown = fails("marketplace", "add", git_server)
    assert "refused the credentials git gave it (HTTP 401)" in shown
    assert "credential helper" in shown
    assert files(isolated_home) == before


def test_a_token_in_a_git_url_is_refused_and_never_shown(
    git_server: str, isolated_home: Path, tmp_path: Path
) -> None:
    before = files(isolated_home)
    with_token = git_server.replace("http://", f"http://{USER}:{PASSWORD}@")
    shown = fails("marketplace", "add", with_token, "--scope", "project", project=tmp_path)
    assert "carries credentials" in shown and "credential helper" in shown
    assert PASSWORD not in shown
    shown = fails("install", f"{with_token}#main", project=tmp_path)
    assert PASSWORD not in shown
    assert files(isolated_home) == before
    assert not (tmp_path / "plugman.toml").exists()


# --- HTTPS marketplaces ------------------------------------------------------------------------


def plugin_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            ".claude-plugin/plugin.json", json.dumps({"name": "hello", "version": "1.0.0"})
        )
        archive.writestr("skills/hello/SKILL.md", "---\nname: hello\ndescription: Hi.\n---\nHi\n")
    return buffer.getvalue()


def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=private"),
            *("-addext", f"subjectAltName=IP:{PRIVATE},IP:{ELSEWHERE}"),
        ],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    for name in ("HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    return cert, key


@pytest.fixture
def sites(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[http_fixture.Site, http_fixture.Site]]:
    """A private marketplace (its catalog and archive want the token) on one host, and an
    open server on another."""
    tls = certificate(tmp_path, monkeypatch)
    with (
        http_fixture.serving(PRIVATE, tls) as private,
        http_fixture.serving(ELSEWHERE, tls) as other,
    ):
        archive = private.put("/hello.zip", plugin_zip(), "application/zip")
        catalog = {
            "name": "private",
            "owner": {"name": "t"},
            "plugins": [{"name": "hello", "source": {"source": "archive", "url": archive}}],
        }
        private.put("/marketplace.json", json.dumps(catalog).encode())
        yield private, other


def test_https_marketplace_through_a_headers_helper(
    sites: tuple[http_fixture.Site, http_fixture.Site],
    home: Path,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    private, _other = sites
    private.accepted = {f"Bearer {TOKEN}"}
    helper = home / "token-helper"
    helper.write_text(
        "#!/bin/sh\n"
        'test -n "$CLAUDE_CODE_MARKETPLACE_URL" || exit 3\n'
        f'printf \'{{"Authorization": "Bearer {TOKEN}"}}\'\n'
    )
    helper.chmod(0o755)
    url = f"{private.base}/marketplace.json"
    project = tmp_path / "project"
    project.mkdir()
    run(
        "marketplace",
        "add",
        url,
        "--headers-helper",
        str(helper),
        "--scope",
        "project",
        project=project,
    )
    assert private.authorizations[-1] == f"Bearer {TOKEN}"
    # the archive, on the marketplace's own origin, gets the marketplace helper's headers
    run("install", "hello@private", "--scope", "project", project=project)
    assert private.requests[-1] == "/hello.zip"
    assert private.authorizations[-1] == f"Bearer {TOKEN}"
    run("marketplace", "update", project=project)
    assert str(helper) in (project / "plugman.toml").read_text()
    assert secrets_in(isolated_home, project) == []
    # a teammate's fresh clone: sync does not run the helper the project names; the teammate
    # adds the marketplace knowingly, as the error says, and sync then installs through it
    clone, fresh = tmp_path / "clone", tmp_path / "fresh-home"
    clone.mkdir()
    shutil.copy(project / "plugman.toml", clone / "plugman.toml")
    monkeypatch.setenv("PLUGMAN_HOME", str(fresh))
    monkeypatch.setenv("PLUGMAN_MANAGED_DIR", str(fresh / "managed"))
    asked = len(private.requests)
    shown = " ".join(fails("sync", project=clone).split())
    assert "plugman does not run a command a project names" in shown
    assert f"plugman marketplace add {url} --name private --headers-helper '{helper}'" in shown
    assert private.requests[asked:] == []
    run("marketplace", "add", url, "--name", "private", "--headers-helper", str(helper))
    run("sync", project=clone)
    assert private.requests[asked:] == ["/marketplace.json", "/hello.zip"]
    assert private.authorizations[asked:] == [f"Bearer {TOKEN}"] * 2
    assert secrets_in(fresh, clone) == []


def test_a_claude_url_marketplace_with_a_headers_helper_is_imported_with_it(
    sites: tuple[http_fixture.Site, http_fixture.Site],
    home: Path,
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    """`import claude` keeps Claude's `headersHelper` of a url marketplace (the user asked for
    the import: consent); a project's committed `.claude/settings.json` naming one is not run
    by `sync`, which says how to add it knowingly. Static `headers` are never imported."""
    from tests.integration.test_claude_import_edges import claude_state, entry

    private, _other = sites
    private.accepted = {f"Bearer {TOKEN}"}
    helper = home / "token-helper"
    helper.write_text(f'#!/bin/sh\nprintf \'{{"Authorization": "Bearer {TOKEN}"}}\'\n')
    helper.chmod(0o755)
    url = f"{private.base}/marketplace.json"
    source = {"source": "url", "url": url, "headersHelper": str(helper)}
    claude_state(
        home / ".claude",
        {"private": source},
        {"hello@private": entry("user")},
        {"hello@private": True},
    )
    project = tmp_path / "project"
    project.mkdir()
    dry = cli_text("import", "claude", project=project)
    assert f"would add marketplace private ({url}, headers from `{helper}`)" in dry
    done = run("import", "claude", "--apply", project=project)
    assert [p["action"] for p in done["plugins"]] == ["install"], done
    assert private.requests[-1] == "/hello.zip"
    assert private.authorizations[-1] == f"Bearer {TOKEN}"
    assert secrets_in(isolated_home, project) == []

    clone = tmp_path / "clone"
    (clone / ".claude").mkdir(parents=True)
    settings = {"extraKnownMarketplaces": {"team": {"source": source}}}
    (clone / ".claude" / "settings.json").write_text(json.dumps(settings))
    asked = len(private.requests)
    shown = " ".join(cli_text("sync", project=clone).split())
    assert "plugman does not run a command a project names" in shown
    assert f"plugman marketplace add {url} --name team --headers-helper '{helper}'" in shown
    assert private.requests[asked:] == []


def cli_text(*args: str, project: Path) -> str:
    from plugman.cli import invoke

    result = invoke(["--project", str(project), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_https_marketplace_through_netrc_and_without(
    sites: tuple[http_fixture.Site, http_fixture.Site], home: Path, isolated_home: Path
) -> None:
    private, _other = sites
    basic = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    private.accepted = {basic}
    url = f"{private.base}/marketplace.json"
    before = files(isolated_home)
    shown = fails("marketplace", "add", url)
    assert "HTTP 401" in shown and f"machine {PRIVATE}" in shown and "--headers-helper" in shown
    assert files(isolated_home) == before
    netrc = home / ".netrc"
    netrc.write_text(f"machine {PRIVATE}\n  login {USER}\n  password {TOKEN}\n")
    netrc.chmod(0o600)
    run("marketplace", "add", url)
    run("install", "hello@private")
    assert private.authorizations[-2:] == [basic, basic]  # the catalog and the archive
    netrc.write_text(f"machine {PRIVATE}\n  login {USER}\n  password wrong\n")
    shown = fails("marketplace", "update")
    assert "HTTP 401" in shown and f"{netrc} entry for machine {PRIVATE} were refused" in shown
    assert secrets_in(isolated_home) == []


def test_credentials_never_follow_a_redirect_to_another_host(
    sites: tuple[http_fixture.Site, http_fixture.Site], home: Path, tmp_path: Path
) -> None:
    private, other = sites
    catalog = json.dumps({"name": "moved", "owner": {"name": "t"}, "plugins": []}).encode()
    private.redirects["/here.json"] = private.base + "/moved.json"  # same host: kept
    private.redirects["/away.json"] = other.put("/moved.json", catalog)  # another host: dropped
    private.put("/moved.json", catalog)
    netrc = home / ".netrc"
    netrc.write_text(f"machine {PRIVATE} login {USER} password {TOKEN}\n")
    netrc.chmod(0o600)
    run("marketplace", "add", f"{private.base}/here.json", "--name", "same-host")
    assert private.requests[-2:] == ["/here.json", "/moved.json"]
    assert private.authorizations[-1] is not None  # kept within its origin
    run("marketplace", "add", f"{private.base}/away.json", "--name", "other-host")
    assert other.requests == ["/moved.json"]
    assert other.authorizations == [None]


def test_a_helper_that_fails_is_a_clear_error(
    sites: tuple[http_fixture.Site, http_fixture.Site],
    home: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    private, _other = sites
    monkeypatch.setenv("HELPER_SECRET", TOKEN)
    url = f"{private.base}/marketplace.json"
    before = files(isolated_home)
    for command, said in (
        ("exit 4", "failed (exit 4, no output)"),
        ('echo "not-json-$HELPER_SECRET"', "did not print a JSON object"),
        ("echo '[1]'", "did not print a JSON object"),
        ('printf \'{"Host": "x"}\'', "'Host' is malformed or not allowed"),
    ):
        shown = fails("marketplace", "add", url, "--headers-helper", command)
        assert said in shown and TOKEN not in shown
    shown = fails("marketplace", "add", f"https://{USER}:{TOKEN}@{PRIVATE}/m.json")
    assert "carries credentials" in shown and TOKEN not in shown
    shown = fails("marketplace", "add", "https://example.com/x.git", "--headers-helper", "x")
    assert "for a marketplace.json URL only" in shown
    shown = fails("marketplace", "add", "http://127.0.0.1:9/m.json", "--headers-helper", "x")
    assert "only for an https:// marketplace URL" in shown
    assert files(isolated_home) == before
