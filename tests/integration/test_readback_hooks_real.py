"""`list --check` reads back Codex's hooks with the real Codex (`hooks/list` through `codex
app-server`): a plugin's hooks at user and project scope are each listed as trusted, and one
the user edits by hand in the project's `.codex/hooks.json` is reported as Codex lists it, not
trusted, with the step; `doctor` says so too. Each state matches Codex's own listing, asked
directly."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import invoke
from tests.integration.agents import agent_env, codex_bin
from tests.integration.test_agent_hooks import rpc_hooks
from tests.integration.test_wedge import wedge

pytestmark = pytest.mark.slow
STATES = {"trusted": "ok", "modified": "untrusted", "untrusted": "untrusted"}


def check(project: Path, *args: str) -> Any:
    done = invoke(["--project", str(project), *args, "--json"])
    assert done.exit_code in (0, 1), done.output
    return json.loads(done.stdout)


def hooks_said(project: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(hook key, scope) → (state, step), as `list --check` says of Codex's hooks."""
    found = check(project, "list", "--check")
    (report,) = [r for r in found["agents"] if r["command"] == "codex app-server"]
    assert report["checked"], report
    return {(i["name"], i["scope"]): (i["state"], i["step"]) for i in report["items"]}


def test_codex_hooks_are_read_back_with_their_trust(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = codex_bin()
    project, _ = wedge(home, tmp_path)  # `first` at user and project scope, folder trusted
    env = agent_env(home, Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([str(codex.parent), env["PATH"]])
    monkeypatch.setenv("PATH", env["PATH"])
    user_hooks, project_hooks = home / ".codex" / "hooks.json", project / ".codex" / "hooks.json"

    def codex_says() -> dict[str, str]:
        return {h["key"]: STATES[h["trustStatus"]] for h in rpc_hooks(codex, project, env)}

    said = hooks_said(project)
    assert sorted(key.rpartition(".json:")[0] + ".json" for key, _ in said) == sorted(
        [str(user_hooks)] * 2 + [str(project_hooks)] * 2
    )
    assert {scope for _, scope in said} == {"user", "project"}
    assert {key: state for (key, _), (state, _) in said.items()} == codex_says()
    assert {state for state, _ in said.values()} == {"ok"}

    # the user changes the project's PreToolUse matcher by hand: Codex no longer trusts it
    data = json.loads(project_hooks.read_text())
    data["hooks"]["PreToolUse"][0]["matcher"] = "Edit"
    project_hooks.write_text(json.dumps(data, indent=2))
    said = hooks_said(project)
    assert {key: state for (key, _), (state, _) in said.items()} == codex_says()
    edited = f"{project_hooks}:pre_tool_use:0:0"
    state, step = said[(edited, "project")]
    assert state == "untrusted"
    assert step == (
        "review it in Codex's /hooks, or have plugman write it again: plugman agents add codex "
        "--scope project"
    )
    assert [s for (k, _), (s, _) in said.items() if k != edited] == ["ok"] * 3
    problems = check(project, "doctor")["problems"]
    (untrusted,) = [p for p in problems if "does not trust" in p["message"]]
    assert edited in untrusted["message"] and untrusted["hint"] == step
