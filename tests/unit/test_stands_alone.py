"""The repository stands alone: no test reads beside the clone or writes outside its temp folders.

`tests.open_audit` refuses and records, in the test process, every write outside the temporary
folder and the repository's caches and every read beside the clone (a `../shared` checkout, the
machine's `/etc`). Here a child pytest runs a set of tests that read the real-manifest corpus and
write agent files through plugman under that audit, and the audit itself is shown to catch both
kinds of escape. `tests/unit/test_docs_stand_alone.py` holds the source to the same rule.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

# The corpus readers, and a sample of the tests that write agent files (every agent's, at each
# scope) and clones through plugman. Every run loads the audit (pyproject's addopts), so the full
# lane audits each of these files whole where it runs them; this child run is the proof that
# holds when only tests/unit runs, kept to the few seconds the quick lane can spend on it.
AUDITED = (
    "tests/unit/test_frontmatter.py",
    "tests/unit/test_schema_engine.py::test_verdicts_agree_on_the_corpus",
    "tests/integration/test_export.py::test_write_then_remove_leaves_the_users_file_byte_identical",
    "tests/attacks/test_origin_clone.py::test_a_tracked_local_toml_is_pending_until_approved",
    "tests/attacks/test_origin_clone.py::"
    "test_plugman_never_writes_the_users_files_through_a_plugman_folder_link",
)


def _audited_pytest(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    env = (env or dict(os.environ)) | {"PLUGMAN_NO_PIN_CHECK": "1"}  # the parent run checks pins
    return subprocess.run(
        [*command, "-p", "tests.open_audit", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


def test_tests_stay_inside_the_clone_and_their_temp_folders() -> None:
    # the audit is what runs here, not the properties' search: the quick profile's few examples
    done = _audited_pytest("-x", "--hypothesis-profile=quick", *AUDITED)
    said = done.stdout + done.stderr
    assert "OUTSIDE:" not in said, said[-4000:]
    assert done.returncode == 0, said[-4000:]


def test_the_audit_refuses_a_write_outside_and_a_read_beside_the_clone(tmp_path: Path) -> None:
    parent = tmp_path / "machine"
    clone, beside, temp = parent / "clone", parent / "shared", parent / "tmp"
    for folder in (clone, beside, temp):
        folder.mkdir(parents=True)
    (beside / "corpus.json").write_text("{}")
    stray = clone / "stray.txt"
    test = temp / "test_escapes.py"
    test.write_text(
        "import pytest\n"
        f"def test_write():\n    open({str(stray)!r}, 'w').write('x')\n"
        f"def test_read():\n    open({str(beside / 'corpus.json')!r}).read()\n"
        f"def test_inside():\n    open({str(temp / 'ok.txt')!r}, 'w').write('x')\n"
    )
    env = os.environ | {"OPEN_AUDIT_ROOT": str(clone), "TMPDIR": str(temp)}
    done = _audited_pytest(str(test), "-p", "no:xdist", "--rootdir", str(temp), env=env)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert f"OUTSIDE: write {stray}" in said and f"OUTSIDE: read {beside / 'corpus.json'}" in said
    assert "2 failed, 1 passed" in said, said
    assert not stray.exists()  # refused before anything was written


def test_a_pinned_agent_older_than_the_newest_published_one_is_named() -> None:
    from tests import agent_pins

    pins = {"@a/one": "2.1.328", "@a/two": "0.171.0", "@a/three": "1.0.0"}
    latest = {"@a/one": "2.1.332", "@a/two": "0.171.0", "@a/three": None}
    assert agent_pins.older(pins, latest) == ["@a/one is pinned at 2.1.328; 2.1.332 is published"]
    assert agent_pins.older({"@a/x": "0.9.0"}, {"@a/x": "0.10.0"}) != []  # numbers, not text
    futures = agent_pins.start(lambda package: {"@openai/codex": "999.0.0"}.get(package))
    behind, unknown = agent_pins.finish(futures)
    assert behind == [
        f"@openai/codex is pinned at {agent_pins.PINS['@openai/codex']}; 999.0.0 is published"
    ]
    assert set(unknown) == set(agent_pins.PINS) - {"@openai/codex"}
