"""The loaders build the right model, not only the right diagnostics."""

from __future__ import annotations

import json
from pathlib import Path

from plugman.extensions import source_locations
from plugman.manifest import gemini, marketplace, mcp, plugin
from plugman.manifest.model import Marketplace, Plugin, PluginSource
from plugman.manifest.reader import Report
from tests.conftest import SAMPLES


def load_samples() -> tuple[Marketplace, dict[str, Plugin], Report]:
    report = Report()
    market, sink = marketplace.load(
        SAMPLES / ".claude-plugin" / "marketplace.json", report, source_keys=source_locations
    )
    assert market is not None
    plugins = {}
    for index, entry in enumerate(market.plugins):
        root = marketplace.local_root(market, entry)
        assert root is not None
        declaration = plugin.Declaration(entry.entry, sink.child(("plugins", index)))
        loaded = plugin.load(root, report, declaration, entry.strict)
        assert loaded is not None
        plugins[loaded.name] = loaded
    return market, plugins, report


def test_sample_marketplace_model() -> None:
    market, plugins, report = load_samples()
    assert report.diagnostics == []
    assert market.name == "plugman-samples"
    assert [e.source.kind for e in market.plugins if e.source] == ["path"] * 6
    assert set(plugins) == {
        "notes-server",
        "remote-docs",
        "guardrails",
        "code-review",
        "writing-skills",
        "toolbox",
    }


def test_components_of_each_sample() -> None:
    _market, plugins, _report = load_samples()
    [notes] = plugins["notes-server"].mcp_servers
    assert (notes.name, notes.transport, notes.entry["command"]) == ("notes", "stdio", "python3")
    remote = {s.name: s.transport for s in plugins["remote-docs"].mcp_servers}
    assert remote == {"docs": "http", "legacy-events": "sse"}
    events = {h.event for h in plugins["guardrails"].hooks}
    assert {"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop"} <= events
    pre = next(h for h in plugins["guardrails"].hooks if h.event == "PreToolUse")
    assert (pre.matcher, pre.type) == ("Bash", "command")
    review = plugins["code-review"]
    assert sorted(p.name for p in review.commands) == ["explain.md", "review.md"]
    assert sorted(p.name for p in review.agents) == ["reviewer.md", "security-auditor.md"]
    skills = sorted(s.name for s in plugins["writing-skills"].skills)
    assert skills == ["changelog-writer", "commit-message"]


def test_strict_false_entry_is_the_whole_definition() -> None:
    _market, plugins, _report = load_samples()
    toolbox = plugins["toolbox"]
    assert toolbox.format == "marketplace-entry"
    assert toolbox.manifest == {}
    assert [s.name for s in toolbox.skills] == ["shell-helper"]
    assert [p.name for p in toolbox.commands] == ["ls-large.md"]
    assert toolbox.version == "0.1.0"


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_an_entry_at_the_marketplace_root_gets_only_the_skills_it_lists(tmp_path: Path) -> None:
    """anthropics/skills' `document-skills` (`source: "./"`, `strict: false`, 4 of 17 skills
    listed): Claude Code 2.1.328 loads the listed ones only; any other source adds them to the
    default `skills/` folder."""
    for name in ("xlsx", "docx", "pdf", "pptx", "canvas"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: d\n---\nbody\n"
        )
    listed = ["./skills/xlsx", "./skills/pdf"]

    def skills(fields: dict[str, object]) -> list[str]:
        report = Report()
        entry = plugin.Declaration(fields, report.sink(tmp_path / "entry"))
        loaded = plugin.load(tmp_path, report, entry, strict=False)
        assert loaded is not None
        return sorted(s.name for s in loaded.skills)

    entry = {"name": "document-skills", "strict": False, "skills": listed}
    assert skills({**entry, "source": "./"}) == ["pdf", "xlsx"]
    assert skills({**entry, "source": "./", "skills": [*listed, "./skills"]}) == [
        "canvas",
        "docx",
        "pdf",
        "pptx",
        "xlsx",
    ]
    assert skills({**entry, "source": "./plugins/document-skills"}) == [
        "canvas",
        "docx",
        "pdf",
        "pptx",
        "xlsx",
    ]


def test_agent_plugins_format(tmp_path: Path) -> None:
    write(tmp_path / "plugin.json", {"name": "portable", "version": "1.0.0"})
    write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "gh": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"]},
                "docs": {"type": "streamable-http", "url": "https://docs.example.com/mcp"},
            }
        },
    )
    report = Report()
    loaded = plugin.load(tmp_path, report)
    assert loaded is not None
    assert loaded.format == "agent-plugins"
    assert {s.name: s.transport for s in loaded.mcp_servers} == {"gh": "stdio", "docs": "http"}
    assert report.diagnostics == []


def test_flat_plugin_mcp_file_and_folders_only_plugin(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", {"github": {"type": "http", "url": "https://x/mcp"}})
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "hello.md").write_text("Say hello.\n")
    report = Report()
    loaded = plugin.load(tmp_path, report)
    assert loaded is not None
    assert loaded.format == "folders"
    assert loaded.name == tmp_path.name
    assert [s.name for s in loaded.mcp_servers] == ["github"]
    assert [p.name for p in loaded.commands] == ["hello.md"]
    assert report.diagnostics == []


def test_gemini_extension(tmp_path: Path) -> None:
    write(
        tmp_path / "gemini-extension.json",
        {
            "name": "ext",
            "version": "1.0.0",
            "mcpServers": {
                "a": {"command": "node", "args": ["a.js"]},
                "b": {"httpUrl": "https://b/mcp"},
                "c": {"url": "https://c/sse"},
            },
        },
    )
    report = Report()
    loaded = gemini.load(tmp_path / "gemini-extension.json", report)
    assert loaded is not None
    assert {s.name: s.transport for s in loaded.mcp_servers} == {
        "a": "stdio",
        "b": "http",
        "c": "sse",
    }
    assert report.diagnostics == []


def test_all_marketplace_source_types(tmp_path: Path) -> None:
    sha = "a" * 40
    write(
        tmp_path / ".claude-plugin" / "marketplace.json",
        {
            "name": "kinds",
            "owner": {"name": "me"},
            "plugins": [
                {"name": "p1", "source": "./p1"},
                {
                    "name": "p2",
                    "source": {"source": "github", "repo": "o/r", "ref": "v1", "sha": sha},
                },
                {"name": "p3", "source": {"source": "url", "url": "https://h/r.git"}},
                {"name": "p4", "source": {"source": "git-subdir", "url": "o/r", "path": "sub"}},
                {"name": "p5", "source": {"source": "npm", "package": "@s/p", "version": "^1"}},
                {
                    "name": "p6",
                    "source": {"source": "archive", "url": "https://h/p.zip", "sha256": "b" * 64},
                },
                {"name": "p7", "source": {"source": "command", "command": "echo /tmp"}},
            ],
        },
    )
    market, _sink = marketplace.load(
        tmp_path / ".claude-plugin" / "marketplace.json", Report(), source_keys=source_locations
    )
    assert market is not None
    sources = {e.name: e.source for e in market.plugins}
    assert sources["p1"] == PluginSource("path", "./p1")
    assert sources["p2"] == PluginSource("github", "o/r", "v1", sha)
    assert sources["p4"] == PluginSource("git-subdir", "o/r", subdir="sub")
    assert sources["p5"] == PluginSource("npm", "@s/p", version="^1")
    assert sources["p6"] == PluginSource("archive", "https://h/p.zip", sha="b" * 64)
    assert sources["p7"] is not None
    assert sources["p7"].kind == "command"


def test_vscode_mcp_json_may_hold_comments(tmp_path: Path) -> None:
    file = tmp_path / ".vscode" / "mcp.json"
    file.parent.mkdir()
    file.write_text(
        '{\n  // my servers\n  "servers": {"a": {"type": "stdio", "command": "x"},},\n}'
    )
    report = Report()
    assert [s.name for s in mcp.load_file(file, report)] == ["a"]
    assert report.diagnostics == []
    other = tmp_path / ".mcp.json"
    other.write_text(file.read_text())
    mcp.load_file(other, report)
    codes = {d.code for d in report.diagnostics}
    assert {"json-comment", "json-trailing-comma", "vscode-format"} <= codes
