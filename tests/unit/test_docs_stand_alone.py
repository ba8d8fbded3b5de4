"""Code and docs stand alone: nothing cites a file outside the repository.

Every tracked text file of the code, docs, bench, build files and tests is scanned for a section
sign not part of an `RFC NNNN §N` citation (public standards are fine; a `§N` of a document
beside the clone is not), for absolute `/work/` paths, for `../shared` and for paths built
from the repository's parent folder (`REPO.parent / ...`, `"shared" / ...`): the real manifests
the tests and bench read are in tests/corpus/. The rules plugman implements are in
docs/claude-format.md; every `docs/claude-format.md#anchor` cited must name one of its headings.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import REPO

ROOTS = (
    "plugman",
    "docs",
    "bench",
    "tests",
    "examples",
    "ARCHITECTURE.md",
    "README.md",
    "Makefile",
    "pyproject.toml",
    ".ci",
)
SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".yml", ".yaml", ""}
SECTION = re.compile(r"(?<!RFC \d{4} )§")
OUTSIDE = re.compile(
    r"/work/|\.\./shared/|[\"']shared[\"']\s*/|\bREPO(_ROOT)?\.parent\b|\.parents\[\d\]\.parent\b"
)
ANCHOR = re.compile(r"docs/claude-format\.md#([a-z0-9-]+)")
# (file, text) pairs that only say the text must be absent somewhere else.
EXEMPT = {
    ("tests/integration/test_user_defects.py", "../shared/DESIGN.md"),
}


def _files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--", *ROOTS], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    own = Path(__file__).relative_to(REPO).as_posix()
    return [
        REPO / name
        for name in listed
        if name != own and Path(name).suffix in SUFFIXES and (REPO / name).is_file()
    ]


def _offences(path: Path) -> list[str]:
    relative = path.relative_to(REPO).as_posix()
    found = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if any(relative == f and text in line for f, text in EXEMPT):
            continue
        if SECTION.search(line) or OUTSIDE.search(line):
            found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_nothing_cites_a_file_outside_the_repository() -> None:
    offences = [o for path in _files() for o in _offences(path)]
    assert not offences, "references outside the repository:\n" + "\n".join(offences)


def test_every_cited_format_anchor_exists() -> None:
    doc = (REPO / "docs" / "claude-format.md").read_text()
    headings = re.findall(r"^#{2,3} (.+)$", doc, flags=re.M)
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
    cited = {
        (path.relative_to(REPO).as_posix(), name)
        for path in _files()
        for name in ANCHOR.findall(path.read_text(errors="replace"))
    }
    missing = sorted(f"{f}: #{name}" for f, name in cited if name not in anchors)
    assert cited and not missing, missing
