"""Attacks on the managed block and forced consent through the other paths that bring a
plugin in: `import claude` (Claude Code's own state naming a blocked plugin under another
marketplace name, a clone's `.claude/settings.json` declaring a marketplace), `update` (a
plugin blocked since install, an update bringing a dependency the policy blocks), and the
marketplace registry's record of who had a marketplace added (docs/claude-format.md).

Invariants: every path goes through `plugins.planner._Planner.blocked` (`plugins.registry.
plugin_block`, `config.policy_plugins.blocked`: by what the plugin is, not its id), so import
skips the plugin with the rule named and update refuses it (a named update) or leaves it
(`update` of everything: `plugins.updates.updated`); forced consent (`config.policy_plugins.
forced`) is only for a marketplace the user or the managed settings had added: one a clone's
Claude settings named (`plugins.claude_import`), one a project declared even after
`marketplace update` (`plugins.marketplaces.update` keeps the origin), and one an older
plugman registered without recording who asked (no `origin`: unknown) are not consented.
Each attack is paired with the legitimate variant working.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.test_policy_identity import World, _consented, world
from tests.integration.helpers import git

__all__ = ["world"]  # the fixture: real git repositories standing for GitHub


def _claude(world: World, monkeypatch: pytest.MonkeyPatch, **state: Any) -> Path:
    """Claude Code's own state (CLAUDE_CONFIG_DIR): its known marketplaces, installed plugins
    and user settings, in the shapes Claude Code 2.1.328 writes."""
    config = world.root / "claude"
    plugins = config / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    known = {
        name: {"source": source, "installLocation": str(plugins / "marketplaces" / name)}
        for name, source in state.get("markets", {}).items()
    }
    (plugins / "known_marketplaces.json").write_text(json.dumps(known))
    installed = {
        plugin_id: [{"scope": "user", "version": "1.0.0", "installPath": "/nowhere"}]
        for plugin_id in state.get("installed", ())
    }
    (plugins / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": installed})
    )
    enabled = dict.fromkeys(state.get("installed", ()), True)
    (config / "settings.json").write_text(json.dumps({"enabledPlugins": enabled}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config


def _steps(done: Any) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in json.loads(done.stdout)["plugins"]}


@pytest.mark.parametrize("policy", ["by-plugin", "by-marketplace"])
def test_import_claude_skips_a_blocked_plugin_under_another_marketplace_name(
    world: World, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    """Attack: Claude Code's state names `tool@alias`, where Claude's `alias` marketplace is
    GitHub's `ACME/Good`, the repository the organization blocks (`tool@good: false` with
    the user's `good`, or `blockedMarketplaces` acme/good). Invariant: import claude skips it
    with the rule named and installs nothing of it; `tool@evil` (allowed) is imported by the
    same command; with no policy, `tool@alias` imports."""
    _claude(
        world,
        monkeypatch,
        markets={
            "alias": {"source": "github", "repo": "ACME/Good"},
            "evil": {"source": "github", "repo": "evil/market"},
        },
        installed=("tool@alias", "tool@evil"),
    )
    world.ok("marketplace", "add", f"{world.hub.as_uri()}/acme/good.git", "--name", "good")
    if policy == "by-plugin":
        world.managed({"enabledPlugins": {"tool@good": False}})
        rule = "enabledPlugins"
    else:
        world.managed({"blockedMarketplaces": [{"source": "github", "repo": "acme/good"}]})
        rule = "blockedMarketplaces"
    done = world.ok("import", "claude", "--apply", "--json")
    steps = _steps(done)
    assert steps["tool@alias"]["action"] == "skip", steps
    assert rule in steps["tool@alias"]["reason"] or policy == "by-marketplace", steps
    assert steps["tool@evil"]["action"] == "install", steps
    listed = {p["id"] for p in json.loads(world.ok("list", "--json").stdout)["plugins"]}
    assert listed == {"tool@evil"}
    world.managed({})
    again = _steps(world.ok("import", "claude", "--apply", "--json"))
    assert again["tool@alias"]["action"] == "install", again


def _push(world: World, repo: str, change: dict[str, Any]) -> None:
    """Commit `change` (path -> JSON) into the marketplace repository and push it to the hub."""
    work = world.root / "work" / repo.replace("/", "-")
    for path, value in change.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(json.dumps(value))
    git(work, "add", "-A")
    git(work, "commit", "-qm", "change")
    git(work, "push", "-q", str(world.hub / f"{repo}.git"), "main")


def test_update_refuses_a_plugin_blocked_since_install(world: World) -> None:
    """Attack: `tool@alias` was installed before the organization blocked `tool@good` (the
    same repository under another name); `update tool@alias` would fetch it again. Invariant:
    refused, the rule named, nothing changed; `update` of everything leaves it (its own
    finding, exit 1) and updates the rest; the plugin of another source updates."""
    hub = world.hub.as_uri()
    world.ok("marketplace", "add", f"{hub}/ACME/Good", "--name", "alias")
    world.ok("marketplace", "add", f"{hub}/evil/market.git", "--name", "evil")
    world.ok("install", "tool@alias", "--scope", "user")
    world.ok("install", "tool@evil", "--scope", "user")
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "good")
    world.managed({"enabledPlugins": {"tool@good": False}})
    _refused_update(world, "tool@alias", match="enabledPlugins")
    _push(world, "evil/market", {"plugins/tool/.claude-plugin/plugin.json": _v("tool", "2.0.0")})
    everything = world.cli("update")
    assert everything.exit_code == 1, (everything.stdout, everything.stderr)
    assert "not updated: tool@alias (user): plugin tool@alias is blocked" in everything.stdout
    versions = {
        p["id"]: p["version"] for p in json.loads(world.ok("list", "--json").stdout)["plugins"]
    }
    assert versions["tool@evil"] == "2.0.0", versions


def _refused_update(world: World, plugin_id: str, match: str) -> None:
    """`update PLUGIN` refused (exit 1, `match` in the error), no installed plugin changed
    (the catalogs it refreshes first are not the plugin: their cache may move)."""
    before = world.ok("list", "--json").stdout
    done = world.cli("update", plugin_id)
    assert done.exit_code == 1 and match in done.stderr, (done.stdout, done.stderr)
    assert "blocked by managed policy" in done.stderr, done.stderr
    assert world.ok("list", "--json").stdout == before


def _v(name: str, version: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "version": version, **more}


def test_update_bringing_a_blocked_dependency_is_refused(world: World) -> None:
    """Attack: the marketplace's next version of `tool` depends on `helper`, a plugin the
    organization blocks (`helper@good: false`); `update` would install it as a dependency.
    Invariant: the update is refused, the rule named, nothing changed (tool stays 1.0); with
    the rule lifted the same update goes through."""
    hub = world.hub.as_uri()
    world.ok("marketplace", "add", f"{hub}/acme/good.git", "--name", "good")
    world.ok("install", "tool@good", "--scope", "user")
    catalog = json.loads(
        (world.root / "work/acme-good/.claude-plugin/marketplace.json").read_text()
    )
    catalog["plugins"].append({"name": "helper", "source": "./plugins/helper"})
    _push(
        world,
        "acme/good",
        {
            ".claude-plugin/marketplace.json": catalog,
            "plugins/helper/.claude-plugin/plugin.json": _v("helper", "1.0.0"),
            "plugins/tool/.claude-plugin/plugin.json": _v(
                "tool", "2.0.0", dependencies=[{"name": "helper"}]
            ),
        },
    )
    world.managed({"enabledPlugins": {"helper@good": False}})
    world.ok("marketplace", "update", "good")
    _refused_update(world, "tool@good", match="helper@good")
    world.managed({})
    world.ok("update", "tool@good")
    versions = {
        p["id"]: p["version"] for p in json.loads(world.ok("list", "--json").stdout)["plugins"]
    }
    assert versions["tool@good"] == "2.0.0", versions


FORCED = {"enabledPlugins": {"tool@op": True}}
DECLARES_TOOL = '[plugins]\n"tool@op" = "*"\n'


def _registry(world: World) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((world.home / "state" / "marketplaces.json").read_text())
    return data


@pytest.mark.parametrize("who", ["project-settings", "user-settings"])
def test_import_claude_registers_a_clone_declared_marketplace_as_the_projects(
    world: World, monkeypatch: pytest.MonkeyPatch, who: str
) -> None:
    """Attack: a clone's `.claude/settings.json` declares its own marketplace `op` (the
    attacker's repository); `import claude` registers it; the organization forces `tool@op`,
    so a later sync would install the attacker's `tool` as consented. Invariant: import
    records it as the project's (`origin = "project"`), never forced consent: synced, its
    plugin waits for approval. Paired: `op` from the user's own Claude settings is the user's,
    and the same sync consents it."""
    market = {"source": {"source": "git", "url": f"{world.hub.as_uri()}/evil/market.git"}}
    config = _claude(world, monkeypatch)
    settings = {"extraKnownMarketplaces": {"op": market}}
    if who == "project-settings":
        (world.project / ".claude").mkdir()
        (world.project / ".claude" / "settings.json").write_text(json.dumps(settings))
    else:
        (config / "settings.json").write_text(json.dumps(settings))
    world.ok("import", "claude", "--apply")
    assert _registry(world)["marketplaces"]["op"]["origin"] == (
        "project" if who == "project-settings" else "user"
    )
    world.managed(FORCED)
    (world.project / "plugman.toml").write_text(DECLARES_TOOL)
    world.ok("sync")
    assert _consented(world, "tool@op") is (who == "user-settings")


def test_marketplace_update_keeps_a_project_marketplace_the_projects(world: World) -> None:
    """Attack: sync registers a clone's marketplace `op` as the project's; the user then runs
    `plugman marketplace update`, which rewrote the registry entry as the user's, so the
    forced `tool@op` became consented. Invariant: the update keeps who had it added; the user
    adding it knowingly (`marketplace add`) makes it theirs (the pair)."""
    source = f"{world.hub.as_uri()}/evil/market.git"
    (world.project / "plugman.toml").write_text(f'[marketplaces]\nop = {{ source = "{source}" }}\n')
    world.ok("sync")
    world.ok("marketplace", "update", "op")
    assert _registry(world)["marketplaces"]["op"]["origin"] == "project"
    world.managed(FORCED)
    (world.project / "plugman.toml").write_text(
        f'[marketplaces]\nop = {{ source = "{source}" }}\n\n{DECLARES_TOOL}'
    )
    world.ok("sync")
    assert _consented(world, "tool@op") is False
    world.ok("marketplace", "add", source, "--name", "op")
    world.ok("sync")
    assert _consented(world, "tool@op") is True


def test_a_registry_entry_without_origin_is_never_forced(world: World) -> None:
    """Attack: a marketplaces.json written by an older plugman has no `origin`, so a
    marketplace a project had registered reads as the user's, and the forced `tool@op` from
    it is consented. Invariant: a missing origin is unknown, never forced: sync warns with
    the command to add it knowingly and does not install the forced plugin; the project's
    declared one waits for approval. Paired: added again by the user, it is consented."""
    source = f"{world.hub.as_uri()}/evil/market.git"
    world.ok("marketplace", "add", source, "--name", "op")
    data = _registry(world)
    del data["marketplaces"]["op"]["origin"]
    (world.home / "state" / "marketplaces.json").write_text(json.dumps(data))
    world.managed(FORCED)
    forced_only = world.ok("sync")  # the project declares nothing: only the forced plugin
    assert "older plugman" in forced_only.stderr and f"add {source} --name op" in forced_only.stderr
    assert _consented(world, "tool@op") is None
    (world.project / "plugman.toml").write_text(DECLARES_TOOL)
    world.ok("sync")
    assert _consented(world, "tool@op") is False
    world.ok("marketplace", "add", source, "--name", "op")
    world.ok("sync")
    assert _consented(world, "tool@op") is True
