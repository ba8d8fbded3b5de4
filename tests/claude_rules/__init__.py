"""Claude Code's load rules as test data: manifests mutated field by field, and what the real
Claude Code 2.1.332 did with each (`rules.json`, written by `generate.py`).

A row's `mutation` is data, so the test that holds plugman to the table (`test_claude_rules.py`)
rebuilds exactly the files Claude Code was shown:

- `kind`: `plugin` (the change is made to `.claude-plugin/plugin.json`), `entry` (to the
  plugin's marketplace entry) or `marketplace` (to the marketplace's top level);
- `base`: `builtin` (the small plugin `write_base` writes: a skill, a command, an agent, a hooks
  file and an MCP server) or `corpus:<folder under tests/corpus/manifests>`;
- `set`: top-level keys and their new values; `unset`: keys removed; `raw`: the manifest's whole
  text instead; `files`: files written (text) or removed (null) under the plugin root.

`{root}` in any string stands for the plugin root's absolute path, `{name}` for its folder name.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS

TABLE = Path(__file__).with_name("rules.json")

BASE_FILES = {
    "skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets the user warmly\n---\n"
    "Say hello to the user.\n",
    "commands/hello.md": "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS.\n",
    "agents/helper.md": "---\nname: helper\ndescription: Helps with small chores\n---\n"
    "You help with small chores.\n",
    "hooks/hooks.json": json.dumps(
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    ),
    ".mcp.json": json.dumps({"mcpServers": {"echo": {"command": "echo", "args": ["hi"]}}}),
    "README.md": "A small plugin the load-rules table mutates.\n",
}


def load_table() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(TABLE.read_text())["rows"]
    return rows


def _fill(value: Any, root: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", str(root)).replace("{name}", root.name)
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


def write_base(root: Path, base: str, name: str) -> dict[str, Any]:
    """The unmutated plugin at `root`; its plugin.json (name `name`)."""
    if base.startswith("corpus:"):
        shutil.copytree(
            CORPUS / base.removeprefix("corpus:"), root, symlinks=True, dirs_exist_ok=True
        )
        file = root / ".claude-plugin" / "plugin.json"
        manifest: dict[str, Any] = json.loads(file.read_text()) if file.is_file() else {}
    else:
        for rel, text in BASE_FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        manifest = {
            "name": name,
            "version": "1.0.0",
            "description": "A small plugin the load-rules table mutates",
            "author": {"name": "plugman"},
        }
    manifest["name"] = name
    return manifest


def _changed(doc: dict[str, Any], mutation: dict[str, Any], root: Path) -> dict[str, Any]:
    doc = dict(doc)
    for key in mutation.get("unset", []):
        doc.pop(key, None)
    doc.update(_fill(mutation.get("set", {}), root))
    return doc


def build(
    folder: Path, mutation: dict[str, Any], name: str, market_name: str, mutate: bool = True
) -> Path:
    """A marketplace at `folder` named `market_name` holding one plugin `name` in
    `folder/name`, with `mutation` applied (or not: `mutate=False`); the plugin root."""
    if folder.exists():
        shutil.rmtree(folder)
    root = folder / name
    root.mkdir(parents=True)
    manifest = write_base(root, mutation.get("base", "builtin"), name)
    entry: dict[str, Any] = {"name": name, "source": f"./{name}"}
    market: dict[str, Any] = {"name": market_name, "owner": {"name": "plugman"}, "plugins": [entry]}
    raw = None
    if mutate:
        kind = mutation["kind"]
        if kind == "plugin":
            manifest = _changed(manifest, mutation, root)
            raw = mutation.get("raw")
        elif kind == "entry":
            market["plugins"] = [_changed(entry, mutation, root)]
        else:
            market = _changed(market, mutation, root)
        for rel, text in mutation.get("files", {}).items():
            path = root / rel
            if text is None:
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(_fill(text, root))
    write_manifest(root, manifest, raw)
    (folder / ".claude-plugin").mkdir(exist_ok=True)
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(market, indent=2))
    return root


def write_manifest(root: Path, manifest: dict[str, Any], raw: str | None = None) -> None:
    (root / ".claude-plugin").mkdir(exist_ok=True)
    text = raw if raw is not None else json.dumps(manifest, indent=2)
    (root / ".claude-plugin" / "plugin.json").write_text(text)
