from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plugman import __version__
from plugman.cli import invoke, main
from tests.conftest import SAMPLES

BROKEN = '{\n  "name": "demo",\n  "keywords": "not-a-list",\n  "skills": ["./../escape"]\n}\n'


def broken_plugin(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(BROKEN)
    return root


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"plugman {__version__}\n"


def test_python_dash_m_runs_the_same_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "plugman", "--version"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (0, f"plugman {__version__}\n")


def test_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "validate" in out
    assert "paths" in out


def test_validate_samples_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("0 errors, 0 warnings")


def test_validate_reports_every_issue_with_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_plugin(tmp_path)
    assert main(["validate", str(root), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == 1
    assert doc["ok"] is False
    found = {(d["code"], d["path"], d["line"], d["column"]) for d in doc["diagnostics"]}
    assert ("schema-type", "keywords", 3, 3) in found
    assert ("path-escape", "skills[0]", 4, 14) in found
    assert all(d["hint"] for d in doc["diagnostics"] if d["code"] == "path-escape")


def test_text_format_names_file_line_path_and_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_plugin(tmp_path)
    assert main(["validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert "plugin.json:4:14: error [path-escape] skills[0]: skill path './../escape' leaves" in out
    assert "    hint: only the plugin folder is installed" in out
    assert out.rstrip().endswith("2 errors, 0 warnings")


def test_github_and_sarif_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = broken_plugin(tmp_path)
    assert main(["validate", str(root), "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith("::error file=") and ",line=4,col=14,title=plugman path-escape::" in line
        for line in lines
    )
    assert main(["validate", str(root), "--format", "sarif"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"schema-type", "path-escape"}
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_strict_turns_warnings_into_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "p"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "p", "categories": []}')
    assert main(["validate", str(root)]) == 0
    assert main(["validate", str(root), "--strict"]) == 1
    assert "error [unknown-key] categories: unknown key 'categories'" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["validate", "/no/such/path"], "/no/such/path does not exist"),
        (["validate", "pyproject.toml"], "plugman does not know this kind of file"),
        (["validate", "tests"], "is not a plugin or marketplace folder"),
    ],
)
def test_usage_errors_exit_2_without_traceback(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "hint:" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml", "x"], "'xml' is not one of 'text', 'json', 'sarif', 'github'"),
        (["--format"], "option --format requires an argument"),
        (["--bogus", "x"], "no such option: --bogus"),
        ([], "missing argument PATHS..."),
        (["--strict"], "missing argument PATHS..."),
    ],
)
def test_bad_command_lines_are_usage_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "hint: see: plugman validate --help" in err


def test_options_anywhere_and_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--format=json", str(SAMPLES), "--strict"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert main(["validate", "--", "--strict"]) == 2  # a path named --strict
    assert "--strict does not exist" in capsys.readouterr().err


def test_validate_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: plugman validate [OPTIONS] PATHS...")
    assert "Exit codes: 0 no errors, 1 errors found, 2 usage error." in out


def test_a_root_option_first_forwards_validate(tmp_path: Path) -> None:
    """With a root option first validate behaves the same."""
    result = invoke(["--project", str(tmp_path), "validate", str(SAMPLES)])
    assert result.exit_code == 0
    assert "0 errors, 0 warnings" in result.output


def test_validate_never_writes(tmp_path: Path) -> None:
    root = broken_plugin(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    main(["validate", str(root)])
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert before == after


def test_paths_follow_plugman_home(isolated_home: Path) -> None:
    result = invoke(["paths", "--json"])
    assert result.exit_code == 0
    paths = json.loads(result.output)["paths"]
    assert paths["config_dir"] == str(isolated_home / "config")
    assert paths["managed_mcp"] == str(isolated_home / "managed" / "managed-mcp.json")
