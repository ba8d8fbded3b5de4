"""Helpers for the shared-agent-file tests: a marketplace whose plugin brings a hook, a server
and a skill; an agent writing its own keys into its files the way the agents do (a member
appended to a JSON object, a top-level TOML key above the tables, Codex's
`[projects."<path>"] trust_level` table appended with a blank line, a YAML key at the end),
applied alike to the real home and to a shadow that plugman never touches, so a test can say
"the files hold exactly what they would had plugman never written"."""

from __future__ import annotations

import json
from pathlib import Path

from plugman import extensions
from plugman.agents.targets import Place, target
from plugman.manifest.edit import jsonc


def marketplace(market: Path) -> None:
    """`hooked`: plugin `first`, with a Stop and a PreToolUse hook, a stdio server, a skill."""
    root = market / "first"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / "skills" / "greet").mkdir(parents=True)
    manifest = {"name": "first", "version": "1.0.0"}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    stop = {"hooks": [{"type": "command", "command": "echo ${CLAUDE_PLUGIN_ROOT}/stop"}]}
    tool = {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}
    hooks = {"hooks": {"Stop": [stop], "PreToolUse": [tool]}}
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    servers = {"mcpServers": {"notes": {"command": "notes-server", "args": ["--stdio"]}}}
    (root / ".mcp.json").write_text(json.dumps(servers))
    skill = "---\nname: greet\ndescription: Says hello.\n---\nSay hello.\n"
    (root / "skills" / "greet" / "SKILL.md").write_text(skill)
    catalog = {
        "name": "hooked",
        "owner": {"name": "t"},
        "plugins": [{"name": "first", "source": "./first"}],
    }
    (market / ".claude-plugin").mkdir()
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))


def agent_files(agent: str, home: Path, project: Path) -> dict[Path, str]:
    """Every config file of `agent` at the user and project scopes, with its format."""
    spec = extensions.target(agent)
    found: dict[Path, str] = {}
    for scope in ("user", "project"):
        if scope in spec.scopes_of():
            place = Place(scope, home, project, {"HOME": str(home)})
            for loc in target(spec).files(place).values():
                found[loc.path] = loc.fmt or spec.fmt
    return found


def agent_write(path: Path, fmt: str, n: int, project: Path) -> None:
    """The agent writes its own key number `n` into `path`, leaving every other byte."""
    text = path.read_text() if path.exists() else None
    if fmt == "json":
        text = (
            f'{{\n  "agentKey{n}": {n}\n}}\n'
            if text is None
            else jsonc.set_member(text, (), f"agentKey{n}", n, str(path))
        )
    elif fmt == "toml":
        own = f'agent_key_{n} = "v{n}"\n'
        if n % 2:  # Codex trusting a project: a table appended, as toml_edit writes it
            table = f'[projects."{project}/{n}"]\ntrust_level = "trusted"\n'
            text = table if not (text or "").strip() else (text or "") + "\n" + table
        else:  # a top-level setting (`model = ...`), above every table
            text = own + (text or "")
    else:
        text = (text or "") + f"agent_key_{n}: {n}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def shadow_of(path: Path, roots: dict[Path, Path]) -> Path:
    """Where `path` (under one of `roots`) is in its shadow tree."""
    for real, shadow in roots.items():
        if path.is_relative_to(real):
            return shadow / path.relative_to(real)
    raise AssertionError(f"{path} is under none of {list(roots)}")


def tree(root: Path, skip: frozenset[str] = frozenset()) -> dict[str, tuple[str, bytes]]:
    """Every file and folder under `root`, by relative path (names in `skip` left out)."""
    found: dict[str, tuple[str, bytes]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in skip:
            continue
        if path.is_symlink():
            found[str(rel)] = ("link", str(path.readlink()).encode())
        elif path.is_dir():
            found[str(rel)] = ("dir", b"")
        else:
            found[str(rel)] = ("file", path.read_bytes())
    return found
