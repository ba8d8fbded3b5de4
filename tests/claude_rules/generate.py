"""Build `tests/claude_rules/rules.json`: what the real Claude Code 2.1.332 validates, installs
and loads, one manifest mutation at a time. Run by hand, offline, when the pinned Claude Code
changes (or a mutation is added), then commit the table::

    .venv/bin/python -m tests.claude_rules.generate [MUTATION-ID ...]

(with ids, only those rows are made again). About 7 minutes for the whole table.

It needs the pinned binary in `.tools/claude-code` (`make setup` puts it there) and runs it
with a throwaway HOME (`tests.integration.agents.agent_env`), never the developer's.

For each mutation (the list below: every plugin.json field of Claude's schema with a wrong type
or shape, bad paths, inline vs path components, broken component files, and the same for a
marketplace entry and a marketplace's top level), the plugin is written into a marketplace of
its own (`tests.claude_rules.build`) and Claude Code is asked three things:

- `validate`: `claude plugin validate --json <plugin or marketplace>`: its errors and warnings;
- `install`: `claude plugin marketplace add` then `claude plugin install --json`: installed or
  refused, and Claude's message;
- `load`: the same plugin installed unmutated, then mutated in place (a plugin of a local
  marketplace is read from its folder at each start), and `claude plugin list --json`: the
  plugin's load errors and notes. One print-mode session then confirms it: a plugin whose list
  entry has no error is in the session's `init` event, and one with an error is not.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.claude_rules import TABLE, build
from tests.integration import agents

AGENTS_MD = {"agents/second.md": "---\nname: second\ndescription: Second agent\n---\nHelp.\n"}
EXTRA_HOOKS = {
    "hooks/extra.json": json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    )
}
INLINE_HOOKS = {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
HOLDS_TOOLS = [{"hooks": [{"type": "command", "command": "true", "holdsTools": True}]}]
HOLDS_TOOLS_STRING = [{"hooks": [{"type": "command", "command": "true", "holdsTools": "yes"}]}]
SERVER = {"command": "echo", "args": ["inline"]}
CORPUS_PPTX = "corpus:wshobson__agents/plugins/pptx-deck-creation"


def plugin(id: str, set: dict[str, Any] | None = None, **rest: Any) -> dict[str, Any]:
    return {"id": id, "kind": "plugin", "set": set or {}, **rest}


def entry(id: str, set: dict[str, Any] | None = None, **rest: Any) -> dict[str, Any]:
    return {"id": id, "kind": "entry", "set": set or {}, **rest}


def market(id: str, set: dict[str, Any] | None = None, **rest: Any) -> dict[str, Any]:
    return {"id": id, "kind": "marketplace", "set": set or {}, **rest}


MUTATIONS: list[dict[str, Any]] = [
    plugin("unchanged"),
    # name
    plugin("name-missing", unset=["name"]),
    plugin("name-empty", {"name": ""}),
    plugin("name-space", {"name": "has space"}),
    plugin("name-upper", {"name": "Upper_Case"}),
    plugin("name-at", {"name": "a@b"}),
    plugin("name-colon", {"name": "a:b"}),
    plugin("name-number", {"name": 7}),
    plugin("name-other", {"name": "other-name"}),
    plugin("name-long", {"name": "x" * 80}),
    # metadata fields
    plugin("version-number", {"version": 1}),
    plugin("version-not-semver", {"version": "banana"}),
    plugin("version-empty", {"version": ""}),
    plugin("description-number", {"description": 5}),
    plugin("displayName-number", {"displayName": 5}),
    plugin("author-string", {"author": "Jane Doe <jane@example.com>"}),
    plugin("author-no-name", {"author": {"email": "jane@example.com"}}),
    plugin("author-empty-name", {"author": {"name": ""}}),
    plugin("author-array", {"author": ["Jane"]}),
    plugin("author-extra-key", {"author": {"name": "Jane", "twitter": "@jane"}}),
    plugin("homepage-not-url", {"homepage": "not a url"}),
    plugin("homepage-number", {"homepage": 5}),
    plugin("repository-object", {"repository": {"type": "git", "url": "https://x.test/r"}}),
    plugin("license-number", {"license": 5}),
    plugin("keywords-string", {"keywords": "a, b"}),
    plugin("keywords-numbers", {"keywords": [1, 2]}),
    plugin("defaultEnabled-string", {"defaultEnabled": "yes"}),
    plugin("dependencies-string", {"dependencies": "other"}),
    plugin("dependencies-number-item", {"dependencies": [5]}),
    plugin("dependencies-object-no-name", {"dependencies": [{"version": "^1.0.0"}]}),
    # optionalDependencies (Claude Code 2.1.332): installed with the plugin, left out if missing
    plugin("optional-dependencies-missing", {"optionalDependencies": ["not-there"]}),
    plugin("optional-dependencies-string", {"optionalDependencies": "other"}),
    plugin("optional-dependencies-number-item", {"optionalDependencies": [5]}),
    plugin("optional-dependencies-object", {"optionalDependencies": [{"name": "not-there"}]}),
    plugin(
        "optional-dependencies-also-required",
        {"dependencies": ["not-there"], "optionalDependencies": ["not-there"]},
    ),
    plugin("metadata-string", {"metadata": "x"}),
    plugin("engines-too-new", {"engines": {"claude-code": ">=99.0.0"}}),
    plugin("engines-ok", {"engines": {"claude-code": ">=1.0.0"}}),
    plugin("schema-number", {"$schema": 5}),
    plugin("unknown-key", {"frobnicate": True}),
    plugin("category-key", {"category": "tools"}),
    plugin("icon-key", {"icon": "./icon.png"}),
    # agents
    plugin("agents-folder-list", {"agents": ["./agents"]}),
    plugin("agents-folder-string", {"agents": "./agents"}),
    plugin("agents-folder-slash", {"agents": ["./agents/"]}),
    plugin("agents-file", {"agents": ["./agents/helper.md"]}),
    plugin("agents-file-string", {"agents": "./agents/helper.md"}),
    plugin("agents-two-files", {"agents": ["./agents/helper.md", "./agents/second.md"]}),
    plugin("agents-no-dot", {"agents": ["agents/helper.md"]}),
    plugin("agents-absolute", {"agents": ["{root}/agents/helper.md"]}),
    plugin("agents-escape", {"agents": ["./../outside.md"]}),
    plugin("agents-missing-file", {"agents": ["./agents/nope.md"]}),
    plugin("agents-txt", {"agents": ["./agents/helper.txt"]}, files={"agents/helper.txt": "x"}),
    plugin("agents-number", {"agents": 5}),
    plugin("agents-object", {"agents": {"helper": "./agents/helper.md"}}),
    # commands
    plugin("commands-folder", {"commands": "./commands"}),
    plugin("commands-folder-list", {"commands": ["./commands"]}),
    plugin("commands-file", {"commands": ["./commands/hello.md"]}),
    plugin("commands-no-dot", {"commands": ["commands/hello.md"]}),
    plugin("commands-absolute", {"commands": "{root}/commands"}),
    plugin("commands-escape", {"commands": ["./../outside"]}),
    plugin("commands-missing", {"commands": ["./nope"]}),
    plugin("commands-number", {"commands": 5}),
    plugin("commands-object", {"commands": {"hi": {"source": "./commands/hello.md"}}}),
    plugin("commands-object-content", {"commands": {"hi": {"content": "Say hi."}}}),
    plugin(
        "commands-object-both",
        {"commands": {"hi": {"source": "./commands/hello.md", "content": "Say hi."}}},
    ),
    plugin("commands-object-neither", {"commands": {"hi": {"description": "x"}}}),
    # skills
    plugin("skills-folder", {"skills": "./skills"}),
    plugin("skills-list", {"skills": ["./skills/greet"]}),
    plugin("skills-root", {"skills": "./"}),
    plugin("skills-dot", {"skills": "."}),
    plugin("skills-no-dot", {"skills": ["skills/greet"]}),
    plugin("skills-absolute", {"skills": ["{root}/skills/greet"]}),
    plugin("skills-escape", {"skills": ["./../outside"]}),
    plugin("skills-missing", {"skills": ["./nope"]}),
    plugin("skills-number", {"skills": 5}),
    # hooks
    plugin("hooks-standard-file", {"hooks": "./hooks/hooks.json"}),
    plugin("hooks-extra-file", {"hooks": "./hooks/extra.json"}, files=EXTRA_HOOKS),
    plugin("hooks-extra-list", {"hooks": ["./hooks/extra.json"]}, files=EXTRA_HOOKS),
    plugin("hooks-inline", {"hooks": INLINE_HOOKS}),
    plugin("hooks-inline-wrapped", {"hooks": {"hooks": INLINE_HOOKS}}),
    plugin("hooks-missing-file", {"hooks": "./hooks/nope.json"}),
    plugin("hooks-no-dot", {"hooks": "hooks/extra.json"}, files=EXTRA_HOOKS),
    plugin("hooks-not-json", {"hooks": "./hooks/extra.txt"}, files={"hooks/extra.txt": "{}"}),
    plugin("hooks-number", {"hooks": 5}),
    plugin("hooks-bad-event", {"hooks": {"NoSuchEvent": INLINE_HOOKS["Stop"]}}),
    plugin(
        "hooks-pre-skill-shell-command", {"hooks": {"PreSkillShellCommand": INLINE_HOOKS["Stop"]}}
    ),
    plugin("hooks-holds-tools", {"hooks": {"UserPromptSubmit": HOLDS_TOOLS}}),
    plugin("hooks-holds-tools-string", {"hooks": {"UserPromptSubmit": HOLDS_TOOLS_STRING}}),
    plugin("hooks-file-broken", files={"hooks/hooks.json": "{not json"}),
    plugin("hooks-file-array", files={"hooks/hooks.json": "[]"}),
    plugin("hooks-file-no-hooks-key", files={"hooks/hooks.json": json.dumps(INLINE_HOOKS)}),
    # MCP servers
    plugin("mcp-standard-file", {"mcpServers": "./.mcp.json"}),
    plugin(
        "mcp-extra-file",
        {"mcpServers": "./mcp/extra.json"},
        files={"mcp/extra.json": json.dumps({"mcpServers": {"two": SERVER}})},
    ),
    plugin("mcp-inline", {"mcpServers": {"inline": SERVER}}),
    plugin("mcp-inline-list", {"mcpServers": [{"inline": SERVER}]}),
    plugin("mcp-missing-file", {"mcpServers": "./nope.json"}),
    plugin("mcp-no-dot", {"mcpServers": "mcp.json"}, files={"mcp.json": "{}"}),
    plugin("mcp-number", {"mcpServers": 5}),
    plugin("mcp-inline-bad-server", {"mcpServers": {"bad": {"command": 5}}}),
    plugin("mcp-inline-no-command", {"mcpServers": {"bad": {"args": ["x"]}}}),
    plugin("mcp-file-broken", files={".mcp.json": "{not json"}),
    plugin("mcp-file-bad-server", files={".mcp.json": json.dumps({"mcpServers": {"b": 5}})}),
    # other components
    plugin("outputStyles-number", {"outputStyles": 5}),
    plugin("outputStyles-no-dot", {"outputStyles": "styles"}),
    plugin("lspServers-number", {"lspServers": 5}),
    plugin("lspServers-bad", {"lspServers": {"ts": {"command": "tsls"}}}),
    plugin(
        "userConfig-bad-key",
        {"userConfig": {"1key": {"type": "string", "title": "K", "description": "d"}}},
    ),
    plugin("userConfig-no-title", {"userConfig": {"key": {"type": "string"}}}),
    plugin(
        "userConfig-bad-type",
        {"userConfig": {"key": {"type": "bogus", "title": "K", "description": "d"}}},
    ),
    plugin("channels-number", {"channels": 5}),
    plugin("settings-number", {"settings": 5}),
    plugin("monitors-number", {"monitors": 5}),
    plugin("themes-number", {"themes": 5}),
    plugin("workflows-number", {"workflows": 5}),
    # more shapes: valid forms too, so that plugman is held to accept them
    plugin("version-object", {"version": {"major": 1}}),
    plugin("icon-number", {"icon": 5}),
    plugin("engines-string", {"engines": ">=1.0.0"}),
    plugin("experimental-string", {"experimental": "x"}),
    plugin("experimental-themes-number", {"experimental": {"themes": 5}}),
    plugin(
        "userConfig-ok",
        {
            "userConfig": {
                "api_key": {"type": "string", "title": "Key", "description": "d", "sensitive": True}
            }
        },
    ),
    plugin("channels-ok", {"channels": [{"server": "echo"}]}),
    plugin("channels-no-server", {"channels": [{"displayName": "x"}]}),
    plugin("mcp-mcpb-url", {"mcpServers": "https://example.test/server.mcpb"}),
    plugin("mcp-inline-url", {"mcpServers": {"web": {"type": "http", "url": "https://x.test/m"}}}),
    plugin("commands-object-no-dot", {"commands": {"hi": {"source": "commands/hello.md"}}}),
    plugin(
        "outputStyles-ok", {"outputStyles": "./styles"}, files={"styles/terse.md": "Be terse.\n"}
    ),
    plugin(
        "lspServers-ok",
        {"lspServers": {"ts": {"command": "tsls", "extensionToLanguage": {".ts": "typescript"}}}},
    ),
    plugin("hooks-inline-list", {"hooks": [INLINE_HOOKS]}),
    plugin("skills-file", {"skills": ["./skills/greet/SKILL.md"]}),
    # whole files
    plugin("manifest-not-json", raw="{not json"),
    plugin("manifest-array", raw="[]"),
    plugin("manifest-duplicate-key", raw='{"name": "manifest-duplicate-key", "name": "x"}'),
    plugin("manifest-comment", raw='{\n// c\n"name": "manifest-comment"}'),
    plugin("agent-no-frontmatter", files={"agents/helper.md": "Just text.\n"}),
    plugin("agent-bad-yaml", files={"agents/helper.md": "---\nname: [x\n---\nText.\n"}),
    plugin("command-bad-yaml", files={"commands/hello.md": "---\ndescription: [x\n---\nHi.\n"}),
    plugin("skill-no-frontmatter", files={"skills/greet/SKILL.md": "Say hello.\n"}),
    plugin("skill-bad-yaml", files={"skills/greet/SKILL.md": "---\nname: [x\n---\nHi.\n"}),
    plugin(
        "skill-name-mismatch",
        files={"skills/greet/SKILL.md": "---\nname: other\ndescription: d\n---\nHi.\n"},
    ),
    # corpus plugins as they are, and as their authors meant them
    plugin("corpus-pptx", base=CORPUS_PPTX),
    plugin("corpus-pptx-agents-present", base=CORPUS_PPTX, files=AGENTS_MD),
    # marketplace entries
    entry("entry-unchanged"),
    entry("entry-version-number", {"version": 1}),
    entry("entry-description-number", {"description": 5}),
    entry("entry-author-string", {"author": "Jane"}),
    entry("entry-category-number", {"category": 5}),
    entry("entry-tags-string", {"tags": "a"}),
    entry("entry-keywords-string", {"keywords": "a"}),
    entry("entry-strict-string", {"strict": "no"}),
    entry("entry-unknown-key", {"frobnicate": True}),
    entry("entry-homepage-not-url", {"homepage": "not a url"}),
    entry("entry-source-missing", unset=["source"]),
    entry("entry-source-no-dot", {"source": "{name}"}),
    entry("entry-source-escape", {"source": "./../elsewhere"}),
    entry("entry-source-absolute", {"source": "{root}"}),
    entry("entry-source-bogus-type", {"source": {"source": "bogus"}}),
    entry("entry-agents-folder", {"agents": ["./agents"]}),
    entry("entry-agents-file", {"agents": ["./agents/helper.md"]}),
    entry("entry-agents-folder-not-strict", {"agents": ["./agents"], "strict": False}),
    entry("entry-commands-number", {"commands": 5}),
    entry("entry-hooks-number", {"hooks": 5}),
    entry("entry-optional-dependencies-missing", {"optionalDependencies": ["not-there"]}),
    entry("entry-optional-dependencies-string", {"optionalDependencies": "other"}),
    entry("entry-name-space", {"name": "has space"}),
    entry("entry-source-github-no-repo", {"source": {"source": "github"}}),
    entry("entry-source-dot-slash", {"source": "./{name}/"}),
    entry("entry-skills-no-dot", {"skills": ["skills/greet"]}),
    entry("entry-mcp-inline", {"mcpServers": {"inline": SERVER}}),
    # marketplace top level
    market("market-owner-missing", unset=["owner"]),
    market("market-owner-string", {"owner": "Jane"}),
    market("market-name-space", {"name": "has space"}),
    market("market-unknown-key", {"frobnicate": True}),
    market("market-description-number", {"description": 5}),
    market("market-owner-no-name", {"owner": {"email": "x@example.test"}}),
    market("market-metadata-string", {"metadata": "x"}),
    market("market-plugins-object", {"plugins": {}}),
    market("market-renames-cycle", {"renames": {"a": "b", "b": "a"}}),
]


class Claude:
    def __init__(self, home: Path) -> None:
        self.bin = agents.claude_bin()
        self.home = home
        self.env = agents.agent_env(home, Path(sys.executable).parent)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin), *args],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    def json(self, *args: str) -> Any:
        done = self.run(*args)
        try:
            return json.loads(done.stdout)
        except ValueError:
            return {"rc": done.returncode, "output": (done.stdout + done.stderr).strip()}


def _text(message: str, work: Path) -> str:
    """A message with the run's folders taken out (so that the table does not change)."""
    message = re.sub(r"temp_local_\d+_\w+", "temp_local_N", message)
    return message.replace(str(work), "{work}")


def _validate(claude: Claude, target: Path, work: Path) -> dict[str, Any]:
    report = claude.json("plugin", "validate", "--json", str(target))
    if "manifest" not in report:
        return {"verdict": "error", "errors": [_text(str(report), work)], "warnings": []}
    found: dict[str, list[str]] = {"errors": [], "warnings": []}
    for part in [report["manifest"], *report.get("contents", [])]:
        if not isinstance(part, dict):
            continue
        for key in ("errors", "warnings"):
            for item in part.get(key, []):
                where = item.get("path") or ""
                file = part.get("file") or ""
                if file and not file.endswith(("plugin.json", "marketplace.json")):
                    where = f"{Path(file).name} {where}".strip()
                found[key].append(_text(f"{where}: {item.get('message')}", work))
    verdict = "error" if found["errors"] else "warning" if found["warnings"] else "clean"
    return {"verdict": verdict, **found}


def _target(mutation: dict[str, Any], folder: Path, root: Path) -> Path:
    return folder if mutation["kind"] != "plugin" else root


def generate(work: Path, mutations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    claude = Claude(work / "home")
    claude.home.mkdir()
    rows: list[dict[str, Any]] = []
    for number, mutation in enumerate(mutations):
        name = mutation["id"]
        # install: the mutated plugin, in a marketplace of its own
        folder = work / f"i{number}"
        root = build(folder, mutation, name, f"i{number}")
        validate = _validate(claude, _target(mutation, folder, root), work)
        added = claude.run("plugin", "marketplace", "add", str(folder))
        install: dict[str, Any]
        plugin_name = name
        if added.returncode != 0:
            install = {"verdict": "refused", "stage": "marketplace add"}
            install["message"] = _text((added.stdout + added.stderr).strip(), work)
        else:
            plugin_name = _entry_name(folder) or name
            done = claude.json("plugin", "install", "--json", f"{plugin_name}@i{number}")
            ok = done.get("outcome") == "ok"
            install = {"verdict": "installed" if ok else "refused", "stage": "install"}
            install["message"] = _text(str(done.get("message") or done.get("output")), work)
        # load: a plugin installed unmutated, then mutated in place; an entry or a marketplace
        # is read once, when the marketplace is added: the installed mutated copy, if any
        load_id = f"{plugin_name}@i{number}" if install["verdict"] == "installed" else None
        if mutation["kind"] == "plugin":
            if install["verdict"] == "installed":  # one plugin of that name in the session
                claude.run("plugin", "uninstall", f"{plugin_name}@i{number}")
            folder = work / f"l{number}"
            build(folder, mutation, name, f"l{number}", mutate=False)
            added = claude.run("plugin", "marketplace", "add", str(folder)).returncode == 0
            done = added and claude.json("plugin", "install", "--json", f"{name}@l{number}")
            load_id = f"{name}@l{number}" if done and done.get("outcome") == "ok" else None
            build(folder, mutation, name, f"l{number}")
        load = None if load_id is None else {"id": load_id}
        rows.append({"mutation": mutation, "validate": validate, "install": install, "load": load})
    listed = {p["id"]: p for p in claude.json("plugin", "list", "--json")}
    session = _session_plugins(claude, work)
    for row in rows:
        load = row["load"]
        if load is None:
            row["load"] = {"verdict": "unknown", "why": "no copy of it installed"}
            continue
        entry = listed.get(load["id"])
        errors = [] if entry is None else [_text(e, work) for e in entry.get("errors", [])]
        notes = [] if entry is None else [_text(n, work) for n in entry.get("notes", [])]
        kinds = [] if entry is None else [d.get("type") for d in entry.get("errorDetails", [])]
        if entry is None:
            errors = ["not listed by claude plugin list"]
        in_session = load["id"] in session
        row["load"] = {
            # failed: not in the session; partial: in it, some component left out
            "verdict": "failed" if not in_session else "partial" if errors else "loaded",
            "errors": errors,
            "error_types": kinds,
            "notes": notes,
        }
    return rows


def _entry_name(folder: Path) -> str | None:
    try:
        doc = json.loads((folder / ".claude-plugin" / "marketplace.json").read_text())
        name = doc["plugins"][0]["name"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return name if isinstance(name, str) else None


def _session_plugins(claude: Claude, work: Path) -> set[str]:
    """The `name@marketplace` of every plugin a print-mode session loaded."""
    project = work / "project"
    project.mkdir()
    events = agents.claude_session_events(project, claude.env)
    init = next(e for e in events if e.get("subtype") == "init")
    return {str(item.get("source")) for item in init.get("plugins", []) if isinstance(item, dict)}


def main() -> None:
    """Every mutation, or only those whose ids are given (their rows replaced in the table)."""
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="claude-rules-") as temp:
        rows = generate(Path(temp), [m for m in MUTATIONS if not only or m["id"] in only])
    if only and TABLE.is_file():
        fresh = {row["mutation"]["id"]: row for row in rows}
        old = {row["mutation"]["id"]: row for row in json.loads(TABLE.read_text())["rows"]}
        rows = [fresh.get(m["id"]) or old[m["id"]] for m in MUTATIONS if m["id"] in fresh | old]
    table = {
        "claude_code": agents.CLAUDE_VERSION,
        "generator": "tests/claude_rules/generate.py",
        "rows": rows,
    }
    TABLE.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    print(f"{TABLE}: {len(rows)} rows")


if __name__ == "__main__":
    main()
