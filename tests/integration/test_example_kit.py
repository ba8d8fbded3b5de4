"""The test kit (plugman.testing) and the public API (plugman.api) as an extension author meets
them: the fixtures isolate, install an extension and run plugman; the example extension
(examples/plugman-example) imports nothing of plugman but those two, passes `mypy --strict` in
its own folder (plugman found as an installed, typed package) and passes its own tests, whose
fixtures come from plugman's `pytest11` entry point."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from plugman.api import AgentSpec, Mcp, Refs, hookimpl
from plugman.testing import Extensions, PlugmanEnv, Runner
from plugman.testing.env import isolated

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "plugman-example"
PUBLIC = ("plugman.api", "plugman.testing")

TOY = AgentSpec(
    name="toy-agent",
    label="Toy Agent",
    user=None,
    project=".toy/mcp.json",
    mcp=Mcp(transports=("stdio",), refs=Refs(spelling="${VAR}")),
)


class Toy:
    @hookimpl
    def plugman_targets(self) -> list[AgentSpec]:
        return [TOY]


def test_the_environment_is_isolated(plugman_env: PlugmanEnv) -> None:
    for name, folder in [
        ("HOME", plugman_env.home),
        ("PLUGMAN_HOME", plugman_env.plugman_home),
        ("XDG_CONFIG_HOME", plugman_env.home / ".config"),
        ("PLUGMAN_CLAUDE_MANAGED_DIR", plugman_env.root / "claude-managed"),
    ]:
        assert os.environ[name] == str(folder)
        assert folder.is_relative_to(plugman_env.root)
    assert os.environ["PLUGMAN_SECRETS"] == "file"
    assert "CODEX_HOME" not in os.environ
    with pytest.raises(urllib.error.URLError):  # the proxy is a closed port
        urllib.request.urlopen("http://example.com/", timeout=10)


def test_the_runner_gives_code_output_and_json(plugman_cli: Runner) -> None:
    assert plugman_cli.json("list")["plugins"] == []
    refused = plugman_cli.fails("no-such-command")
    assert refused.code == 2 and "no-such-command" in refused.stderr
    assert refused.stdout == ""
    done = plugman_cli("list", "--json", in_process=False)
    assert (done.code, done.json["plugins"]) == (0, [])


def test_a_registered_extension_lasts_until_closed(
    plugman_extension: Extensions, plugman_cli: Runner
) -> None:
    def names() -> set[str]:
        return {row["name"] for row in plugman_cli.json("agents", "list")["agents"]}

    assert "toy-agent" not in names()
    plugman_extension.register(Toy())
    assert "toy-agent" in names()
    plugman_extension.close()
    assert "toy-agent" not in names()


def test_entry_points_reach_a_plugman_subprocess(
    plugman_extension: Extensions, plugman_env: PlugmanEnv, plugman_cli: Runner
) -> None:
    package = plugman_env.root / "src"
    package.mkdir()
    (package / "toy_ext.py").write_text(
        "from plugman.api import AgentSpec, Mcp, Refs, hookimpl\n"
        "@hookimpl\n"
        "def plugman_targets() -> list[AgentSpec]:\n"
        "    mcp = Mcp(transports=('stdio',), refs=Refs(spelling='${VAR}'))\n"
        "    return [AgentSpec(name='toy-agent', label='Toy', user=None, project='.toy/mcp.json',"
        " mcp=mcp)]\n"
    )
    plugman_extension.entry_points({"toy": "toy_ext"}, path=package)
    for in_process in (True, False):
        rows = plugman_cli.json("agents", "list", in_process=in_process)["agents"]
        assert "toy-agent" in {row["name"] for row in rows}, in_process


def _plugman_imports(file: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(file.read_text())):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        found += [name for name in names if name.split(".")[0] == "plugman"]
    return found


def test_the_examples_import_only_the_public_api() -> None:
    files = sorted(EXAMPLES.rglob("*.py"))
    assert len(files) >= 4
    private = {
        f"{file.relative_to(EXAMPLES)}: {name}"
        for file in files
        for name in _plugman_imports(file)
        if name not in PUBLIC
    }
    assert private == set()


def test_mypy_strict_on_the_example_as_installed(tmp_path: Path) -> None:
    """In the example's folder, with its own config (strict): plugman is the installed package
    there, so its py.typed is what makes it typed (without it: 10 errors)."""
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path), "plugman_example", "tests"],
        cwd=EXAMPLE, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout


@pytest.mark.slow
def test_the_example_passes_its_own_tests_with_the_kit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly"],
        cwd=EXAMPLE, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout


def test_the_closed_port_proxy_does_not_outlive_the_environment(tmp_path: Path) -> None:
    """urllib keeps one opener per process, built from the proxy variables of its first request:
    one made inside the isolated environment must not send a later test's local request to the
    closed port (it did: test_oauth, test_remote and the http hook handler failed in CI after a
    kit test ran in the same worker)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread
    from urllib.request import urlopen

    class Ok(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with pytest.MonkeyPatch.context() as patch, isolated(tmp_path / "env", patch):
            assert urlopen(url, timeout=5).read() == b"ok"  # built with the closed port
        assert urlopen(url, timeout=5).read() == b"ok"  # the process's own proxies again
    finally:
        server.shutdown()
