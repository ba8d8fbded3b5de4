"""The command table (plugman.cli.commands) that `plugman --help` and the lazy root group read:
it must say what the commands themselves say, and the fast paths must stay light."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from plugman.cli import USAGE, app
from plugman.cli.argv import Command
from plugman.cli.commands import COMMANDS, TOP_LEVEL, root_help
from plugman.core.errors import ExitCode
from tests.conftest import CORPUS

HEAVY = ("typer", "rich", "mcp", "pydantic", "tomlkit", "yaml", "plugman.output")


def test_every_summary_is_its_commands_own() -> None:
    """Every command of the table is where its words say (a hot command of a group listed in
    it), with the table's summary first in its help."""
    for words, entry in COMMANDS.items():
        path = words.split()
        node: Any = app.top(path[0])
        for at, word in enumerate(path[1:], 1):
            node = dict(app.children(path[:at], node)).get(word)
            assert node is not None, words
        assert app.help_of(path, node).split("\n\n")[1] == wrap(entry.summary), words


def wrap(text: str) -> str:
    from textwrap import fill

    return fill(text, 80, break_on_hyphens=False)


def test_every_command_is_declared_once() -> None:
    """A summary is written only in the table: no command's docstring repeats it; and every
    hot command's function is where its declaration says."""
    for words, entry in COMMANDS.items():
        if isinstance(entry, Command):
            assert callable(entry.runner()), words
            continue
        target = getattr(importlib.import_module(f"plugman.cli.{entry.module}"), entry.attribute)
        written = target.runs.__doc__ if isinstance(target, Command) else target.summary
        assert entry.summary[:40] not in " ".join(str(written or "").split()), words


def test_the_root_help_names_every_command_and_the_exit_codes_agree() -> None:
    text = root_help()
    assert all(f"\n  {name} " in text for name in TOP_LEVEL)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert USAGE == ExitCode.USAGE


def test_version_and_help_import_nothing_heavy() -> None:
    for args in (["--version"], ["--help"], []):
        code = (
            f"import json, sys; from plugman.cli import main; code = main({args!r}); "
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        loaded = json.loads(done.stderr.strip().splitlines()[-1])
        heavy = [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
        assert heavy == [], (args, heavy)
        assert done.returncode == (USAGE if not args else 0)


def _loaded_by(args: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    code = (
        f"import json, sys; from plugman.cli import main; code = main({args!r}); "
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    return done.returncode, json.loads(done.stderr.strip().splitlines()[-1])


def test_the_hot_commands_import_nothing_heavy(tmp_path: Path) -> None:
    """install, uninstall, list, paths, config resolve and validate never import typer (nor
    click, rich, mcp or the SBOM libraries), and uninstall loads nothing of planning, fetching
    or validating."""
    env = {**os.environ, "PLUGMAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    env["PLUGMAN_MANAGED_DIR"] = str(tmp_path / "managed")
    light = ("typer", "click", "rich", "mcp", "pydantic", "cyclonedx", "packageurl", "spdx_tools")
    for args in (
        ["list", "--json"],
        ["paths"],
        ["--project", str(tmp_path), "config", "resolve", "--json"],
        ["install", "--help"],
        ["uninstall", "nothing"],
        ["validate", str(tmp_path / "nothing")],
    ):
        code, loaded = _loaded_by(args, env)
        assert code in (0, 1, 2), args
        heavy = [m for m in loaded if m.split(".")[0] in light]
        assert heavy == [], (args, heavy)
        if args[0] == "uninstall":
            assert "plugman.plugins.lifecycle.planner" not in loaded
            assert "plugman.manifest.plugin" not in loaded


def test_output_names_each_renderer_where_it_lives() -> None:
    """plugman.output imports a renderer's module when its name is first asked for: the table
    it reads, derived from its import lines, holds every name type checkers see (no import line
    written so that the table misses it), and each name is found (also after its module was
    imported directly, which sets the module as an attribute of the package: hence no renderer
    is named like a module)."""
    import ast

    from plugman import output

    source = Path(output.__file__).read_text()
    checked = {
        alias.asname
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname
    }
    assert checked == set(output.HOME)
    assert not set(output.HOME) & {p.stem for p in Path(output.__file__).parent.glob("*.py")}
    for name, module in output.HOME.items():
        assert getattr(output, name) is getattr(
            __import__(f"plugman.output.{module}", fromlist=[name]), name
        )


def test_a_fast_command_ends_the_process_with_its_output_flushed(tmp_path: Path) -> None:
    """Run as the program, a fast command ends with os._exit (no interpreter teardown): its
    whole output still arrives (here well beyond a pipe's buffer) with its exit code."""
    folders = sorted(str(p) for p in CORPUS.iterdir() if (p / ".claude-plugin").is_dir())
    assert len(folders) >= 5, CORPUS  # marketplaces with every plugin they list
    done = subprocess.run(
        [sys.executable, "-m", "plugman", "validate", "--json", *folders],
        capture_output=True,
        text=True,
        check=False,
    )
    assert len(done.stdout) > 100_000  # pipes hold 64 KiB
    found = json.loads(done.stdout)
    assert done.returncode == (0 if found["ok"] else 1), done.stderr[-500:]
    missing = subprocess.run(
        [sys.executable, "-m", "plugman", "validate", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")


def test_a_reader_that_leaves_early_ends_a_command_quietly(tmp_path: Path) -> None:
    """`plugman paths | head -0`: no `error:` about a broken pipe (an install's changes are
    committed by the time it prints), exit 1 as every other command gives. The pipe's
    reading end is closed before plugman starts, so every write fails."""
    env = {**os.environ, "PLUGMAN_HOME": str(tmp_path / "home")}
    for args in (["paths"], ["mcp", "list"]):
        read, write = os.pipe()
        os.close(read)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "plugman", *args],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                check=False,
            )
        finally:
            os.close(write)
        assert (done.returncode, done.stderr) == (1, ""), args
