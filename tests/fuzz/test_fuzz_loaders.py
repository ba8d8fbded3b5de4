"""Fuzzing every loader through `plugman validate`: mutated corpus files and schema-generated
documents. No case may raise; every finding names its file and, unless it is about the whole
file, a line and column inside it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from plugman.core.errors import UsageError
from plugman.extensions import source_locations
from plugman.manifest.validate import validate
from tests.fuzz import harness, mutators
from tests.fuzz.mutators import Mutation
from tests.fuzz.seeds import plugin_folders, seeds


class Kind(NamedTuple):
    seeds: str  # the corpus kind its seeds come from
    file: str  # where the file is written, under the plugin root
    schema: str | None  # what generated documents follow


KINDS = {
    "claude-plugin.json": Kind("plugin", ".claude-plugin/plugin.json", "plugin.schema.json"),
    "cursor-plugin.json": Kind("plugin", ".cursor-plugin/plugin.json", None),
    "agent-plugins-plugin.json": Kind("plugin", "plugin.json", "plugin.schema.json"),
    "marketplace.json": Kind(
        "marketplace", ".claude-plugin/marketplace.json", "marketplace.schema.json"
    ),
    "hooks.json": Kind("hooks", "hooks/hooks.json", "hooks.schema.json"),
    ".mcp.json": Kind("mcp", ".mcp.json", "mcp-config.schema.json"),
    "flat-mcp.json": Kind("mcp", "flat/.mcp.json", "mcp-config.schema.json#/$defs/serverMap"),
    "vscode-mcp.json": Kind("mcp", ".vscode/mcp.json", None),
    "agent-plugins-mcp.json": Kind(
        "mcp", "ap/mcp.json", "mcp-config.schema.json#/$defs/agentPluginsConfig"
    ),
    "gemini-extension.json": Kind(
        "gemini", "gemini-extension.json", "gemini-extension.schema.json"
    ),
    "SKILL.md": Kind("skill", "skills/s/SKILL.md", "skill.schema.json"),
    "agents.md": Kind("markdown", "agents/a.md", "skill.schema.json"),
    "commands.md": Kind("markdown", "commands/c.md", "skill.schema.json"),
}
MUTATED = 450  # examples per kind
GENERATED = 200  # examples per kind with a schema
FOLDERS = 300


def prepare(tmp_path: Path, kind: Kind) -> tuple[Path, Path]:
    root = tmp_path / "plugin"
    root.mkdir()
    harness.scaffold(root, tmp_path / "outside")
    harness.write(root, "ap/plugin.json", b'{"name": "ap"}\n')  # makes ap/mcp.json Agent Plugins'
    return root, root / kind.file


def run_validate(root: Path, file: Path, data: bytes, render: bool = False) -> None:
    note(f"{file.name}: {data[:4000]!r}")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    harness.check_validation(validate([file], source_keys=source_locations), root, render=render)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_mutated_files(
    name: str, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    kind = KINDS[name]
    root, file = prepare(tmp_path, kind)
    corpus = seeds(kind.seeds)
    cases = harness.Cases(f"mutated {name}", MUTATED)
    markdown = file.suffix == ".md"

    @cases.fuzz
    @given(case=mutators.mutations(len(corpus)), render=st.integers(0, 9))
    def run(case: Mutation, render: int) -> None:
        cases()
        data = mutators.mutate(corpus[case.seed], case, markdown=markdown)
        run_validate(root, file, data, render=render == 0)

    run()
    cases.report(record_property)


@pytest.mark.parametrize("name", sorted(n for n, k in KINDS.items() if k.schema))
def test_generated_files(
    name: str, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    kind = KINDS[name]
    assert kind.schema is not None
    root, file = prepare(tmp_path, kind)
    cases = harness.Cases(f"generated {name}", GENERATED)
    documents = (
        mutators.generated_front_matter()
        if file.suffix == ".md"
        else mutators.generated_json(kind.schema)
    )

    @cases.fuzz
    @given(data=documents)
    def run(data: bytes) -> None:
        cases()
        run_validate(root, file, data, render=True)

    run()
    cases.report(record_property)


class FolderCase(NamedTuple):
    folder: int
    edits: tuple[tuple[int, Mutation], ...]  # (file index, mutation)
    bare: bool  # without its plugin.json: a plugin of bare folders


def folder_cases(folders: int) -> st.SearchStrategy[FolderCase]:
    edit = st.tuples(st.integers(0, 15), mutators.mutations(1))
    return st.builds(
        FolderCase,
        st.integers(0, folders - 1),
        st.lists(edit, max_size=3).map(tuple),
        st.integers(0, 4).map(lambda n: n == 0),
    )


def test_mutated_plugin_folders(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """Whole real plugins (manifest, hooks, MCP config, skills, commands, agents), a few of their
    files mutated, sometimes without their manifest; validated twice, with the same result."""
    folders = plugin_folders()
    root = tmp_path / "plugin"
    root.mkdir()
    cases = harness.Cases("mutated plugin folders", FOLDERS)

    @cases.fuzz
    @given(case=folder_cases(len(folders)))
    def run(case: FolderCase) -> None:
        cases()
        harness.clear(root)
        files = dict(folders[case.folder])
        if case.bare:
            files = {rel: data for rel, data in files.items() if "-plugin/" not in rel}
        names = sorted(files) or ["SKILL.md"]
        for index, mutation in case.edits:
            rel = names[index % len(names)]
            data = files.get(rel, b"---\nname: x\n---\n")
            files[rel] = mutators.mutate(data, mutation, markdown=rel.endswith(".md"))
        for rel, data in files.items():
            harness.write(root, rel, data)
        (root / "escape").symlink_to(tmp_path)
        try:
            first = validate([root], source_keys=source_locations)
        except UsageError as exc:  # documented: a folder with neither manifest nor components
            assert "is not a plugin or marketplace folder" in exc.message
            return
        harness.check_validation(first, root)
        assert harness.summary(validate([root], source_keys=source_locations)) == harness.summary(
            first
        )

    run()
    cases.report(record_property)


def test_marketplace_folders(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """A marketplace (mutated or generated) beside two real plugins it may list."""
    folders = plugin_folders()
    root = tmp_path / "market"
    root.mkdir()
    market = root / ".claude-plugin" / "marketplace.json"
    corpus = seeds("marketplace")
    cases = harness.Cases("marketplace folders", FOLDERS)
    documents = st.one_of(
        mutators.generated_json("marketplace.schema.json"),
        st.builds(lambda case: mutators.mutate(corpus[case.seed], case), mutators.mutations(8)),
    )

    @cases.fuzz
    @given(data=documents, plugins=st.lists(st.integers(0, len(folders) - 1), max_size=2))
    def run(data: bytes, plugins: list[int]) -> None:
        cases()
        harness.clear(root)
        for number, folder in enumerate(plugins):
            for rel, content in folders[folder]:
                harness.write(root, f"plugins/p{number}/{rel}", content)
        harness.write(root, ".claude-plugin/marketplace.json", data)
        (root / "escape").symlink_to(tmp_path)
        harness.check_validation(validate([root], source_keys=source_locations), root)
        assert market.is_file()

    run()
    cases.report(record_property)
