"""A lock is a request, never consent.

The clone's author writes plugman.lock. Invariants attacked: a pin is let in only where it is
what its declared marketplace offers (same source kind and location, compared canonically) or
a source given directly (installed pending approval); a lock never grants the hidden-text
allowance or forced consent; what one machine's managed policy forces stays out of the
project's plugman.lock and plugman.toml, so a teammate without that policy syncs `--locked`.
Each attack is paired with the legitimate variant working.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.lockcase import TAGGED, git, market, plugin, plugman, project
from tests.integration.helpers import snapshot


def files(*roots: Path) -> dict[str, tuple[str, bytes]]:
    """The files under `roots`: a folder or the (empty) command lock a refused command's
    session made is no change."""
    found = snapshot(*roots).items()
    return {k: v for k, v in found if v[0] == "file" and not k.endswith("/state/lock")}


def records(home: Path) -> dict[str, dict[str, Any]]:
    """Every plugin in this home's project install records: id -> its record entry."""
    found: dict[str, dict[str, Any]] = {}
    for file in (home / "state" / "installed").glob("project-*.json"):
        found |= json.loads(file.read_text())["plugins"]
    return found


def use_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """Another machine: its own PLUGMAN_HOME and managed folders (no policy)."""
    monkeypatch.setenv("PLUGMAN_HOME", str(home))
    monkeypatch.setenv("PLUGMAN_MANAGED_DIR", str(home / "managed"))
    monkeypatch.setenv("PLUGMAN_CLAUDE_MANAGED_DIR", str(home / "claude-managed"))
    return home


def force(home: Path, acme: Path, *plugins: str) -> None:
    """This machine's Claude Code managed settings force `plugins` on, from `acme`."""
    managed = home / "claude-managed"
    managed.mkdir(parents=True, exist_ok=True)
    settings = {
        "extraKnownMarketplaces": {"acme": {"source": {"source": "directory", "path": str(acme)}}},
        "enabledPlugins": dict.fromkeys(plugins, True),
    }
    (managed / "managed-settings.json").write_text(json.dumps(settings))


@pytest.fixture
def acme(tmp_path: Path) -> Path:
    plugins = {"fmt": "Format.\n", "other": "Other.\n", "extra": "Extra.\n"}
    return market(tmp_path / "acme", "acme", plugins | {"tagged": f"Hello {TAGGED}\n"})


@pytest.fixture
def evil_repo(tmp_path: Path) -> Path:
    """A repository named like the declared marketplace, somewhere else: the attacker's."""
    root = tmp_path / "evil" / "acme"
    plugin(root / "plugins" / "fmt", "fmt", "Exfiltrate.\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "evil")
    return root


def sources(evil: Path, acme: Path) -> list[tuple[str, str]]:
    commit = git(evil, "rev-parse", "HEAD").strip()
    return [
        ("url-to-another-repo",
         f'{{commit = "{commit}", path = "plugins/fmt", type = "url", url = "file://{evil}"}}'),
        ("git-subdir-to-another-repo",
         f'{{commit = "{commit}", path = "plugins/fmt", type = "git-subdir", '
         f'url = "file://{evil}"}}'),
        ("github-repo-named-like-it",
         f'{{commit = "{commit}", repo = "evil/acme", type = "github"}}'),
        ("another-plugin-of-the-marketplace", '{path = "./plugins/other", type = "path"}'),
        ("a-folder-outside-the-marketplace", f'{{path = "{evil}/plugins/fmt", type = "path"}}'),
        ("dot-dot-out-of-the-marketplace", '{path = "./plugins/../../evil/acme/plugins/fmt", '
         'type = "path"}'),
    ]  # fmt: skip


CASE_IDS = [
    "url-to-another-repo",
    "git-subdir-to-another-repo",
    "github-repo-named-like-it",
    "another-plugin-of-the-marketplace",
    "a-folder-outside-the-marketplace",
    "dot-dot-out-of-the-marketplace",
]


@pytest.mark.parametrize("case", CASE_IDS)
def test_a_pin_elsewhere_than_its_marketplace_offers_is_refused(
    tmp_path: Path, acme: Path, evil_repo: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: plugman.lock pins `fmt@acme` to a source acme does not offer (another repo
    named like it, another plugin, a folder outside it). Invariant: `sync --frozen` lets in
    only what the declared marketplace offers; the committed lock works."""
    folder = project(tmp_path, acme)
    lock = folder / "plugman.lock"
    good = lock.read_text()
    source = dict(sources(evil_repo, acme))[case]
    lock.write_text(re.sub(r"(?m)^source = .*$", f"source = {source}", good))
    git(folder, "commit", "-qam", "hostile pin")
    victim = use_home(monkeypatch, tmp_path / "victim")  # who clones it
    plugman(folder, "list")
    before = files(folder, victim)
    done = plugman(folder, "sync", "--frozen")
    assert done.code == 1, done
    assert "not what marketplace 'acme' offers" in done.stderr or "offers no" in done.stderr, done
    assert re.search(r"plugman\.lock:\d+", done.stderr), done
    assert files(folder, victim) == before
    assert "fmt@acme" not in records(victim)
    lock.write_text(good)  # the pin the marketplace offers: installed
    assert plugman(folder, "sync", "--frozen").code == 0
    assert "fmt@acme" in records(victim)


def test_a_pin_spelled_differently_but_the_same_place_is_accepted(
    tmp_path: Path, acme: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The legitimate variant of the pins above, compared canonically: `plugins/fmt/` is
    `./plugins/fmt`, and its content hash still decides."""
    folder = project(tmp_path, acme)
    lock = folder / "plugman.lock"
    lock.write_text(lock.read_text().replace('"./plugins/fmt"', '"plugins/./fmt/"'))
    victim = use_home(monkeypatch, tmp_path / "victim")
    assert plugman(folder, "sync", "--frozen").code == 0
    assert "fmt@acme" in records(victim)


def test_a_direct_pin_installs_pending_approval(
    tmp_path: Path, isolated_home: Path, acme: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source given directly (`NAME@direct`) is the other kind of pin a lock may hold: on
    the machine that installed it, the user's own (consented); on a teammate's, installed
    from the lock but unconsented, its hooks and servers pending approval."""
    folder = project(tmp_path, acme)
    direct = plugin(tmp_path / "direct", "solo", "Solo.\n")
    assert plugman(folder, "install", str(direct), "--scope", "project").code == 0
    assert records(isolated_home)["solo@direct"].get("consented") is True  # the user's own
    assert "solo@direct" in (folder / "plugman.lock").read_text()
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "solo")
    teammate = use_home(monkeypatch, tmp_path / "teammate")
    done = plugman(folder, "sync", "--locked")
    assert done.code == 0, done
    assert "solo@direct" in records(teammate)
    assert records(teammate)["solo@direct"].get("consented") is not True  # pending approval


def test_a_lock_never_grants_the_hidden_text_allowance(
    tmp_path: Path, isolated_home: Path, acme: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: the clone's author installed a plugin with hidden text (`--allow-hidden-text`)
    and committed the lock, which records it. Invariant: only this machine's user allows hidden
    text (their own install of that content, or `sync --allow-hidden-text`); the error says how."""
    folder = project(tmp_path, acme)
    allowed = plugman(folder, "install", "tagged@acme", "--scope", "project", "--allow-hidden-text")
    assert allowed.code == 0, allowed
    assert plugman(folder, "sync", "--frozen").code == 0  # the author's own allowance holds
    assert 'hidden_text = "allowed"' in (folder / "plugman.lock").read_text()
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "tagged")
    victim = use_home(monkeypatch, tmp_path / "victim")
    for argv in (("sync", "--frozen"), ("sync",), ("sync", "--locked")):
        before = files(folder, victim)
        done = plugman(folder, *argv)
        assert done.code == 1, (argv, done)
        assert "tagged@acme hides text" in done.stderr, done
        assert "a lock does not allow it here" in done.stderr, done
        assert "plugman sync --allow-hidden-text" in done.stderr, done
        assert files(folder, victim) == before
    done = plugman(folder, "sync", "--frozen", "--allow-hidden-text")  # the user allows it
    assert done.code == 0, done
    assert records(victim)["tagged@acme"]["hidden_text"] == "allowed"
    assert plugman(folder, "sync", "--frozen").code == 0  # their own allowance holds now


def test_a_lock_cannot_claim_forced_consent(
    tmp_path: Path, acme: Path, evil_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: managed policy forces `fmt@acme` (the organization's consent); the lock pins
    `fmt@acme` to the attacker's repository, hoping to be installed consented. Invariant: a
    pin of a forced plugin is still only what the marketplace offers; the real one is
    installed consented."""
    folder = project(tmp_path, acme)
    victim = use_home(monkeypatch, tmp_path / "victim")
    force(victim, acme, "fmt@acme")
    lock = folder / "plugman.lock"
    good = lock.read_text()
    commit = git(evil_repo, "rev-parse", "HEAD").strip()
    hostile = f'{{commit = "{commit}", path = "plugins/fmt", type = "url", '
    hostile += f'url = "file://{evil_repo}"}}'
    lock.write_text(re.sub(r"(?m)^source = .*$", f"source = {hostile}", good))
    done = plugman(folder, "sync", "--frozen")
    assert done.code == 1 and "not what marketplace 'acme' offers" in done.stderr, done
    assert "fmt@acme" not in records(victim)
    lock.write_text(good.replace("[[plugins]]", "[[plugins]]\nconsented = true", 1))
    assert plugman(folder, "sync", "--frozen").code == 2  # a key plugman never writes
    lock.write_text(good)
    assert plugman(folder, "sync", "--frozen").code == 0
    assert records(victim)["fmt@acme"].get("consented") is True  # forced: the org consents


def test_a_plugin_forced_by_one_machine_stays_out_of_the_projects_files(
    tmp_path: Path, isolated_home: Path, acme: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack (by accident): this machine's managed policy forces `extra@acme`; sync used to
    write it into the committed plugman.lock, so a teammate without that policy failed `sync
    --locked` or got it installed. Invariant: it is installed here, flagged as forced in this
    machine's record, and never written to plugman.lock or plugman.toml."""
    folder = project(tmp_path, acme)
    committed = snapshot(folder / "plugman.lock", folder / "plugman.toml")
    force(isolated_home, acme, "extra@acme")
    for argv in (("sync",), ("sync", "--locked"), ("lock",), ("sync", "--frozen")):
        done = plugman(folder, *argv)
        assert done.code == 0, (argv, done)
        assert snapshot(folder / "plugman.lock", folder / "plugman.toml") == committed, argv
        found = records(isolated_home)
        assert found["extra@acme"].get("forced") is True, argv  # installed here, as forced
        assert found["extra@acme"].get("consented") is True, argv
    assert "extra" not in git(folder, "status", "--porcelain")
    plugman(folder, "install", "other@acme", "--scope", "project")  # another save of the lock
    assert "extra@acme" not in (folder / "plugman.lock").read_text()
    assert "other@acme" in (folder / "plugman.lock").read_text()
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "other")
    teammate = use_home(monkeypatch, tmp_path / "teammate")  # no managed policy
    done = plugman(folder, "sync", "--locked")
    assert done.code == 0, done
    assert set(records(teammate)) == {"fmt@acme", "other@acme"}
