"""Claude Code 2.1.332 loads a plugin from plugman's store natively (docs/claude-native.md).

`plugman.agents.claude_plugin.plan` says what to write per scope; a small helper here writes it
(the deployment engine does that in plugman) and takes it out again. The real Claude Code then
runs offline (`claude_session_events`: a fake key, a closed loopback port, killed after `init`)
and must list the plugin's skill, command, agent and MCP server exactly once each and run its
SessionStart hook once; after removal every file of Claude's is byte-identical to before, except
what Claude writes on any session (`SESSION`) and what the plan names as Claude's own writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from plugman.agents import claude_plugin
from plugman.agents.claude_plugin import NativePlan, NativePlugin
from plugman.core.paths import Paths
from plugman.core.state import Scope
from plugman.manifest import edit
from plugman.manifest.edit import Block, Part
from tests.conftest import SAMPLES
from tests.integration.agents import agent_env, claude_bin, claude_session_events

NAME = "natkit"
MARKER = "NATKIT-HOOK-RAN"
# What Claude Code writes on every session, plugins or not (relative to HOME).
SESSION = (
    ".claude.json",  # its state: numStartups, projects, pluginUsage (one entry per plugin id), ...
    ".claude/backups/",
    ".claude/projects/",
    ".claude/sessions/",
    ".claude/session-env/",
    ".claude/shell-snapshots/",
    ".claude/todos/",
    ".claude/statsig/",
    ".claude/plugins/store/",  # its built-in plugins' records
)


def _build_plugin(root: Path) -> None:
    files = {
        ".claude-plugin/plugin.json": json.dumps({"name": NAME, "version": "0.1.0"}),
        f"skills/{NAME}-skill/SKILL.md": f"---\nname: {NAME}-skill\ndescription: d\n---\nHi.\n",
        f"commands/{NAME}-cmd.md": "---\ndescription: a command\n---\nSay hi.\n",
        f"agents/{NAME}-agent.md": f"---\nname: {NAME}-agent\ndescription: d\n---\nBe brief.\n",
        "hooks/hooks.json": json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": f"echo {MARKER} root=${{CLAUDE_PLUGIN_ROOT}}",
                                }
                            ]
                        }
                    ]
                }
            }
        ),
        ".mcp.json": json.dumps(
            {
                "mcpServers": {
                    f"{NAME}-mcp": {
                        "command": sys.executable,
                        "args": ["-c", "import sys; sys.stdin.read()"],
                    }
                }
            }
        ),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _chmod_tree(root: Path, writable: bool) -> None:
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names, ""]:
            path = Path(folder) / name
            mode = path.stat().st_mode
            bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
            path.chmod(mode | stat.S_IWUSR if writable else mode & ~bits)


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


class Applied(NamedTuple):
    plan: NativePlan
    edits: list[tuple[Path, str | None, list[Block], list[Part]]]
    dirs: list[Path]  # folders created for links and files, deepest last


def _apply(plan: NativePlan) -> Applied:
    """What the deployment engine does (without its journal): links, files, settings entries."""
    dirs: list[Path] = []
    made = [*plan.links, *plan.files, *plan.edits]
    for path in [thing.path for thing in made]:
        missing = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir()
            dirs.append(folder)
    for link in plan.links:
        link.path.symlink_to(link.target, target_is_directory=True)
    for file in plan.files:
        file.path.write_text(file.content, encoding="utf-8")
    edits = []
    for change in plan.edits:
        before = change.path.read_text(encoding="utf-8") if change.path.exists() else None
        text = edit.module("json").BASE if before is None else before
        edited = edit.add("json", text, change.parts, str(change.path))
        change.path.write_text(edited.text, encoding="utf-8")
        edits.append((change.path, before, edited.blocks, change.parts))
    return Applied(plan, edits, dirs)


def _remove(applied: Applied) -> None:
    for path, before, blocks, parts in applied.edits:
        text = edit.take_out("json", path.read_text(encoding="utf-8"), blocks, parts, str(path))
        if before is None and text == edit.module("json").BASE:
            path.unlink()
        else:
            path.write_text(text, encoding="utf-8")
    for link in applied.plan.links:
        link.path.unlink()
    for file in applied.plan.files:
        file.path.unlink()
    for folder in reversed(applied.dirs):
        folder.rmdir()


def _snapshot(home: Path, project: Path) -> dict[str, str]:
    """Claude's files (relative to HOME; the project's under `<project>/`): content digests."""
    found: dict[str, str] = {}
    roots = [(home / ".claude", ".claude"), (project / ".claude", "<project>/.claude")]
    for root, label in roots:
        for folder, dirs, names in os.walk(root):
            for name in dirs + names:
                path = Path(folder) / name
                key = f"{label}/{path.relative_to(root)}"
                if path.is_symlink():
                    found[key] = f"-> {path.readlink()}"
                elif path.is_file():
                    found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
                elif path.is_dir():
                    found[key + "/"] = "dir"
    found["<project>/.claude/"] = str((project / ".claude").is_dir())
    if (home / ".claude.json").exists():
        found[".claude.json"] = hashlib.sha256((home / ".claude.json").read_bytes()).hexdigest()
    return found


def _inventory(events: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    init = next(e for e in events if e.get("subtype") == "init")
    hooks = [
        str(e.get("stdout", ""))
        for e in events
        if e.get("subtype") == "hook_response" and MARKER in str(e.get("stdout", ""))
    ]
    return init, hooks


def _claude_wrote(key: str, own: list[str]) -> bool:
    """Whether `key` is one of Claude's own writes, inside one, or a folder made to hold one."""
    key = key.rstrip("/")
    return any(key == o or key.startswith(o + "/") or o.startswith(key + "/") for o in own)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, str], NativePlugin]]:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = {**agent_env(home, Path(sys.executable).parent), "PLUGMAN_HOME": str(home / "plugman")}
    root = Paths.from_env(env, project).store_dir / ("ab" * 32)
    _build_plugin(root)
    _chmod_tree(root, writable=False)  # the store's trees are read-only
    try:
        yield home, project, env, NativePlugin(f"{NAME}@samples", NAME, root, "0.1.0")
    finally:
        _chmod_tree(root, writable=True)


def test_plan_per_scope(tmp_path: Path) -> None:
    home, project, env = tmp_path / "h", tmp_path / "p", {"PLUGMAN_HOME": str(tmp_path / "pm")}
    plugin = NativePlugin("kit@m", "kit", tmp_path / "store" / "x")
    user = claude_plugin.plan("user", home, project, env, [plugin, plugin._replace(id="o@m")])
    assert user.links == [claude_plugin.Link(home / ".claude" / "skills" / "kit", plugin.root)]
    assert (user.edits, user.files, user.ids) == ([], [], {"kit@m": "kit@skills-dir"})
    assert user.data == {"kit@m": home / ".claude" / "plugins" / "data" / "kit-skills-dir"}
    assert user.problems == ["o@m: kit@m already gives Claude a plugin kit"]
    local = claude_plugin.plan("local", home, project, env, [plugin])
    mkt = claude_plugin.marketplace_name("local", project)
    assert local.ids == {"kit@m": f"kit@{mkt}"}
    assert [e.path for e in local.edits] == [
        home / ".claude" / "settings.json",
        project.absolute() / ".claude" / "settings.local.json",
    ]
    catalog = json.loads(local.files[0].content)
    assert catalog["plugins"] == [{"name": "kit", "source": "./plugins/kit"}]
    assert str(tmp_path / "pm") in str(local.files[0].path)
    assert claude_plugin.marketplace_name("project", project) != mkt
    assert claude_plugin.plan("project", home, project, env, []).edits == []
    assert claude_plugin.trust_missing({}, project)


def test_plan_carries_the_entry_that_defines_a_plugin(tmp_path: Path) -> None:
    """A plugin its marketplace entry defines (no plugin.json of Claude's) does not load from a
    skills folder: in user scope it goes into the marketplace `plugman-user`, declared and
    enabled in the user's settings; its catalog entry carries the entry's fields."""
    home, project, env = tmp_path / "h", tmp_path / "p", {"PLUGMAN_HOME": str(tmp_path / "pm")}
    kit = NativePlugin("kit@m", "kit", tmp_path / "store" / "x", "1.0")
    fields = {"name": "tb", "source": {"source": "github"}, "skills": ["./s"], "strict": False}
    tb = NativePlugin("tb@m", "tb", tmp_path / "store" / "y", None, fields)
    user = claude_plugin.plan("user", home, project, env, [kit, tb])
    market = claude_plugin.marketplace_dir("user", project, env)
    assert user.links == [
        claude_plugin.Link(home / ".claude" / "skills" / "kit", kit.root),
        claude_plugin.Link(market / "plugins" / "tb", tb.root),
    ]
    assert user.ids == {"kit@m": "kit@skills-dir", "tb@m": "tb@plugman-user"}
    [settings] = user.edits
    assert settings.path == home / ".claude" / "settings.json"
    assert [part.container for part in settings.parts] == [
        ("extraKnownMarketplaces",),
        ("enabledPlugins",),
    ]
    catalog = json.loads(user.files[0].content)
    assert catalog["name"] == "plugman-user"
    assert catalog["plugins"] == [
        {"name": "tb", "source": "./plugins/tb", "skills": ["./s"], "strict": False}
    ]
    project_plan = claude_plugin.plan("project", home, project, env, [tb._replace(entry={})])
    [entry] = json.loads(project_plan.files[0].content)["plugins"]
    assert entry == {"name": "tb", "source": "./plugins/tb", "strict": False}


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["user", "local", "project"])
def test_claude_loads_the_plugin_once_and_removal_restores_its_files(
    world: tuple[Path, Path, dict[str, str], NativePlugin], scope: Scope
) -> None:
    home, project, env, plugin = world
    claude_bin()  # installs the pinned agent (or skips when npm cannot be reached)
    # The user's own settings, which plugman's entries go next to and must leave as they were.
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text('{\n  "cleanupPeriodDays": 30\n}\n')
    if scope == "local":
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.local.json").write_text('{"cleanupPeriodDays": 31}\n')
    claude_session_events(project, env)  # Claude's own first-run files exist before the snapshot
    before, store = _snapshot(home, project), _tree_digest(plugin.root)

    plan = claude_plugin.plan(scope, home, project, env, [plugin])
    assert plan.problems == []
    applied = _apply(plan)
    init, hooks = _inventory(claude_session_events(project, env))

    assert init["skills"].count(f"{NAME}:{NAME}-skill") == 1
    assert [s for s in init["skills"] if f"{NAME}-skill" in s] == [f"{NAME}:{NAME}-skill"]
    assert [c for c in init["slash_commands"] if f"{NAME}-cmd" in c] == [f"{NAME}:{NAME}-cmd"]
    assert [a for a in init["agents"] if f"{NAME}-agent" in a] == [f"{NAME}:{NAME}-agent"]
    servers = [s["name"] for s in init["mcp_servers"] if f"{NAME}-mcp" in s["name"]]
    assert servers == [f"plugin:{NAME}:{NAME}-mcp"]
    loaded = [p for p in init["plugins"] if p["name"] == NAME]
    assert [(p["source"], p["path"]) for p in loaded] == [
        (plan.ids[plugin.id], str(plan.links[0].path))
    ]
    assert len(hooks) == 1 and f"root={plan.links[0].path}" in hooks[0], hooks
    assert _tree_digest(plugin.root) == store  # Claude wrote nothing into the store

    _remove(applied)
    init, hooks = _inventory(claude_session_events(project, env))
    assert hooks == [] and not [p for p in init["plugins"] if p["name"] == NAME]

    after = _snapshot(home, project)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    changed = {k for k in changed if not k.startswith(SESSION)}
    claude_own = [str(p.relative_to(home)) for p in plan.claude_writes]
    assert {k for k in changed if not _claude_wrote(k, claude_own)} == set(), sorted(changed)
    assert f".claude/plugins/data/{plan.data[plugin.id].name}/" in changed


@pytest.mark.slow
def test_a_plugin_its_entry_defines_reaches_claude_through_plugman(tmp_path: Path) -> None:
    """The sample `toolbox` has no plugin.json: its marketplace entry (`strict: false`) names
    its skill and command. Installed by plugman in user scope with Claude Code linked, Claude
    loads both as the plugin's; uninstalling and unlinking leave Claude's settings as they were."""
    claude_bin()  # installs the pinned agent (or skips when npm cannot be reached)
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    settings = home / ".claude" / "settings.json"
    settings.write_text('{\n  "cleanupPeriodDays": 30\n}\n')
    env = {**agent_env(home, Path(sys.executable).parent), "PLUGMAN_HOME": str(tmp_path / "pm")}

    def plugman(*args: str) -> None:
        cmd = [sys.executable, "-m", "plugman", "--project", str(project), *args]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)

    plugman("marketplace", "add", str(SAMPLES))
    plugman("agents", "add", "claude-code", "--scope", "user")
    plugman("install", "toolbox", "--scope", "user")
    init, _ = _inventory(claude_session_events(project, env))
    assert [s for s in init["skills"] if "shell-helper" in s] == ["toolbox:shell-helper"]
    assert [c for c in init["slash_commands"] if "ls-large" in c] == ["toolbox:ls-large"]
    assert [p["source"] for p in init["plugins"] if p["name"] == "toolbox"] == [
        "toolbox@plugman-user"
    ]

    plugman("uninstall", "toolbox", "--scope", "user")
    plugman("agents", "remove", "claude-code", "--scope", "user")
    assert settings.read_text() == '{\n  "cleanupPeriodDays": 30\n}\n'
    init, _ = _inventory(claude_session_events(project, env))
    assert not [p for p in init["plugins"] if p["name"] == "toolbox"]


def _options_plugin(root: Path) -> None:
    """A marketplace `opts` with the plugin `wx`: one sensitive option, one not, both required,
    and an MCP server that uses both."""
    manifest = {
        "name": "wx",
        "version": "1.0.0",
        "userConfig": {
            "api_key": {"type": "string", "title": "Key", "description": "k", "sensitive": True},
            "units": {"type": "string", "title": "Units", "description": "u", "required": True},
        },
        "mcpServers": {
            "wx-mcp": {
                "command": sys.executable,
                "args": ["-c", "import sys; sys.stdin.read()", "${user_config.units}"],
                "env": {"WX_KEY": "${user_config.api_key}"},
            }
        },
    }
    catalog = {
        "name": "opts",
        "owner": {"name": "t"},
        "plugins": [{"name": "wx", "source": "./wx"}],
    }
    (root / "wx" / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin").mkdir()
    (root / "wx" / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


@pytest.mark.slow
@pytest.mark.parametrize("scope", ["user", "project"])
def test_options_configured_with_plugman_reach_claude_and_leave_with_the_plugin(
    tmp_path: Path, scope: Scope
) -> None:
    """`plugman configure` puts the non-sensitive value into `pluginConfigs[<id>].options` of the
    user's settings.json and the sensitive one into Claude's secure storage
    (`~/.claude/.credentials.json`, `pluginSecrets[<id>]`), where Claude reads them: its own
    `claude plugin configure --json` says both are set and the server that needs them is in the
    session. The secret is in no file under the project; uninstall takes everything out again."""
    claude = claude_bin()
    home, project, market = tmp_path / "home", tmp_path / "project", tmp_path / "market"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    _options_plugin(market)
    env = {**agent_env(home, Path(sys.executable).parent), "PLUGMAN_HOME": str(tmp_path / "pm")}
    env["PLUGMAN_SECRETS"] = "file"
    secret = "wx-secret-value-42"

    def plugman(*args: str) -> None:
        cmd = [sys.executable, "-m", "plugman", "--project", str(project), *args]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert secret not in proc.stdout + proc.stderr

    plugman("marketplace", "add", str(market))
    plugman("agents", "add", "claude-code", "--scope", scope)
    plugman("install", "wx@opts", "--scope", scope, "--config", "units=metric")
    plugman("configure", "wx", f"api_key={secret}", "units=imperial", "--scope", scope)
    mkt = claude_plugin.marketplace_name(scope, project)
    claude_id = "wx@skills-dir" if scope == "user" else f"wx@{mkt}"

    shown = subprocess.run(
        [str(claude), "plugin", "configure", claude_id, "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    options = json.loads(shown.stdout)
    assert (options["inputs"]["units"], sorted(options["configured"])) == (
        "imperial",
        ["api_key", "units"],
    )
    assert options["unconfigured"] == []
    init, _ = _inventory(claude_session_events(project, env))
    assert [s["name"] for s in init["mcp_servers"] if "wx" in s["name"]] == ["plugin:wx:wx-mcp"]
    storage = home / ".claude" / ".credentials.json"
    assert stat.S_IMODE(storage.stat().st_mode) == 0o600
    assert json.loads(storage.read_text())["pluginSecrets"] == {claude_id: {"api_key": secret}}
    leaked = [p for p in project.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaked == []
    assert secret not in (home / ".claude" / "settings.json").read_text()

    plugman("uninstall", "wx", "--scope", scope)
    assert not storage.exists()
    settings = home / ".claude" / "settings.json"
    assert not settings.exists() or "pluginConfigs" not in json.loads(settings.read_text())
    init, _ = _inventory(claude_session_events(project, env))
    assert not [s for s in init["mcp_servers"] if "wx" in s["name"]]


def _two_kinds(root: Path) -> None:
    """A marketplace `twin`: `kit` (its own plugin.json: a skills-folder link in user scope) and
    `ent` (defined by its entry, `strict: false`: the marketplace `plugman-user`)."""
    files = {
        ".claude-plugin/marketplace.json": json.dumps(
            {
                "name": "twin",
                "owner": {"name": "t"},
                "plugins": [
                    {"name": "kit", "source": "./kit"},
                    {"name": "ent", "source": "./ent", "strict": False, "skills": ["./skills/es"]},
                ],
            }
        ),
        "kit/.claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
        "kit/skills/ks/SKILL.md": "---\nname: ks\ndescription: d\n---\nHi.\n",
        "ent/skills/es/SKILL.md": "---\nname: es\ndescription: d\n---\nHi.\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.slow
def test_one_name_in_user_and_project_scope_claude_gets_the_project_one(tmp_path: Path) -> None:
    """Claude lets a skills-folder plugin give way to a marketplace one of the same name ("Not
    loaded — the name ... is already taken") and loads two marketplace ones side by side; plugman
    deploys so that Claude loads the project's (plugman's order: local, project, user), turns
    the user `plugman-user` one off in the project, and `plugman list` says which one Claude
    gets. A local one of that name comes before the project's (which is then not deployed).
    Uninstalling the nearer ones gives the others back."""
    claude_bin()
    home, project, market = tmp_path / "home", tmp_path / "project", tmp_path / "market"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    _two_kinds(market)
    env = {**agent_env(home, Path(sys.executable).parent), "PLUGMAN_HOME": str(tmp_path / "pm")}

    def plugman(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "plugman", "--project", str(project), *args]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    def loaded() -> list[str]:
        init, _ = _inventory(claude_session_events(project, env))
        return sorted(p["source"] for p in init["plugins"] if p["name"] in ("kit", "ent"))

    plugman("marketplace", "add", str(market))
    for scope in ("user", "project"):
        plugman("agents", "add", "claude-code", "--scope", scope)
    plugman("install", "kit@twin", "ent@twin", "--scope", "user")
    assert loaded() == ["ent@plugman-user", "kit@skills-dir"]
    done = plugman("install", "kit@twin", "ent@twin", "--scope", "project")
    assert (
        "Claude Code loads kit@twin (project) in this project, not kit@twin (user)" in done.stderr
    )
    mkt = claude_plugin.marketplace_name("project", project)
    assert loaded() == [f"ent@{mkt}", f"kit@{mkt}"]
    listed = {
        (r["id"], r["scope"]): r["agents"]
        for r in json.loads(plugman("list", "--json").stdout)["plugins"]
    }
    assert listed[("kit@twin", "project")] == {"claude-code": ["plugin"]}
    assert listed[("kit@twin", "user")] == {
        "claude-code": ["plugin, not loaded here: kit@twin (project) comes first"]
    }
    plugman("agents", "add", "claude-code", "--scope", "local")
    done = plugman("install", "kit@twin", "--scope", "local")
    assert "Claude Code loads kit@twin (local) here, not kit@twin (project)" in done.stderr
    local = claude_plugin.marketplace_name("local", project)
    assert loaded() == [f"ent@{mkt}", f"kit@{local}"]
    plugman("uninstall", "kit@twin", "--scope", "local")
    assert loaded() == [f"ent@{mkt}", f"kit@{mkt}"]
    plugman("uninstall", "kit@twin", "ent@twin", "--scope", "project")
    assert loaded() == ["ent@plugman-user", "kit@skills-dir"]
    listed = {
        (r["id"], r["scope"]): r["agents"]
        for r in json.loads(plugman("list", "--json").stdout)["plugins"]
    }
    assert listed[("kit@twin", "user")] == {"claude-code": ["plugin"]}


def _root_entry_market(root: Path) -> None:
    """A marketplace whose entry `docs` is the repository itself (`"source": "./"`, like
    anthropics/skills' document-skills): five skill folders, the entry lists two; a default
    `commands/` folder and an entry-listed command elsewhere; a default `agents/` folder."""
    skills = [f"./skills/s{c}" for c in "ab"]
    entry = {"name": "docs", "source": "./", "strict": False, "description": "d"}
    entry |= {"skills": skills, "commands": ["./extra/listed.md"]}
    files = {
        ".claude-plugin/marketplace.json": json.dumps(
            {"name": "rootmk", "owner": {"name": "t"}, "plugins": [entry]}
        ),
        "commands/default-cmd.md": "---\ndescription: c\n---\nHi.\n",
        "extra/listed.md": "---\ndescription: c\n---\nHi.\n",
        "agents/helper.md": "---\nname: helper\ndescription: d\n---\nBe brief.\n",
    }
    for c in "abcde":
        files[f"skills/s{c}/SKILL.md"] = f"---\nname: s{c}\ndescription: d\n---\nHi.\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    commit = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]
    subprocess.run(commit, cwd=root, check=True)


@pytest.mark.slow
def test_an_entry_whose_source_is_the_marketplace_root_loads_only_its_listed_skills(
    tmp_path: Path,
) -> None:
    """Claude reads an entry with `"source": "./"` and `skills` as those skills only (not its
    default `skills/` folder); plugman's delivery shows Claude the same: 2 skills of 5, and the
    same commands and agents as Claude's own install."""
    claude = claude_bin()
    market = tmp_path / "market"
    _root_entry_market(market)
    seen = []
    for who in ("claude", "plugman"):
        home = tmp_path / who
        home.mkdir()
        env = {**agent_env(home, Path(sys.executable).parent), "PLUGMAN_HOME": str(home / "pm")}
        if who == "claude":
            for args in (["marketplace", "add", str(market)], ["install", "docs@rootmk"]):
                subprocess.run([str(claude), "plugin", *args], cwd=home, env=env, check=True)
        else:
            for args in (
                ["marketplace", "add", str(market)],
                ["agents", "add", "claude-code", "--scope", "user"],
                ["install", "docs@rootmk", "--scope", "user"],
            ):
                cmd = [sys.executable, "-m", "plugman", *args]
                subprocess.run(cmd, cwd=home, env=env, check=True, capture_output=True)
        init, _ = _inventory(claude_session_events(home, env))
        seen.append(
            {
                k: sorted(i for i in init[k] if i.startswith("docs:"))
                for k in ("skills", "slash_commands", "agents")
            }
        )
    assert seen[0]["skills"] == ["docs:sa", "docs:sb"]
    assert seen[1] == seen[0]


def test_plan_options_copies_and_names_taken_by_a_nearer_scope(tmp_path: Path) -> None:
    home, project, env = tmp_path / "h", tmp_path / "p", {"PLUGMAN_HOME": str(tmp_path / "pm")}
    kit = NativePlugin("kit@m", "kit", tmp_path / "x", None, None, {"units": "metric", "n": 3})
    user = claude_plugin.plan("user", home, project, env, [kit])
    assert user.edits == [
        claude_plugin.Edit(
            home / ".claude" / "settings.json",
            [
                Part(
                    ("pluginConfigs",), {"kit@skills-dir": {"options": {"units": "metric", "n": 3}}}
                )
            ],
        )
    ]
    root = {"name": "docs", "source": "./", "skills": ["./skills/a", "./other/b"], "strict": False}
    docs = NativePlugin("docs@m", "docs", tmp_path / "y", None, root)
    local = claude_plugin.plan("local", home, project, env, [docs], ["docs@plugman-user"])
    folder = claude_plugin.marketplace_dir("local", project, env)
    assert local.links == []
    assert local.copies == (claude_plugin.Copy(folder / "plugins" / "docs", docs.root, ("a",)),)
    [entry] = json.loads(local.files[0].content)["plugins"]
    assert entry["skills"] == ["./other/b"]
    enabled = local.edits[1].parts[0]
    assert enabled.entries == {"docs@plugman-user": False, local.ids["docs@m"]: True}
    whole = {**root, "skills": ["./skills"]}  # the default folder itself: no copy needed
    assert claude_plugin.plan("user", home, project, env, [docs._replace(entry=whole)]).copies == ()
