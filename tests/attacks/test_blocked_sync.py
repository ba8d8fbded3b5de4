"""Attacks on the managed block through `plugman sync`: a plugin the project still declares
(or the lock still pins) after the organization blocked it keeps reaching agents, because
sync refused as a whole and so redeployed nothing; or a fresh clone's `sync --frozen` fetches
it from the lock (docs/claude-format.md#organization-policy).

Invariant (`plugman.plugins.lifecycle.sync.synced`, `plugins.planner._Planner.blocked`,
`plugins.registry.plugin_block`): sync in every mode (`sync`, `--locked`, `--frozen`) skips a
plugin the managed policy blocks, with a warning naming the rule and its file: it is never
fetched or installed; one installed before is kept but not delivered (`list` says why); the
rest is installed and every linked agent redeployed; the committed plugman.lock keeps the
team's pin (one machine's policy stays out of it) and the command exits 0 (see
docs/claude-format.md: `--frozen` is about drift of the lock, which a blocked plugin is not).
A marketplace the project declares and the policy blocks is not added and its plugins are
skipped the same way. The pair: the allowed plugin is installed and delivered by the same
command, and the blocked one comes back at the first sync after the rule is lifted.

The launchers (`plugman hooks exec`, `plugman mcp run`) start nothing of a blocked plugin and
say which rule (`runtime.launch.why`, `runtime.hook_exec.run_here`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.attacks.test_policy_identity import World, world

__all__ = ["world"]  # the fixture: real git repositories standing for GitHub

BLOCK_BAD = {"blockedMarketplaces": [{"source": "github", "repo": "ACME/bad"}]}
DECLARED = '[plugins]\n"tool@bad" = "*"\n"tool@good" = "*"\n'


def _project_markets(world: World) -> str:
    hub = world.hub.as_uri()
    return (
        f'[marketplaces]\nbad = {{ source = "{hub}/acme/bad.git" }}\n'
        f'good = {{ source = "{hub}/acme/good.git" }}\n\n'
    )


def _delivered(world: World) -> set[str]:
    """The plugins resolution delivers (installed, enabled, not blocked), checked against the
    skill files it hands the agents: none of a plugin left out (each marketplace's `tool`
    says its repository in its description)."""
    resolved = json.loads(world.ok("config", "resolve", "--json").stdout)
    rows = {p["id"] for p in resolved["plugins"] if p["enabled"] and "blocked" not in p}
    texts = " ".join(Path(s["path"]).read_text() for s in resolved["skills"].values())
    for plugin_id in ("tool@bad", "tool@good"):
        if plugin_id not in rows:
            assert f"acme-{plugin_id[5:]}" not in texts, texts
    return rows


def _installed(world: World) -> set[str]:
    return {p["id"] for p in json.loads(world.ok("list", "--json").stdout)["plugins"]}


@pytest.mark.parametrize("mode", [[], ["--locked"], ["--frozen"]], ids=["sync", "locked", "frozen"])
def test_installed_then_blocked_sync_skips_it_and_syncs_the_rest(
    world: World, mode: list[str]
) -> None:
    """Attack: the organization blocks a marketplace after its plugin was synced; the project
    still declares it and the lock pins it. Invariant: `sync` (every mode) exits 0, warns with
    the rule and file, delivers nothing of it (list says why) while the allowed plugin stays
    delivered, and leaves the committed lock as it was; lifted, the next sync delivers it."""
    (world.project / "plugman.toml").write_text(_project_markets(world) + DECLARED)
    world.ok("sync")
    assert _delivered(world) == {"tool@bad", "tool@good"}
    lock = (world.project / "plugman.lock").read_bytes()
    world.managed(BLOCK_BAD)
    done = world.ok("sync", *mode)
    assert "tool@bad" in done.stderr and "blockedMarketplaces" in done.stderr, done.stderr
    assert "managed-settings.json" in done.stderr and "skipped" in done.stderr, done.stderr
    assert _delivered(world) == {"tool@good"}
    assert "not delivered: its marketplace 'bad' is blocked" in world.ok("list").stdout
    assert (world.project / "plugman.lock").read_bytes() == lock
    world.managed({})
    world.ok("sync", *mode)
    assert _delivered(world) == {"tool@bad", "tool@good"}


@pytest.mark.parametrize("mode", [[], ["--locked"], ["--frozen"]], ids=["sync", "locked", "frozen"])
def test_fresh_clone_sync_never_fetches_a_blocked_plugin(
    world: World, mode: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: a clone whose plugman.toml declares a marketplace the organization blocks and
    whose plugman.lock pins its plugin, synced on a machine under that policy (a fresh
    PLUGMAN_HOME). Invariant: the blocked marketplace is not added, its plugin not fetched or
    installed, the lock left as committed; the allowed plugin is installed and delivered."""
    (world.project / "plugman.toml").write_text(_project_markets(world) + DECLARED)
    world.ok("sync")
    lock = (world.project / "plugman.lock").read_bytes()
    assert b'"tool@bad"' in lock
    fresh = world.root / "fresh-home"
    monkeypatch.setenv("PLUGMAN_HOME", str(fresh))
    world.managed(BLOCK_BAD)
    done = world.ok("sync", *mode)
    assert "tool@bad" in done.stderr and "blockedMarketplaces" in done.stderr, done.stderr
    assert _installed(world) == {"tool@good"}
    assert _delivered(world) == {"tool@good"}
    markets = json.loads(world.ok("marketplace", "list", "--json").stdout)["marketplaces"]
    assert "bad" not in {m["name"] for m in markets}
    assert not (fresh / "cache" / "marketplaces" / "bad").exists()
    assert (world.project / "plugman.lock").read_bytes() == lock


def test_lock_refuses_a_project_marketplace_the_policy_blocks(world: World) -> None:
    """Attack: `plugman lock` would rewrite the team's lock without the blocked plugin (one
    machine's policy written into the committed file). Invariant: lock refuses, naming the
    rule, and changes nothing; with the rule lifted it locks both."""
    (world.project / "plugman.toml").write_text(_project_markets(world) + DECLARED)
    world.managed(BLOCK_BAD)
    world.refused("lock", match="blockedMarketplaces")
    world.managed({})
    world.ok("lock")
    assert b'"tool@bad"' in (world.project / "plugman.lock").read_bytes()


def test_declared_plugin_blocked_by_name_under_another_marketplace_name(world: World) -> None:
    """Attack: `enabledPlugins: {"tool@good": false}`; the project declares the same plugin
    from a marketplace it names `alias` (the same repository, spelled `ACME/Good`). Invariant:
    sync skips it with the rule named; `tool@evil` (another source) is installed."""
    hub = world.hub.as_uri()
    (world.project / "plugman.toml").write_text(
        f'[marketplaces]\nalias = {{ source = "{hub}/ACME/Good" }}\n'
        f'evil = {{ source = "{hub}/evil/market.git" }}\n\n'
        '[plugins]\n"tool@alias" = "*"\n"tool@evil" = "*"\n'
    )
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "good")
    world.managed({"enabledPlugins": {"tool@good": False}})
    done = world.ok("sync")
    assert "tool@alias" in done.stderr and "enabledPlugins" in done.stderr, done.stderr
    assert _installed(world) == {"tool@evil"}


def _hooked_market(root: Path, name: str) -> Path:
    """A folder marketplace whose plugin `name` has a SessionStart hook and a stdio server,
    each writing a marker file (`<root>/<name>-hook`, `<root>/<name>-server`) when run."""
    folder = root / f"{name}-market"
    tree = folder / "plugins" / name
    (tree / ".claude-plugin").mkdir(parents=True)
    (tree / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    write = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"
    hook = {"type": "command", "command": f'{sys.executable} -c "{write}" {root / name}-hook'}
    (tree / "hooks").mkdir()
    (tree / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    )
    server = {"command": sys.executable, "args": ["-c", write, str(root / f"{name}-server")]}
    (tree / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": server}}))
    catalog = {
        "name": f"{name}-market",
        "owner": {"name": "t"},
        "plugins": [{"name": name, "source": f"./plugins/{name}"}],
    }
    (folder / ".claude-plugin").mkdir()
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return folder


def _launch(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    """`plugman ARGS` as an agent starts it: a process in the project folder."""
    return subprocess.run(
        [sys.executable, "-m", "plugman", *args],
        cwd=world.project,
        input=json.dumps({"hook_event_name": "SessionStart", "source": "startup"}),
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
        check=False,
    )


LAUNCHERS = [
    ("hooks-exec", ("hooks", "exec", "codex", "SessionStart", "{name}@{name}-market#0"), "hook"),
    ("mcp-run", ("mcp", "run", "plugin:{name}:srv"), "server"),
]


@pytest.mark.parametrize(("case", "argv", "what"), LAUNCHERS, ids=[c[0] for c in LAUNCHERS])
def test_launchers_start_nothing_of_a_blocked_plugin(
    world: World, case: str, argv: tuple[str, ...], what: str
) -> None:
    """Attack: an agent's file still names the launcher for a plugin's hook or server after
    the organization blocked the plugin's marketplace (the agent's file not yet rewritten).
    Invariant: the launcher resolves, finds the plugin blocked, starts nothing and says which
    rule in which file (exit 1: a non-blocking error in the agent); the allowed plugin's
    entry starts."""
    for name in ("doomed", "kept"):
        world.ok("marketplace", "add", str(_hooked_market(world.root, name)))
        world.ok("install", name, "--scope", "user")
    managed = Path(os.environ["PLUGMAN_MANAGED_DIR"])
    managed.mkdir(parents=True, exist_ok=True)
    (managed / "managed-settings.toml").write_text(
        '[[blockedMarketplaces]]\nsource = "pathPattern"\npathPattern = "doomed-market"\n'
    )
    refused = _launch(world, *(a.format(name="doomed") for a in argv))
    assert refused.returncode == 1, refused
    assert "blocked" in refused.stderr and "managed-settings.toml" in refused.stderr, refused
    assert "Traceback" not in refused.stderr
    assert not (world.root / f"doomed-{what}").exists()
    ran = _launch(world, *(a.format(name="kept") for a in argv))
    assert ran.returncode == 0, ran
    assert (world.root / f"kept-{what}").read_text() == "ran"
