"""The published JSON Schemas in `plugman/manifest/schemas/`: well-formed, in plugman's keyword
subset, self-consistent, and accepting the real files of the corpus.

plugman's validator reports an unknown key (`additionalProperties: false`) as a warning, so the
corpus checks validate with `jsonschema` against a copy of the schemas with those closures
removed: whatever `jsonschema` still reports is an error for plugman too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.conftest import CORPUS

Schema = dict[str, Any]

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "plugman" / "manifest" / "schemas"
BASE_URI = "https://plugman.dev/schemas/"
FILES = sorted(path.name for path in SCHEMA_DIR.glob("*.schema.json"))
EXPECTED_FILES = {
    "plugin.schema.json",
    "marketplace.schema.json",
    "hooks.schema.json",
    "mcp-config.schema.json",
    "skill.schema.json",
    "gemini-extension.schema.json",
    "plugman-toml.schema.json",
    "plugman-lock.schema.json",
    "resolved-config.schema.json",
}

ANNOTATIONS = {
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "$comment",
    "format",
    "x-plugman-severity",
    "x-plugman-discriminator",
}
ASSERTIONS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "enum",
    "const",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "oneOf",
    "anyOf",
}
ALLOWED = ANNOTATIONS | ASSERTIONS
PROPERTY_NAMES_ALLOWED = {"pattern", "minLength", "maxLength"}
JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
REF_FORM = re.compile(r"^([a-z][a-z0-9-]*\.schema\.json)?#/\$defs/[A-Za-z][A-Za-z0-9_]*$")
# Regex syntax Python accepts but ECMA-262 does not (or reads differently).
NON_ECMA = re.compile(r"\(\?P|\(\?[aiLmsux#>]|\(\?<[=!]|\\[AZzQE]|[*+?}]\+")

HOOK_EVENTS = {
    "SessionStart",
    "Setup",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreSkillShellCommand",  # Claude Code 2.1.332
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "MessageDisplay",
    "SubagentStart",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "Stop",
    "StopFailure",
    "TeammateIdle",
    "InstructionsLoaded",
    "ConfigChange",
    "CwdChanged",
    "DirectoryAdded",
    "FileChanged",
    "WorktreeCreate",
    "WorktreeRemove",
    "PreCompact",
    "PostCompact",
    "Elicitation",
    "ElicitationResult",
    "SessionEnd",
}


@cache
def load(name: str) -> Schema:
    loaded: Schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return loaded


def open_up(node: Any) -> Any:
    """`node` with every `additionalProperties: false` removed (unknown keys become valid)."""
    if isinstance(node, dict):
        return {
            key: open_up(value)
            for key, value in node.items()
            if not (key == "additionalProperties" and value is False)
        }
    if isinstance(node, list):
        return [open_up(value) for value in node]
    return node


@cache
def registry(tolerant: bool) -> Registry:
    docs = [open_up(load(name)) if tolerant else load(name) for name in FILES]
    return Registry().with_resources((doc["$id"], Resource.from_contents(doc)) for doc in docs)


def validator(ref: str, tolerant: bool = True) -> Draft202012Validator:
    """A validator for `file.schema.json` or `file.schema.json#/$defs/x`."""
    return Draft202012Validator({"$ref": BASE_URI + ref}, registry=registry(tolerant))


def problems(value: Any, ref: str, tolerant: bool = True) -> list[str]:
    found = validator(ref, tolerant).iter_errors(value)
    return sorted(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found)


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def subschemas(node: Schema, pointer: str = "") -> Iterator[tuple[str, Schema]]:
    """Every schema object inside `node` (itself included) with its JSON pointer."""
    yield pointer, node
    for keyword in ("properties", "patternProperties", "$defs"):
        for key, child in node.get(keyword, {}).items():
            yield from subschemas(child, f"{pointer}/{keyword}/{escape(key)}")
    for keyword in ("additionalProperties", "items", "propertyNames"):
        child = node.get(keyword)
        if isinstance(child, dict):
            yield from subschemas(child, f"{pointer}/{keyword}")
    for keyword in ("oneOf", "anyOf"):
        for index, child in enumerate(node.get(keyword, [])):
            yield from subschemas(child, f"{pointer}/{keyword}/{index}")


def all_subschemas() -> Iterator[tuple[str, str, Schema]]:
    for name in FILES:
        for pointer, node in subschemas(load(name)):
            yield name, pointer, node


def corpus_files(pattern: str, under: str = "") -> list[Path]:
    root = CORPUS / under if under else CORPUS
    return sorted(root.glob(pattern)) if root.is_dir() else []


def corpus_ids(paths: list[Path]) -> list[str]:
    return [str(path.relative_to(CORPUS)) for path in paths]


# --- the files themselves -------------------------------------------------------------------


def test_every_schema_is_present() -> None:
    assert set(FILES) == EXPECTED_FILES


@pytest.mark.parametrize("name", FILES)
def test_is_a_valid_draft_2020_12_schema(name: str) -> None:
    schema = load(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", FILES)
def test_id_title_and_description(name: str) -> None:
    schema = load(name)
    assert schema["$id"] == BASE_URI + name
    assert schema["title"]
    assert schema["description"]


@pytest.mark.parametrize("name", FILES)
def test_uses_only_the_engine_keyword_subset(name: str) -> None:
    for pointer, node in subschemas(load(name)):
        where = f"{name}#{pointer}"
        assert set(node) <= ALLOWED, f"{where}: {sorted(set(node) - ALLOWED)}"
        if pointer:
            assert "$id" not in node and "$schema" not in node, where
        if "propertyNames" in node:
            assert set(node["propertyNames"]) <= PROPERTY_NAMES_ALLOWED, where
        if "additionalProperties" in node:
            assert node["additionalProperties"] is False or isinstance(
                node["additionalProperties"], dict
            ), where
        if "x-plugman-severity" in node:
            assert node["x-plugman-severity"] == "warning", where
        kinds = node.get("type", [])
        assert set([kinds] if isinstance(kinds, str) else kinds) <= JSON_TYPES, where


@pytest.mark.parametrize("name", FILES)
def test_patterns_are_portable_regexes(name: str) -> None:
    for pointer, node in subschemas(load(name)):
        sources = list(node.get("patternProperties", {}))
        sources += [n["pattern"] for n in (node, node.get("propertyNames", {})) if "pattern" in n]
        for source in sources:
            re.compile(source)
            assert not NON_ECMA.search(source), f"{name}#{pointer}: {source}"


def test_every_ref_has_an_allowed_form_and_resolves() -> None:
    count = 0
    for name, pointer, node in all_subschemas():
        if "$ref" not in node:
            continue
        count += 1
        target = node["$ref"]
        assert REF_FORM.match(target), f"{name}#{pointer}: {target}"
        resolver = registry(False).resolver(base_uri=BASE_URI + name)
        assert isinstance(resolver.lookup(target).contents, dict), f"{name}#{pointer}"
    assert count > 50


def test_every_def_is_used() -> None:
    used = {
        (node["$ref"].partition("#")[0] or name, node["$ref"].rpartition("/")[2])
        for name, _, node in all_subschemas()
        if "$ref" in node
    }
    defined = {(name, key) for name in FILES for key in load(name).get("$defs", {})}
    entry_points = {("mcp-config.schema.json", "agentPluginsConfig")}
    assert defined - used - entry_points == set()


def test_every_example_is_valid() -> None:
    checked = 0
    for name, pointer, node in all_subschemas():
        for example in node.get("examples", []):
            checked += 1
            assert problems(example, f"{name}#{pointer}", tolerant=False) == [], (name, pointer)
    assert checked > 10


def test_every_property_is_described() -> None:
    for name, pointer, node in all_subschemas():
        for key, child in node.get("properties", {}).items():
            target = child
            if "$ref" in child and "description" not in child:
                resolver = registry(False).resolver(base_uri=BASE_URI + name)
                target = resolver.lookup(child["$ref"]).contents
            assert "description" in target, f"{name}#{pointer}/properties/{key}"


# --- consistency between files -------------------------------------------------------------


def test_hook_event_map_lists_the_32_documented_events() -> None:
    event_map = load("hooks.schema.json")["$defs"]["eventMap"]
    assert set(event_map["properties"]) == HOOK_EVENTS
    assert event_map["additionalProperties"] is False


def test_marketplace_entry_accepts_every_plugin_field() -> None:
    entry = load("marketplace.schema.json")["$defs"]["pluginEntry"]["properties"]
    plugin = load("plugin.schema.json")["properties"]
    for key, value in plugin.items():
        assert entry[key] == {"$ref": "plugin.schema.json" + value["$ref"]}, key
    assert {"source", "category", "tags", "strict", "relevance"} <= set(entry)


def test_resolved_server_has_every_server_field_and_an_origin() -> None:
    resolved = load("resolved-config.schema.json")["$defs"]["server"]["properties"]
    server = load("mcp-config.schema.json")["$defs"]["server"]["properties"]
    for key, value in server.items():
        assert resolved[key] == {"$ref": "mcp-config.schema.json" + value["$ref"]}, key
    assert set(resolved) - set(server) == {"origin"}


# --- what the schemas accept and reject ------------------------------------------------------


def test_unknown_keys_are_only_closure_violations() -> None:
    value = {"name": "x", "categories": ["a"], "author": {"name": "A", "twitter": "@a"}}
    assert problems(value, "plugin.schema.json") == []
    strict = validator("plugin.schema.json", tolerant=False).iter_errors(value)
    assert {error.validator for error in strict} == {"additionalProperties"}


@pytest.mark.parametrize(
    ("ref", "value"),
    [
        ("plugin.schema.json", {"name": "x", "author": "Jane <jane@example.com>"}),
        ("plugin.schema.json", {"name": "x", "dependencies": {"openbb": "latest"}}),
        ("plugin.schema.json", {"name": "x", "keywords": "a, b"}),
        ("plugin.schema.json", {"name": "x", "repository": {"type": "git", "url": "u"}}),
        (
            "plugin.schema.json",
            {
                "name": "x",
                "userConfig": {"bad-key": {"type": "string", "title": "t", "description": "d"}},
            },
        ),
        ("plugin.schema.json", {"name": "x", "hooks": {"PreToolUse": [{"matcher": "Bash"}]}}),
        ("plugin.schema.json", {"version": "1.0.0"}),
        ("hooks.schema.json", []),
        ("hooks.schema.json", {"hooks": {"Stop": [{"hooks": [{"type": "bash", "command": "x"}]}]}}),
        ("hooks.schema.json", {"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}}),
        ("hooks.schema.json", {"hooks": {"Stop": [{"matcher": {"tool_name": "Write"}}]}}),
        ("marketplace.schema.json", {"name": "m", "owner": {"name": "o"}, "plugins": [{}]}),
        (
            "marketplace.schema.json#/$defs/source",
            {"source": "github", "repo": "o/r", "sha": "abc123"},
        ),
        ("marketplace.schema.json#/$defs/source", {"source": "path", "url": "./x"}),
        ("marketplace.schema.json#/$defs/source", {"source": "github", "repo": 1}),
        ("mcp-config.schema.json#/$defs/server", {"type": "grpc", "url": "https://x"}),
        ("mcp-config.schema.json#/$defs/server", {"command": "npx", "args": "-y server"}),
        ("mcp-config.schema.json#/$defs/agentPluginsServer", {"type": "http", "url": "u"}),
        ("skill.schema.json", {"allowed-tools": 3, "user-invocable": "maybe"}),
        ("gemini-extension.schema.json", {"version": "1.0.0"}),
        ("plugman-lock.schema.json", {"format": 1, "plugins": [{"id": "a@b"}]}),
    ],
)
def test_rejects_known_defects(ref: str, value: Any) -> None:
    assert problems(value, ref) != []


@pytest.mark.parametrize(
    ("ref", "value"),
    [
        (
            "plugin.schema.json",
            {
                "name": "full",
                "author": {"name": "A"},
                "commands": {"hello": {"source": "./commands/hello.md"}},
                "hooks": ["./extra-hooks.json"],
                "mcpServers": "https://example.com/server.mcpb",
                "lspServers": {"ts": {"command": "tsls", "extensionToLanguage": {".ts": "ts"}}},
                "experimental": {"monitors": [{"name": "m", "command": "c", "description": "d"}]},
                "userConfig": {
                    "api_key": {"type": "string", "title": "t", "description": "d"},
                },
                "channels": [{"server": "chat"}],
                "dependencies": ["a", "b@m@^1.0", {"name": "c", "version": "^2"}],
            },
        ),
        (
            "marketplace.schema.json#/$defs/source",
            {"source": "url", "url": "https://x/y.git", "path": "sub", "sha": "a" * 40},
        ),
        ("marketplace.schema.json#/$defs/source", {"source": "archive", "url": "https://x/p.zip"}),
        (
            "marketplace.schema.json#/$defs/source",
            {"source": "command", "command": "x", "mode": "link"},
        ),
        # a type an extension adds: plugman's code checks that one is installed
        ("marketplace.schema.json#/$defs/source", {"source": "pip", "package": "x"}),
        ("mcp-config.schema.json#/$defs/serverMap", {"docs": {"type": "ws", "url": "wss://x"}}),
        ("skill.schema.json", {"name": "s", "user-invocable": "Yes", "allowed-tools": ["Read"]}),
        (
            "plugman-toml.schema.json",
            {
                "format": 1,
                "marketplaces": {"acme": {"source": "acme/plugins", "ref": "main"}},
                "plugins": {"fmt@acme": ">=1.2", "lint@acme": {"enabled": False}},
                "mcp_servers": {"gh": {"command": "npx", "args": ["-y", "gh-mcp"]}},
            },
        ),
        (
            "plugman-lock.schema.json",
            {
                "format": 1,
                "plugins": [
                    {
                        "id": "fmt@acme",
                        "name": "fmt",
                        "marketplace": "acme",
                        "version": "1.2.0",
                        "source": {"type": "github", "repo": "acme/fmt", "commit": "0" * 40},
                        "content_hash": "sha256:" + "f" * 64,
                    }
                ],
            },
        ),
        (
            "resolved-config.schema.json",
            {
                "format": 1,
                "mcpServers": {
                    "gh": {"command": "npx", "origin": {"scope": "user", "file": "/u/p.toml"}},
                },
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [{"type": "command", "command": "x"}],
                            "origin": {"scope": "plugin", "file": "/p/h.json", "plugin": "p@m"},
                        }
                    ]
                },
                "skills": {
                    "p:s": {"path": "/p/s/SKILL.md", "origin": {"scope": "plugin", "file": "/p"}}
                },
                "plugins": [{"id": "p@m", "version": "1.0.0", "enabled": True, "scope": "user"}],
                "diagnostics": [{"severity": "info", "code": "shadowed", "message": "m"}],
            },
        ),
    ],
)
def test_accepts_documented_forms(ref: str, value: Any) -> None:
    assert problems(value, ref, tolerant=False) == []


# --- the corpus ------------------------------------------------------------------------------

OFFICIAL = "anthropics__claude-plugins-official"
PLUGIN_FILES = corpus_files("plugins/*/.claude-plugin/plugin.json", OFFICIAL)
HOOK_FILES = corpus_files("**/hooks/hooks.json", OFFICIAL)
MCP_FILES = corpus_files("*/.mcp.json", "anthropics__knowledge-work-plugins")
SKILL_FILES = corpus_files("**/SKILL.md", OFFICIAL)


def test_official_marketplace_is_valid() -> None:
    path = CORPUS / OFFICIAL / ".claude-plugin" / "marketplace.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    assert len(value["plugins"]) > 100
    assert problems(value, "marketplace.schema.json") == []


@pytest.mark.parametrize("path", PLUGIN_FILES, ids=corpus_ids(PLUGIN_FILES))
def test_official_plugin_manifests_are_valid(path: Path) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert problems(value, "plugin.schema.json") == []


@pytest.mark.parametrize("path", HOOK_FILES, ids=corpus_ids(HOOK_FILES))
def test_official_hooks_files_are_valid(path: Path) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert problems(value, "hooks.schema.json", tolerant=False) == []


@pytest.mark.parametrize("path", MCP_FILES, ids=corpus_ids(MCP_FILES))
def test_wrapped_mcp_configs_are_valid(path: Path) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value.get("mcpServers"), dict)
    assert problems(value, "mcp-config.schema.json") == []


def test_github_gemini_extension_is_valid() -> None:
    path = CORPUS / "github__github-mcp-server" / "gemini-extension.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    assert problems(value, "gemini-extension.schema.json", tolerant=False) == []


@pytest.mark.parametrize("path", SKILL_FILES, ids=corpus_ids(SKILL_FILES))
def test_official_skill_front_matter_is_valid(path: Path) -> None:
    match = re.match(r"---\r?\n(.*?)\r?\n---", path.read_text(encoding="utf-8"), re.DOTALL)
    assert match is not None, f"{path} has no front matter"
    assert problems(yaml.safe_load(match.group(1)), "skill.schema.json") == []


def test_corpus_lists_are_not_empty() -> None:
    assert len(PLUGIN_FILES) >= 10
    assert len(HOOK_FILES) >= 5
    assert len(MCP_FILES) >= 10
    assert len(SKILL_FILES) >= 10
