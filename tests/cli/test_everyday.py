"""Everyday polish (issue 34, point 8): one help style for every command, `did you mean` at
every level, run through the real entry point (`plugman.cli.main`, as the `plugman` script)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from plugman.cli import main
from plugman.cli.app import every_command as every

WIDTH = 80


def every_command() -> list[list[str]]:
    """The words of every command and group, from the root down."""
    return every()


def helped(words: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*words, "--help"]) == 0, words
    return capsys.readouterr().out


def test_every_command_s_help_is_one_plain_style(capsys: pytest.CaptureFixture[str]) -> None:
    """Hot or not, a command or a group: `Usage: plugman WORDS`, its text, then plain
    `Options:` tables; no box, no `<str>`-like type names, no line past 80 columns, and every
    paragraph wrapped whole (no line ends where the next word would still have fit: a
    docstring's own line breaks are gone)."""
    commands = every_command()
    assert len(commands) > 70 and ["config", "resolve"] in commands and ["mcp", "add"] in commands
    for words in [[], *commands]:
        text = helped(words, capsys)
        assert text.startswith(f"Usage: plugman {' '.join(words)}".rstrip()), words
        assert "\nOptions:\n" in text and "-h, --help" in text, words
        for bad in ("<str>", "<int", "<float", "╭", "│"):
            assert bad not in text, (words, bad)
        assert not re.search(r"[{<][a-z_ ]+[}>]", text.split("\n")[0]), words  # {name}
        lines = text.rstrip("\n").split("\n")
        assert max(len(line) for line in lines) <= WIDTH, words
        section = lines.index("Options:") if words else len(lines)
        prose = lines[1:section]
        for line, after in itertools.pairwise(prose):
            if line and after and not after.startswith(" "):
                assert len(line) + 1 + len(after.split()[0]) > WIDTH, (words, line, after)


def test_a_docstring_s_line_breaks_do_not_break_its_sentences(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = helped(["mcp", "serve"], capsys)
    assert "PreToolUse and PostToolUse" in " ".join(text.split())
    assert "PreToolUse\nand" not in text and "\nPreToolUse\n" not in text
    assert "--port INTEGER" in text and "[0 to 65535; default:" in " ".join(text.split())


def test_a_group_without_its_command_shows_the_same_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["marketplace"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("Usage: plugman marketplace [OPTIONS] COMMAND [ARGS]...")
    assert "scope's plugman.toml)" in out and "..." not in out.split("Commands:")[1]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["instal", "x"], "no such command 'instal'. Did you mean 'install'"),
        (["marketplce", "list"], "Did you mean 'marketplace'?"),
        (["mcp", "lst"], "no such command 'lst'. Did you mean 'list'"),
        (["config", "reslve"], "Did you mean 'resolve'?"),
        (["install", "--scpe", "user", "x"], "no such option: --scpe (Possible options: --scope)"),
        (["info", "--jsn", "x"], "(Possible options: --json)"),
    ],
)
def test_did_you_mean_at_every_level(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert said in capsys.readouterr().err


def test_did_you_mean_from_the_installed_script() -> None:
    """The same through a real process (the root group is the one that lacked it)."""
    done = subprocess.run(
        [sys.executable, "-m", "plugman", "valdate", "."],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Did you mean 'validate'" in done.stderr
    assert "hint: see: plugman --help" in done.stderr


def marketplace(root: Path, name: str, plugins: list[str]) -> Path:
    """A directory marketplace `name` listing `plugins` (each a plugin with one skill)."""
    (root / ".claude-plugin").mkdir(parents=True)
    entries = []
    for plugin in plugins:
        folder = root / "plugins" / plugin
        (folder / ".claude-plugin").mkdir(parents=True)
        manifest = {"name": plugin, "version": "1.0.0", "description": f"{plugin} of {name}"}
        (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
        (folder / "skills" / "s").mkdir(parents=True)
        (folder / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
        entries.append({"name": plugin, "source": f"./plugins/{plugin}", "version": "1.0.0"})
    catalog = {"name": name, "owner": {"name": "o"}, "plugins": entries}
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    return root


def test_info_on_a_name_two_marketplaces_share_lists_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`info NAME` when two marketplaces list NAME: both candidates and how to say which
    (it said "no known marketplace lists it"); qualified, each is shown; once one of them is
    installed, the bare name means that one."""
    project = str(tmp_path)
    for name in ("alpha", "beta"):
        root = marketplace(tmp_path / name, name, ["shared", f"only-{name}"])
        assert main(["--project", project, "marketplace", "add", str(root)]) == 0
    capsys.readouterr()
    assert main(["--project", project, "info", "shared"]) == 2
    said = capsys.readouterr().err
    assert "'shared' is listed by several marketplaces: shared@alpha, shared@beta" in said
    assert "hint: say which: plugman info shared@alpha" in said
    assert "no known marketplace" not in said
    assert main(["--project", project, "info", "shared@beta", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plugin"]["id"] == "shared@beta"
    assert main(["--project", project, "info", "only-alpha"]) == 0
    assert main(["--project", project, "install", "shared@beta"]) == 0
    capsys.readouterr()
    assert main(["--project", project, "info", "shared", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plugin"]["id"] == "shared@beta"


def plugman(project: Path, *args: str, tty: bool = False) -> tuple[int, str, str]:
    """`python -m plugman --project PROJECT ARGS` as a real process: exit code, stdout and
    stderr (a pseudo-terminal's, when `tty`: progress is for a terminal only)."""
    import os
    import pty

    command = [sys.executable, "-m", "plugman", "--project", str(project), *args]
    if not tty:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower) as proc:
        os.close(follower)
        said = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            said += chunk
        out = proc.stdout.read() if proc.stdout else b""
        code = proc.wait(timeout=120)
    os.close(leader)
    return code, out.decode(), said.decode()


@pytest.fixture
def twelve(tmp_path: Path) -> Path:
    """A project whose known marketplace lists twelve plugins, p00 to p11."""
    project = tmp_path / "project"
    project.mkdir()
    root = marketplace(tmp_path / "twelve", "twelve", [f"p{i:02}" for i in range(12)])
    assert plugman(project, "marketplace", "add", str(root))[0] == 0
    return project


def test_a_long_install_shows_progress_on_a_terminal_only(twelve: Path) -> None:
    """On a terminal: one status line rewritten in place (`[3/12] fetching p02`), cleared before
    the result; piped: no progress at all; and twelve plugins are summed up in a few lines."""
    names = [f"p{i:02}" for i in range(12)]
    code, out, err = plugman(twelve, "install", *names[:6], tty=True)
    assert code == 0, err
    assert "\r\x1b[K" in err and "[3/6] fetching p02" in err and "[6/6] fetching p05" in err
    assert err.endswith("\r\x1b[K")  # cleared: the terminal is left as it was
    assert out.splitlines() == [f"installed {n}@twelve 1.0.0 (user)" for n in names[:6]]
    code, out, err = plugman(twelve, "uninstall", *names[:6])
    assert (code, err) == (0, "")
    code, out, err = plugman(twelve, "install", *names)
    assert (code, err) == (0, "")  # piped: quiet, as pip and uv are
    assert out.startswith("installed 12 plugins (user): p00@twelve 1.0.0, p01@twelve 1.0.0,")
    assert len(out.splitlines()) == 4 and out.endswith(" p10@twelve 1.0.0, p11@twelve 1.0.0\n")
    assert all(len(line) <= 80 for line in out.splitlines())


def test_quiet_and_verbose_are_global(twelve: Path) -> None:
    names = [f"p{i:02}" for i in range(12)]
    code, out, err = plugman(twelve, "-q", "install", *names[:3], tty=True)
    assert (code, out, err) == (0, "installed 3 plugins (user)\n", "")
    code, out, err = plugman(twelve, "--verbose", "install", *names[3:])
    assert code == 0
    assert "… [1/9] fetching p03\n" in err and "… [9/9] fetching p11\n" in err  # piped too
    assert len(out.splitlines()) == 9  # each plugin a line
    code, out, err = plugman(twelve, "-q", "marketplace", "list")  # any other command takes it
    assert code == 0 and "twelve" in out
