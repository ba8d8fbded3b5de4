"""What every fuzz test shares: settings, the case counter and the checks on diagnostics.

Reproducible: every test runs with a fixed seed (derived from its name, so the parametrized
tests do not all draw the same cases; `derandomize=True` otherwise), so every run, in CI or
locally, generates the same cases and a failure seen once is seen again, with no example
database to carry between machines. To explore beyond the fixed cases, run with
`PLUGMAN_FUZZ_SCALE=20` (twenty times the examples) and/or `PLUGMAN_FUZZ_RANDOM=1` (a fresh
random seed each run; hypothesis prints how to reproduce a failure), then add what it finds
as a regression test (tests/fuzz/test_regressions.py).
"""

from __future__ import annotations

import os
import shutil
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, seed, settings

from plugman.manifest.diagnostics import ERROR, WARNING, Diagnostic
from plugman.manifest.validate import Validation
from plugman.output.findings import FORMATS, validation

SCALE = max(1, int(os.environ.get("PLUGMAN_FUZZ_SCALE", "1")))
RANDOM = os.environ.get("PLUGMAN_FUZZ_RANDOM", "") not in ("", "0")

# Findings about a folder or a whole file, which have no line to point at.
WHOLE_FILE = frozenset({"not-a-plugin", "unreadable", "file-too-large"})
T = TypeVar("T", bound=Callable[..., None])


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=not RANDOM,
        database=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


class Cases:
    """Counts the cases a test ran and reports them in the terminal summary; `fuzz` makes a
    hypothesis test run `examples` examples (times PLUGMAN_FUZZ_SCALE) with its own seed."""

    def __init__(self, name: str, examples: int):
        self.name = name
        self.examples = examples
        self.count = 0
        self.start = time.perf_counter()

    def fuzz(self, test: T) -> T:
        test = fuzz_settings(self.examples)(test)
        return test if RANDOM else seed(zlib.crc32(self.name.encode()))(test)

    def __call__(self) -> None:
        self.count += 1

    def report(self, record_property: Callable[[str, object], None]) -> None:
        seconds = time.perf_counter() - self.start
        record_property("summary", f"fuzz: {self.name}: {self.count} cases in {seconds:.1f} s")
        assert self.count >= self.examples * SCALE, f"{self.name}: only {self.count} cases ran"


def clear(folder: Path) -> None:
    """Empty `folder` (one folder per test, reused for every case)."""
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def write(root: Path, rel: str, data: bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def scaffold(root: Path, outside: Path) -> None:
    """The component files the generated paths name, plus a link leaving the plugin."""
    write(root, "skills/s/SKILL.md", b"---\nname: s\ndescription: a skill\n---\nbody\n")
    write(root, "commands/c.md", b"---\ndescription: a command\n---\nbody\n")
    write(root, "agents/a.md", b"---\nname: a\ndescription: an agent\n---\nbody\n")
    write(root, "hooks/extra.json", b'{"hooks": {}}\n')
    outside.mkdir(exist_ok=True)
    if not (root / "escape").is_symlink():
        (root / "escape").symlink_to(outside)


def check_diagnostic(d: Diagnostic, root: Path, files: dict[str, bytes | None]) -> None:
    """A finding names its file, and (unless it is about the whole file) a line and column
    inside that file; every field is printable text."""
    assert d.severity in (ERROR, WARNING), d
    assert d.code and d.message, d
    assert d.file, d
    path = Path(d.file)
    assert path == root or root in path.parents, d
    for text in (d.code, d.message, d.path, d.hint or ""):
        assert isinstance(text, str) and text.isprintable(), d  # no terminal escapes, no "\n"
        text.encode("utf-8")  # no lone surrogates: every output format writes UTF-8
    if d.code in WHOLE_FILE:
        return
    assert d.line is not None and d.column is not None, f"no line for {d}"
    if d.file not in files:
        files[d.file] = path.read_bytes() if path.is_file() else None
    data = files[d.file]
    assert data is not None, f"a located finding about a folder: {d}"
    lines = data.split(b"\n")
    assert 1 <= d.line <= len(lines), f"line {d.line} of {len(lines)}: {d}"
    assert 1 <= d.column <= len(lines[d.line - 1]) + 1, f"column out of range: {d}"


def check_validation(result: Validation, root: Path, *, render: bool = False) -> None:
    files: dict[str, bytes | None] = {}
    for d in result.diagnostics:
        check_diagnostic(d, root, files)
        assert d.file in result.files, d
    if render:
        for fmt in FORMATS:
            validation(result, fmt).encode("utf-8")


def summary(result: Validation) -> dict[str, Any]:
    """What a run found, comparable between runs."""
    return {"diagnostics": result.diagnostics, "files": result.files}
