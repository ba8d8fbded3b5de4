"""An extension's agent named like a built-in is never used, and never silently: a real
out-of-tree extension, built and installed by pip into a folder of its own (as
tests/integration/extension.py installs the example), registers through its entry point a
`codex` target; `plugman agents list` (text and JSON) and `plugman doctor` report it shadowed,
with the hint to rename it, in a plugman process that finds the entry point itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PYPROJECT = """[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "plugman-shadow"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["plugman"]

[project.entry-points.plugman]
target = "plugman_shadow"

[tool.hatch.build.targets.wheel]
packages = ["plugman_shadow"]
"""
MODULE = """from plugman.agents.targets import AgentSpec, Mcp, Refs, in_home
from plugman.hookspecs import hookimpl


@hookimpl
def plugman_targets() -> list[AgentSpec]:
    mine = Mcp(transports=("stdio",), refs=Refs(spelling="${VAR}"))
    return [
        AgentSpec(name="codex", label="Not Codex", user=in_home(".nc", "m.json"), project=None,
                  mcp=mine),
        AgentSpec(name="shadow-own", label="Own", user=in_home(".so", "m.json"), project=None,
                  mcp=mine),
    ]
"""


@pytest.fixture(scope="module")
def shadow_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("plugman-shadow")
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "plugman_shadow").mkdir()
    (source / "plugman_shadow" / "__init__.py").write_text(MODULE)
    site = tmp_path_factory.mktemp("shadow-site")
    pip = (sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index")
    subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(site), str(source)],
        check=True,
        capture_output=True,
    )
    return site


def plugman(site: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    argv = [sys.executable, "-m", "plugman", "--project", str(project), *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=False)


def test_agents_list_and_doctor_report_an_extension_agent_named_like_a_built_in(
    shadow_site: Path, tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    listed = plugman(shadow_site, project, "agents", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    body = json.loads(listed.stdout)
    assert body["shadowed"] == [
        {
            "name": "codex",
            "extension": "plugman-shadow",
            "by": "built-in",
            "hint": "rename the agent in extension plugman-shadow (its plugman_targets hook)",
        }
    ]
    names = [a["name"] for a in body["agents"]]
    assert names.count("codex") == 1 and "shadow-own" in names  # its other agent is used

    text = plugman(shadow_site, project, "agents", "list").stdout
    assert (
        "agent 'codex' of extension plugman-shadow is shadowed by the built-in agent of that "
        "name: it is not used (rename the agent in extension plugman-shadow" in text
    ), text

    doctor = plugman(shadow_site, project, "doctor", "--json")
    found = [p for p in json.loads(doctor.stdout)["problems"] if "shadowed" in p["message"]]
    assert found == [
        {
            "severity": "warning",
            "where": "extension plugman-shadow",
            "message": "agent 'codex' of extension plugman-shadow is shadowed by the built-in "
            "agent of that name: it is not used",
            "hint": "rename the agent in extension plugman-shadow (its plugman_targets hook)",
        }
    ], doctor.stdout

    # without the extension: nothing shadowed, no finding
    alone = subprocess.run(
        [sys.executable, "-m", "plugman", "--project", str(project), "agents", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(alone.stdout)["shadowed"] == []
