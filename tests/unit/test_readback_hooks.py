"""Codex's hooks read back (`asks.CODEX_HOOKS`, `readback`): the answers are recorded from the
real Codex 0.171.0 (`codex app-server`, `hooks/list`) in tests/golden/codex_hooks_list, with
the temporary folders written as /home/u (HOME) and /srv/p (the project):

- `trust-states.json`: plugman's plugin `first` exported at user and project scope (a Stop and
  a PreToolUse hook each), then the user put a group of their own first under Stop in
  `~/.codex/hooks.json` (plugman's moved from place 0 to 1: Codex's trust entry for place 0
  now meets another hook, "modified", and plugman's at place 1 has none, "untrusted"), and
  changed the matcher of the project's PreToolUse hook ("modified");
- `unreadable.json`: the same with the project's `hooks.json` holding `"Stop": 3`.

The conversation itself (`readback._converse`) runs against small JSON-RPC servers written
here: one that answers after a notification, one that never answers, one that exits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plugman.agents import readback
from plugman.agents.gating import WAITS, Gating
from plugman.agents.readback import Report
from plugman.agents.targets.asks import CODEX_HOOKS, FAILED, MISSING, OK, UNTRUSTED
from plugman.doctor.agents import said
from tests.conftest import REPO

RECORDED = REPO / "tests" / "golden" / "codex_hooks_list"
USER, PROJECT = "/home/u/.codex/hooks.json", "/srv/p/.codex/hooks.json"


def answer(name: str) -> str:
    return json.dumps(json.loads((RECORDED / name).read_text()))  # one line, as Codex writes


def test_each_hook_codex_lists_is_read_with_its_trust() -> None:
    seen = CODEX_HOOKS.read(answer("trust-states.json"))
    assert {key: state for key, (state, _) in seen.items()} == {
        f"{USER}:pre_tool_use:0:0": OK,
        f"{USER}:stop:0:0": UNTRUSTED,  # the user's own group, where plugman's trust points
        f"{USER}:stop:1:0": UNTRUSTED,  # plugman's, moved down: no trust entry for this place
        f"{PROJECT}:pre_tool_use:0:0": UNTRUSTED,  # its matcher changed by hand
        f"{PROJECT}:stop:0:0": OK,
    }
    assert seen[f"{USER}:stop:0:0"][1].startswith("modified: ")
    assert seen[f"{USER}:stop:1:0"][1].startswith("untrusted: ")
    assert seen[f"{PROJECT}:stop:0:0"][1] == "trusted"


def test_what_plugman_trusted_is_compared_key_by_key_with_the_step_for_an_untrusted_one() -> None:
    expected: readback.Wanted = {
        (f"{USER}:pre_tool_use:0:0", "user"): "first@hooked",
        (f"{USER}:stop:0:0", "user"): "first@hooked",
        (f"{PROJECT}:pre_tool_use:0:0", "project"): "first@hooked",
        (f"{PROJECT}:stop:0:0", "project"): "first@hooked",
        (f"{PROJECT}:stop:1:0", "project"): None,  # a hook of the project's own plugman.toml
    }
    items = readback._items(CODEX_HOOKS, CODEX_HOOKS.read(answer("trust-states.json")), expected)
    states = {(i.name.rpartition("/")[2], i.scope): (i.state, i.step) for i in items}
    review = "review it in Codex's /hooks, or have plugman write it again: plugman agents add codex"
    assert states == {
        ("hooks.json:pre_tool_use:0:0", "user"): (OK, ""),
        ("hooks.json:stop:0:0", "user"): (UNTRUSTED, f"{review} --scope user"),
        ("hooks.json:pre_tool_use:0:0", "project"): (UNTRUSTED, f"{review} --scope project"),
        ("hooks.json:stop:0:0", "project"): (OK, ""),
        ("hooks.json:stop:1:0", "project"): (MISSING, ""),
    }
    report = Report("codex", "codex app-server", True, "", items)
    problems = said([report])
    assert len(problems) == 3  # the two untrusted, the missing one
    untrusted = [p for p in problems if "does not trust" in p.message]
    assert [p.hint for p in untrusted] == [f"{review} --scope user", f"{review} --scope project"]


def test_a_hooks_file_codex_cannot_read_fails_each_of_its_hooks_in_codexs_words() -> None:
    expected: readback.Wanted = {
        (f"{PROJECT}:stop:0:0", "project"): "first@hooked",
        (f"{USER}:pre_tool_use:0:0", "user"): "first@hooked",
    }
    items = readback._items(CODEX_HOOKS, CODEX_HOOKS.read(answer("unreadable.json")), expected)
    by_scope = {i.scope: i for i in items}
    assert by_scope["user"].state == OK
    assert by_scope["project"].state == FAILED
    assert by_scope["project"].detail.startswith(f"failed to parse hooks config {PROJECT}: ")


@pytest.mark.parametrize(
    ("said_", "why"),
    [
        ('{"id": 1, "error": {"code": -32601, "message": "no such method"}}', "no such method"),
        ('{"id": 1, "result": {}}', "no list of hooks"),
        ("[1]", "no JSON-RPC answer"),
        ("not json", "Expecting value"),
    ],
)
def test_an_answer_that_is_not_a_hook_list_cannot_be_read(said_: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        CODEX_HOOKS.read(said_)


def test_a_project_hook_codex_does_not_list_waits_for_its_folder_trust(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    home.mkdir()
    project.mkdir()
    expected: readback.Wanted = {(f"{project}/.codex/hooks.json:stop:0:0", "project"): "a@m"}
    items = readback._items(CODEX_HOOKS, {}, expected)
    report = Report("codex", "codex app-server", True, "", items)
    gating = Gating(project, home, {"HOME": str(home)})
    (item,) = readback._gated(report, "hooks", gating).items
    assert item.state == WAITS
    assert "Codex's folder trust" in item.detail and item.step
    trust = f'[projects."{project}"]\ntrust_level = "trusted"\n'
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(trust)
    gating = Gating(project, home, {"HOME": str(home)})
    (item,) = readback._gated(report, "hooks", gating).items
    assert item.state == MISSING  # trusted, and still not listed


SERVER = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("id") == 0:
        print(json.dumps({"id": 0, "result": {}}), flush=True)
    if message.get("id") == 1:
        print(json.dumps({"method": "configWarning", "params": {"id": 1}}), flush=True)
        print(json.dumps({"id": 1, "result": {"data": []}}), flush=True)
"""


def converse(body: str, tmp_path: Path, timeout: float = 10) -> str:
    server = tmp_path / "server.py"
    server.write_text(body)
    argv = [sys.executable, str(server)]
    return readback._converse(argv, CODEX_HOOKS.requests, tmp_path, {}, timeout)


def test_the_conversation_returns_the_answer_to_the_last_request(tmp_path: Path) -> None:
    assert json.loads(converse(SERVER, tmp_path)) == {"id": 1, "result": {"data": []}}


def test_a_server_that_never_answers_is_given_up_on_in_time(tmp_path: Path) -> None:
    import time

    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        converse("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n", tmp_path, 1)
    assert time.monotonic() - start < 10  # killed: it would not end on its stdin closing


def test_a_server_that_ends_without_answering_says_how_it_ended(tmp_path: Path) -> None:
    with pytest.raises(EOFError, match="exit code 3"):
        converse("import sys\nsys.exit(3)\n", tmp_path)


def test_a_failure_to_ask_is_not_checked_and_never_raises(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    codex = bin_dir / "codex"
    codex.write_text("#!/bin/sh\necho 'bad config' >&2\nexit 2\n")
    codex.chmod(0o755)
    env = {"PATH": str(bin_dir)}
    report = readback._one("codex", CODEX_HOOKS, tmp_path, env, 5, {})
    assert not report.checked
    assert report.reason == "codex ended without answering (exit code 2)"
    report = readback._one("codex", CODEX_HOOKS, tmp_path, {"PATH": str(tmp_path)}, 5, {})
    assert report.reason == "codex is not on PATH"
