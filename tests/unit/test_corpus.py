"""Every real manifest in tests/corpus/manifests loads without a crash, or gets located
diagnostics."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from plugman.extensions import source_locations
from plugman.manifest.validate import validate
from tests.conftest import CORPUS


def kind_of(path: Path) -> str | None:
    name = path.name
    if name in ("plugin.json", "marketplace.json", "gemini-extension.json", "SKILL.md"):
        return name
    if name.endswith(".json") and "hook" in name.lower():
        return "hooks"
    if name.endswith(".json") and "mcp" in name.lower() and name != "mcp-servers.json":
        return "mcp config"
    return None


def corpus_files() -> dict[Path, str]:
    found = {}
    for folder, _dirs, files in os.walk(CORPUS):
        for file in files:
            path = Path(folder) / file
            kind = kind_of(path)
            if kind and "negative_test" not in folder and "/src/test/" not in folder:
                found[path] = kind
    return found


def test_every_corpus_file_loads_with_located_diagnostics(
    record_property: Callable[[str, object], None],
) -> None:
    files = corpus_files()
    assert len(files) > 800, f"the corpus is missing at {CORPUS}"
    counts: dict[str, Counter[str]] = {}
    for path, kind in sorted(files.items()):
        result = validate(
            [path], source_keys=source_locations
        )  # must not raise: a crash fails the test with its traceback
        for d in result.diagnostics:
            assert d.file and d.message and d.code
            assert d.line is not None or d.path or d.code in ("not-a-plugin",), d
        verdict = "invalid" if result.errors else "warned" if result.warnings else "clean"
        counts.setdefault(kind, Counter())[verdict] += 1
    lines = ["corpus verdicts (clean / warned / invalid):"]
    for kind, count in sorted(counts.items()):
        lines.append(f"  {kind:22} {count['clean']:4} / {count['warned']:4} / {count['invalid']:4}")
    record_property("summary", "\n".join(lines))
    assert sum(sum(c.values()) for c in counts.values()) == len(files)
