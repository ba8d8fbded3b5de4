"""Attacks on the organization's policy: an identity re-spelled, a name reused, a block rule
walked around by another path (docs/claude-format.md#organization-policy).

Invariants attacked: the managed policy compares canonical identities (`plugman.core.identity`:
git URLs as git resolves them, server URLs by the WHATWG URL standard), so a different spelling
of a blocked or reserved identity does not pass (`plugman.config.policy`, `plugins.registry.
official`, `config.signers`); a plugin is blocked by what it is, on every path (install by name,
direct install, another marketplace name for the same source, `sync --frozen`), and one blocked
after install is not delivered, `list` saying which rule (`plugman.config.policy_plugins`);
forced consent only for the marketplace the managed settings mean. Each refused case is paired
with its allowed variant working.

Real git repositories (file:// bare repositories standing for GitHub through
PLUGMAN_GITHUB_URL, so `owner/repo`, GitHub URLs and their spellings resolve to them), the real
CLI in process, real managed-settings files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plugman.cli import invoke
from tests.integration.helpers import git, snapshot


class World(NamedTuple):
    root: Path
    project: Path
    hub: Path  # the folder of bare repositories standing for https://github.com
    home: Path  # PLUGMAN_HOME
    claude_managed: Path

    def cli(self, *args: str) -> Any:
        result = invoke(["--project", str(self.project), *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), result
        assert "Traceback" not in result.output
        return result

    def ok(self, *args: str) -> Any:
        result = self.cli(*args)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result

    def refused(self, *args: str, match: str) -> str:
        before = _files(self.home, self.project)
        result = self.cli(*args)
        assert result.exit_code in (1, 2), (args, result.stdout, result.stderr)
        assert match in result.stderr, (args, result.stderr)
        assert _files(self.home, self.project) == before, f"{args} changed files"
        return str(result.stderr)

    def managed(self, settings: dict[str, Any]) -> None:
        self.claude_managed.mkdir(parents=True, exist_ok=True)
        (self.claude_managed / "managed-settings.json").write_text(json.dumps(settings))


def _files(*roots: Path) -> dict[str, tuple[str, bytes]]:
    """Every file and link under `roots` (a refused command may leave an empty folder, and
    the lock file a mutating command holds)."""
    found = snapshot(*roots).items()
    return {k: v for k, v in found if v[0] != "dir" and not k.endswith("/state/lock")}


def _plugin(folder: Path, name: str, marker: str = "") -> None:
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    skill = folder / "skills" / f"{name}-skill" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(f"---\nname: {name}-skill\ndescription: {name} {marker}\n---\nDo it.\n")


def _market(folder: Path, name: str, plugins: dict[str, str]) -> Path:
    """A marketplace repository (committed) holding `plugins` (name -> marker)."""
    for plugin, marker in plugins.items():
        _plugin(folder / "plugins" / plugin, plugin, marker)
    catalog = {
        "name": name,
        "owner": {"name": "tests"},
        "plugins": [{"name": p, "source": f"./plugins/{p}"} for p in plugins],
    }
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "market")
    return folder


def _bare(hub: Path, repo: str, source: Path) -> None:
    git(hub, "clone", "-q", "--bare", str(source), f"{repo}.git")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    import os

    hub = tmp_path / "hub"
    hub.mkdir()
    for repo in ("acme/bad", "acme/good", "anthropics/market", "evil/market"):
        (hub / repo).parent.mkdir(parents=True, exist_ok=True)
        name = repo.replace("/", "-")
        _bare(hub, repo, _market(tmp_path / "work" / name, name, {"tool": name}))
    # GitHub's names are case-insensitive: these links make the stand-in answer so too
    (hub / "ACME").symlink_to("acme")
    (hub / "Acme").symlink_to("acme")
    (hub / "Anthropics").symlink_to("anthropics")
    (hub / "acme" / "Good.git").symlink_to("good.git")
    (hub / "acme" / "Bad.git").symlink_to("bad.git")
    (hub / "acme" / "x").mkdir()
    monkeypatch.setenv("PLUGMAN_GITHUB_URL", hub.as_uri())
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    return World(
        tmp_path,
        project,
        hub,
        Path(os.environ["PLUGMAN_HOME"]),
        Path(os.environ["PLUGMAN_CLAUDE_MANAGED_DIR"]),
    )


BLOCK = {"blockedMarketplaces": [{"source": "github", "repo": "acme/bad"}]}
# spellings of one repository: (id, how {repo} is written); `{hub}` is the GitHub stand-in
SPELLINGS = [
    ("shorthand-case", "ACME/{repo}"),
    ("url-case", "{hub}/Acme/{Repo}.git"),
    ("no-dot-git", "{hub}/acme/{repo}"),
    ("trailing-slash", "{hub}/acme/{repo}.git/"),
    ("dot-dot-segment", "{hub}/acme/x/../{repo}.git"),
    ("dot-segment", "{hub}/acme/./{repo}.git"),
    ("percent-encoded", "{hub}/acme/%{hex}{rest}.git"),
    ("doubled-slash", "{hub}/acme//{repo}.git"),
]


def _spell(form: str, world: World, repo: str) -> str:
    return form.format(
        hub=world.hub.as_uri(),
        repo=repo,
        Repo=repo.capitalize(),
        hex=f"{ord(repo[0]):x}",
        rest=repo[1:],
    )


@pytest.mark.parametrize(("case", "form"), SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_blocked_marketplace_respelled_is_refused_and_the_allowed_one_adds(
    world: World, case: str, form: str
) -> None:
    """Attack: add a blocked marketplace under another spelling of its repository (case,
    `.git`, a trailing or doubled slash, `.`/`..` segments, percent-encoding). Invariant:
    blockedMarketplaces matches the repository git reaches, whatever the spelling."""
    world.managed(BLOCK)
    world.refused("marketplace", "add", _spell(form, world, "bad"), match="blockedMarketplaces")
    world.ok("marketplace", "add", _spell(form, world, "good"), "--name", "good")


NETWORK_SPELLINGS = [
    "https://github.com/acme/bad",
    "https://GitHub.com/ACME/bad.git/",
    "git@github.com:acme/bad.git",
    "ssh://git@github.com:22/acme/bad",
    "https://github.com:443/acme/x/../bad",
    "https://github.com/%61cme/bad.git",
    "https://github.com./acme/bad",
]


@pytest.mark.parametrize("spelling", NETWORK_SPELLINGS)
def test_blocked_github_repository_over_ssh_or_https_is_refused_before_any_fetch(
    world: World, spelling: str
) -> None:
    """Attack: the blocked repository named by its https or ssh URL, with a default port, a
    trailing dot on the host, a `..` segment. Invariant: refused by policy before anything is
    fetched; the allowed repository, spelled the same way, is not refused by policy."""
    world.managed(BLOCK)
    world.refused("marketplace", "add", spelling, match="blockedMarketplaces")
    good = world.cli("policy", "explain", spelling.replace("bad", "good"), "--json")
    assert json.loads(good.stdout)["verdict"] != "refused", good.stdout


def test_reserved_name_with_a_lookalike_source_is_refused(world: World) -> None:
    """Attack: claim the reserved name `claude-plugins-official` for a repository whose URL
    starts with the anthropics organization but resolves elsewhere (`anthropics/../evil`).
    Invariant: reserved names only for a source git resolves to GitHub's anthropics org."""
    hub = world.hub.as_uri()
    lookalikes = (f"{hub}/anthropics/../evil/market.git", f"{hub}/anthropics%2F..%2Fevil/market")
    for lookalike in lookalikes:
        world.refused(
            "marketplace", "add", lookalike, "--name", "claude-plugins-official", match="reserved"
        )
    world.ok("marketplace", "add", f"{hub}/Anthropics/market", "--name", "claude-plugins-official")


def test_blocked_plugin_by_another_marketplace_name_direct_or_frozen_is_refused(
    world: World,
) -> None:
    """Attack: install a plugin the managed policy blocks (`tool@good: false`) under another
    marketplace name for the same source, from its folder directly, and from a lock pin made
    before the rule (`sync --frozen`, which skips it with the rule named and delivers nothing
    of it). Invariant: blocked by what it is, on every path; the same plugin from another
    source installs."""
    hub = world.hub.as_uri()
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "good")
    world.ok("marketplace", "add", f"{hub}/acme/bad.git", "--name", "other")
    world.ok("install", "tool@good", "--scope", "project")
    world.ok("lock")
    world.managed({"enabledPlugins": {"tool@good": False}})
    world.ok("marketplace", "add", f"{hub}/ACME/good", "--name", "alias")
    world.refused("install", "tool@alias", "--scope", "user", match="enabledPlugins")
    folder = world.root / "work" / "acme-good" / "plugins" / "tool"
    world.refused("install", str(folder), "--scope", "user", match="enabledPlugins")
    frozen = world.ok("sync", "--frozen")  # skipped, the rule named (tests/attacks/test_blocked_*)
    assert "enabledPlugins" in frozen.stderr and "skipped" in frozen.stderr, frozen.stderr
    assert "tool:tool-skill" not in json.dumps(_skills(world))
    world.ok("install", "tool@other", "--scope", "user")  # another marketplace's `tool`


def test_blocked_after_install_is_not_delivered_and_list_says_why(world: World) -> None:
    """Attack: a plugin installed before the organization blocked its marketplace keeps
    reaching agents. Invariant: resolution delivers nothing of it, `list` names the rule and
    its file; a plugin of another marketplace is still delivered."""
    hub = world.hub.as_uri()
    world.ok("marketplace", "add", f"{hub}/acme/bad.git", "--name", "bad")
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "good")
    world.ok("install", "tool@bad", "--scope", "user")
    world.ok("install", "tool@good", "--scope", "project")
    before = json.loads(world.ok("config", "resolve", "--json").stdout)
    assert "tool:tool-skill" in json.dumps(before["skills"])
    world.managed({"blockedMarketplaces": [{"source": "github", "repo": "ACME/bad"}]})
    listed = json.loads(world.ok("list", "--json").stdout)["plugins"]
    bad = next(p for p in listed if p["id"] == "tool@bad")
    assert "blockedMarketplaces" in bad["blocked"] and "managed-settings.json" in bad["blocked"]
    assert "blocked" not in next(p for p in listed if p["id"] == "tool@good")
    text = world.ok("list").stdout
    assert "not delivered: its marketplace 'bad' is blocked" in text, text
    after = world.cli("config", "resolve", "--json")
    diagnostics = json.loads(after.stdout)["diagnostics"]
    assert any(d["code"] == "policy-blocked" and "tool@bad" in d["message"] for d in diagnostics)


def test_malformed_block_rule_refuses_every_path(world: World) -> None:
    """Attack: a block rule plugman cannot read (a number for a repo) is ignored and lets
    everything through. Invariant: fail closed on every path (a marketplace, a direct install);
    the fixed rule lets the allowed one in."""
    world.managed({"blockedMarketplaces": [{"source": "github", "repo": 5}]})
    hub = world.hub.as_uri()
    world.refused("marketplace", "add", f"{hub}/acme/good.git", match="blockedMarketplaces")
    folder = world.root / "work" / "acme-good" / "plugins" / "tool"
    world.refused("install", str(folder), "--scope", "user", match="blockedMarketplaces")
    world.managed(BLOCK)
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "good")
    world.ok("install", str(folder), "--scope", "user")


FORCED = {"enabledPlugins": {"tool@op": True}}


@pytest.mark.parametrize("organization_declares_op", [False, True], ids=["by-name", "declared"])
def test_forced_plugin_from_a_project_declared_same_name_marketplace_is_not_consented(
    world: World, organization_declares_op: bool
) -> None:
    """Attack: the managed settings force `tool@op` (the organization's `op`); a cloned
    project declares its own marketplace named `op` (the attacker's repository) and `tool@op`,
    so sync would install the attacker's `tool` as consented. Invariant: forced consent only
    for the marketplace the managed settings mean (the one they declare, else one the user
    added); a project-declared namesake's plugin waits for approval. Paired: the user's own
    `op` (the organization's source) is consented by the same sync."""
    hub = world.hub.as_uri()
    settings = dict(FORCED)
    if organization_declares_op:
        good = {"source": {"source": "git", "url": f"{hub}/acme/good.git"}}
        settings["extraKnownMarketplaces"] = {"op": good}
    declared = f'[marketplaces]\nop = {{ source = "{hub}/evil/market.git" }}\n'
    (world.project / "plugman.toml").write_text(declared)
    world.ok("sync")  # the clone's marketplace is registered (before any policy forced it)
    world.managed(settings)
    (world.project / "plugman.toml").write_text(declared + '\n[plugins]\n"tool@op" = "*"\n')
    synced = world.cli("sync")
    if synced.exit_code == 0:  # installed, not consented
        assert _consented(world, "tool@op") is False
    else:  # or refused: the organization's op and the clone's are not the same marketplace
        assert "already registered" in synced.stderr, synced.stderr
    # the organization's op, added by the user: the same sync consents it
    world.managed({})
    (world.project / "plugman.toml").write_text("")
    world.ok("sync")
    world.ok("marketplace", "remove", "op")
    world.managed(settings)
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "op")
    (world.project / "plugman.toml").write_text('[plugins]\n"tool@op" = "*"\n')
    synced = world.cli("sync")
    assert synced.exit_code == 0, synced.stderr
    assert _consented(world, "tool@op") is True
    assert "tool:tool-skill" in _skills(world)


def _consented(world: World, plugin_id: str) -> bool | None:
    """Whether the project's install record has the plugin as consented (None: absent)."""
    from plugman.core.paths import Paths
    from plugman.core.state import InstallRecord

    record = InstallRecord.load(Paths.from_env(project=world.project), "project")
    entry = record.plugins.get(plugin_id)
    return None if entry is None else entry.consented


def _skills(world: World) -> Any:
    return json.loads(world.ok("config", "resolve", "--json").stdout)["skills"]


DENIED_SPELLINGS = [
    "http://0x7f.1:8931/mcp",
    "http://2130706433:8931/mcp",
    "http://127.1:8931/mcp",
    "HTTP://LOCALHOST.:8931/mcp",
    "http:\\\\localhost:8931\\mcp",
    "http://user:pw@127.0.0.1:8931/mcp",
    "http://%6c%6fcalhost:8931/mcp",
    "http://[::ffff:7f00:1]:8931/mcp",
]


@pytest.mark.parametrize("url", DENIED_SPELLINGS)
def test_denied_server_url_respelled_is_dropped_by_policy(world: World, url: str) -> None:
    """Attack: a server URL the policy denies (`http://127.0.0.1:*/*`, `http://localhost:*/*`)
    written another way: hex or integer IPv4, `127.1`, upper case and a trailing dot,
    backslashes, userinfo, percent-escapes, IPv4-mapped IPv6. Invariant: the URL is compared
    as the agents' URL parser (WHATWG) reads it; another host is still allowed."""
    deny = [{"serverUrl": "http://127.0.0.1:*/*"}, {"serverUrl": "http://localhost:*/*"}]
    deny.append({"serverUrl": "http://[::ffff:127.0.0.1]:*/*"})
    world.managed({"deniedMcpServers": deny})
    config = world.home / "config" / "plugman.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[mcp_servers.sneaky]\ntype = "http"\nurl = {json.dumps(url)}\n\n'
        '[mcp_servers.fine]\ntype = "http"\nurl = "http://127.0.0.2:8931/mcp"\n'
    )
    resolved = json.loads(world.ok("config", "resolve", "--json").stdout)
    assert "sneaky" not in resolved["mcpServers"], resolved["mcpServers"]
    assert "fine" in resolved["mcpServers"]
    dropped = json.dumps(resolved)
    assert "deniedMcpServers" in dropped, dropped
