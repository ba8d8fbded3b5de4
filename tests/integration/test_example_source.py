"""The example extension's source kind (`dir`, examples/plugman-example/plugman_example/source.py),
installed for real and used through plugman subprocesses: a marketplace entry of its kind
validates and installs, its lock entry holds its own fields, `list` and `info` say it in its
own words, `install dir+PATH` reaches it from the command line, a remote marketplace a project
declares may not name a folder through it, and `sync --frozen` restores it from the lock (and
refuses a folder whose files changed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from plugman.manifest import schema
from tests.integration.helpers import serving


class Plugman:
    """plugman as a subprocess that loads the installed example (its PYTHONPATH)."""

    def __init__(self, env: dict[str, str], project: Path) -> None:
        self.env = {**os.environ, **env}
        self.project = project

    def done(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            env=self.env, cwd=self.project, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    def json(self, *args: str) -> Any:
        done = self.done(*args, "--json")
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)

    def text(self, *args: str) -> str:
        done = self.done(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def fails(self, *args: str) -> str:
        done = self.done(*args)
        assert done.returncode != 0, (args, done.stdout)
        assert "Traceback" not in done.stderr, done.stderr
        return done.stderr + done.stdout


def plugin(folder: Path, name: str) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "1.0.0"})
    )
    (folder / "commands").mkdir()
    (folder / "commands" / f"{name}.md").write_text(f"Run {name}.\n")
    return folder


def catalog(name: str, source: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "owner": {"name": "t"}, "plugins": [{"name": "tool", "source": source}]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding a marketplace, `shelf`, that lists `tool` as a `dir` source."""
    folder = tmp_path / "project"
    market = folder / "marketplace"
    plugin(market / "plugins" / "tool", "tool")
    (market / ".claude-plugin").mkdir()
    body = catalog("shelf", {"source": "dir", "folder": "./plugins/tool"})
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(body))
    return folder


def test_the_example_source_kind_installs_locks_says_and_syncs(
    example_extension: dict[str, str],
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugman = Plugman(example_extension, project)
    assert plugman.json("validate", "marketplace")["diagnostics"] == []
    plugman.json("marketplace", "add", "./marketplace")
    other = plugin(tmp_path / "elsewhere" / "other", "other")
    installed = plugman.json("install", "tool@shelf", f"dir+{other}", "--scope", "project")
    ids = [(c["action"], c["id"]) for c in installed["changes"]]
    assert ids == [("installed", "tool@shelf"), ("installed", "other@direct")]

    lock = tomllib.loads((project / "plugman.lock").read_text())
    sources = {pin["id"]: pin["source"] for pin in lock["plugins"]}
    assert sources["tool@shelf"].keys() == {"type", "folder", "tree_sha256"}  # no `commit`
    assert (sources["tool@shelf"]["type"], sources["tool@shelf"]["folder"]) == (
        "dir",
        "./plugins/tool",
    )
    assert sources["other@direct"]["folder"] == str(other)
    lock_schema = schema.load("plugman-lock.schema.json")
    assert schema.check(lock, lock_schema, "plugman-lock.schema.json", ()) == []

    listed = {row["id"]: row for row in plugman.json("list")["plugins"]}
    assert listed["tool@shelf"]["source"] == sources["tool@shelf"]
    assert listed["tool@shelf"]["pin"] == sources["tool@shelf"]["tree_sha256"]
    said = plugman.text("info", "tool@shelf")  # as its catalog lists it
    assert "source:     snapshot of the folder ./plugins/tool listed by shelf\n" in said
    said = plugman.text("info", "other@direct")  # as it was installed
    pin = sources["other@direct"]["tree_sha256"][:12]
    assert f"source:     snapshot of the folder {other} (pinned to {pin})\n" in said

    # a fresh machine: the lock alone restores both
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "fresh-home"))
    plugman = Plugman(example_extension, project)
    restored = plugman.json("sync", "--frozen")["changes"]
    assert sorted(c["id"] for c in restored) == ["other@direct", "tool@shelf"]
    assert {row["id"]: row["source"] for row in plugman.json("list")["plugins"]} == sources

    # and it refuses a folder whose files changed since they were locked
    (other / "commands" / "other.md").write_text("Run something else.\n")
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "third-home"))
    refused = Plugman(example_extension, project).fails("sync", "--frozen")
    assert f"the folder {other} changed since it was pinned" in refused


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[str]:
    """A marketplace served over http (remote) whose `tool` is a folder of this machine."""
    folder = plugin(tmp_path / "local" / "tool", "tool")
    body = json.dumps(catalog("remote", {"source": "dir", "folder": str(folder)})).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/marketplace.json" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Handler) as base:
        yield f"{base}/marketplace.json"


def test_a_project_may_not_reach_a_local_folder_through_a_remote_marketplace(
    example_extension: dict[str, str], remote: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "plugman.toml").write_text(
        f'[marketplaces]\nremote = {{ source = "{remote}" }}\n\n[plugins]\n"tool@remote" = "*"\n'
    )
    plugman = Plugman(example_extension, project)
    refused = plugman.fails("sync")
    assert "tool@remote comes from the remote marketplace 'remote' but names a file" in refused
    assert plugman.json("list")["plugins"] == []
    assert not (project / "plugman.lock").exists()
