"""Shell completion (`plugman completion bash|zsh|fish`, the hidden `plugman __complete`), run
in the real shells: bash through its programmable-completion variables (COMP_WORDS, COMP_CWORD,
COMPREPLY), fish through `complete -C` (its own completion engine), zsh by calling the script's
function with `words`/`CURRENT` set and `compadd` recording what it is given. Each runs the
real `plugman` program of this venv, in the test's own PLUGMAN_HOME."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from plugman.cli import invoke
from plugman.cli.app import every_command
from plugman.cli.argv import Command
from plugman.cli.completion import SHELLS, complete
from tests.conftest import SAMPLES
from tests.integration.helpers import run

BIN = str(Path(sys.executable).parent)  # where this venv's `plugman` program is


def script(shell: str) -> str:
    result = invoke(["completion", shell])
    assert result.exit_code == 0, result.output
    return result.stdout


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"PATH": BIN + os.pathsep + os.environ["PATH"]}


def bash(lines: list[list[str]], cwd: Path) -> list[list[str]]:
    """What bash's completion function puts in COMPREPLY for each line (its words after
    `plugman`, the last the word being completed), all in one real bash."""
    calls = [
        f"COMP_WORDS=(plugman {' '.join(shlex.quote(w) for w in words)}); "
        f"COMP_CWORD={len(words)}; _plugman_complete; "
        'printf "%s\\n" "${COMPREPLY[@]}"; echo "<end>"'
        for words in lines
    ]
    program = script("bash") + "\n" + "\n".join(calls) + "\n"
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    found = done.stdout.split("<end>\n")
    assert found[-1] == "" and len(found) == len(lines) + 1, done
    return [[w for w in block.split("\n") if w] for block in found[:-1]]


def test_bash_completes_commands_options_choices_and_installed_plugins(tmp_path: Path) -> None:
    run("install", str(SAMPLES / "plugins" / "code-review"))
    top, mcp, option, scope, joined, short, uninstall, shell = bash(
        [
            [""],
            ["mcp", ""],
            ["install", "--sc"],
            ["install", "--scope", ""],
            ["install", "--scope", "=", "p"],  # `--scope=p`, as bash splits it
            ["uninstall", "-"],
            ["uninstall", ""],
            ["completion", ""],
        ],
        tmp_path,
    )
    assert {"install", "uninstall", "mcp", "agents", "completion"} <= set(top)
    assert "__complete" not in top
    assert {"add", "list", "remove", "run", "serve", "vars"} <= set(mcp)
    assert option == ["--scope"]
    assert scope == ["user", "project", "local"]
    assert joined == ["project"]
    assert {"--scope", "-s", "--keep-data", "--force", "--json", "--help", "-h"} == set(short)
    assert uninstall == ["code-review@direct"]
    assert shell == list(SHELLS)


def test_every_command_of_the_table_is_completed_with_its_options(tmp_path: Path) -> None:
    """Every command and group (app.every_command: a new row is completed without an edit) is
    offered at its level by the real bash script, and each command's options, long and short."""
    commands = every_command()
    parents = sorted({tuple(path[:-1]) for path in commands})
    offered = dict(zip(parents, bash([[*p, ""] for p in parents], tmp_path), strict=True))
    for path in commands:
        assert path[-1] in offered[tuple(path[:-1])], path
    from plugman.cli.app import children, top

    for path in commands:
        node = top(path[0])
        for at, word in enumerate(path[1:], 1):
            node = dict(children(path[:at], node)).get(word)  # type: ignore[arg-type]
        assert node is not None
        names = {name for option in node.options for name in option.names}
        assert set(complete([*path, "-"])) == names, path
        if isinstance(node, Command):
            for option in node.options:
                if option.choices:
                    given = complete([*path, option.names[0], ""])
                    assert given == list(option.choices), (path, option.names)


EVIL = [
    "$(touch pwned-1)",
    "`touch pwned-2`",
    "x;touch pwned-3",
    "q'uo\"te$(touch${IFS}pwned-4)@m",
    "a b|touch pwned-5&",
]


def test_a_hostile_plugin_id_or_marketplace_name_is_inserted_as_text_never_run(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Ids and names out of state files (which a marketplace's content can shape) are offered
    quoted: completing runs none of them, and the word inserted, run as the user's line would
    run it, is the id itself. One with a newline is not offered at all (it would be two)."""
    run("install", str(SAMPLES / "plugins" / "code-review"))
    record = isolated_home / "state" / "installed" / "user.json"
    data = json.loads(record.read_text())
    entry = data["plugins"]["code-review@direct"]
    data["plugins"] = dict.fromkeys([*EVIL, "a\nb$(touch pwned-6)"], entry)
    record.write_text(json.dumps(data))
    registry = isolated_home / "state" / "marketplaces.json"
    registry.write_text(json.dumps({"format": 1, "marketplaces": {e: {} for e in EVIL}}))
    work = tmp_path / "work"
    work.mkdir()
    plugins, markets = bash([["uninstall", ""], ["marketplace", "remove", ""]], work)
    assert len(plugins) == len(markets) == len(EVIL)
    assert list(work.iterdir()) == []  # completing ran nothing
    for words, expected in ((plugins, EVIL), (markets, EVIL)):
        line = "printf '%s\\n' " + " ".join(words)  # the line as the user runs it
        done = subprocess.run(
            ["bash", "--norc", "--noprofile", "-c", line],
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.split("\n")[:-1] == expected
    assert list(work.iterdir()) == []


def test_fish_completes_through_its_own_engine(tmp_path: Path) -> None:
    run("install", str(SAMPLES / "plugins" / "code-review"))
    (tmp_path / "plugman.fish").write_text(script("fish"))
    asks = ["plugman ", "plugman mcp ", "plugman install --sc", "plugman install --scope=", ""]
    asks[-1] = "plugman uninstall "
    program = f"source {shlex.quote(str(tmp_path / 'plugman.fish'))}\n" + "\n".join(
        f"complete -C {shlex.quote(line)}; echo '<end>'" for line in asks
    )
    done = subprocess.run(
        ["fish", "--no-config", "-c", program],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    top, mcp, option, scope, uninstall, _ = done.stdout.split("<end>\n")
    assert {"install", "mcp", "completion"} <= set(top.split())
    assert {"add", "list", "serve"} <= set(mcp.split())
    assert option.split() == ["--scope"]
    assert sorted(scope.split()) == ["--scope=local", "--scope=project", "--scope=user"]
    assert uninstall.split() == ["code-review@direct"]


def test_zsh_offers_compadd_what_plugman_completes(tmp_path: Path) -> None:
    """zsh runs the script's function for real; compadd (which needs the line editor) is
    replaced by one that prints what it is given."""
    run("install", str(SAMPLES / "plugins" / "code-review"))
    checked = subprocess.run(["zsh", "-n", "-c", script("zsh")], capture_output=True, check=False)
    assert checked.returncode == 0, checked.stderr
    calls = [
        ["plugman", "mcp", ""],
        ["plugman", "install", "--scope="],
        ["plugman", "uninstall", ""],
    ]
    program = (
        'compdef() { : }\ncompadd() { shift; print -rl -- "$@" }\n_files() { print FILES }\n'
        + script("zsh")
        + "\n".join(
            f"words=({' '.join(shlex.quote(w) for w in words)}); CURRENT={len(words)}; "
            "_plugman; echo '<end>'"
            for words in calls
        )
    )
    done = subprocess.run(
        ["zsh", "-f", "-c", program],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    mcp, scope, uninstall, _ = done.stdout.split("<end>\n")
    assert {"add", "list", "serve"} <= set(mcp.split())
    assert scope.split() == ["--scope=user", "--scope=project", "--scope=local"]
    assert uninstall.split() == ["code-review@direct"]


def test_completing_writes_nothing_and_fails_silently(tmp_path: Path, isolated_home: Path) -> None:
    record = isolated_home / "state" / "installed" / "user.json"
    record.parent.mkdir(parents=True)
    record.write_text("{not json")
    assert complete(["uninstall", ""]) == []
    assert complete(["no-such-command", ""]) == []
    assert complete(["mcp", "no-such", ""]) == []
    assert sorted(p.name for p in isolated_home.rglob("*")) == ["installed", "state", "user.json"]


def test_other_commands_never_import_completion(tmp_path: Path) -> None:
    """`--help`, `list` and `install --help` do not load the completion code; a Tab loads
    nothing heavy (no output layer, no tomlkit)."""
    env = _env() | {"PLUGMAN_HOME": str(tmp_path / "home")}
    for args in (["--help"], ["list"], ["install", "--help"], ["__complete", "uninstall", ""]):
        code = (
            f"import json, sys; from plugman.cli import main; code = main({args!r}); "
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr); sys.exit(code)"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
        loaded = json.loads(done.stderr.strip().splitlines()[-1])
        assert done.returncode == 0, (args, done.stderr)
        if args[0] == "__complete":
            heavy = [m for m in loaded if m.startswith(("plugman.output", "tomlkit", "rich"))]
            assert heavy == [], heavy
        else:
            assert "plugman.cli.completion" not in loaded, args


def test_the_help_says_how_to_install_it_in_each_shell() -> None:
    result = invoke(["completion", "--help"])
    text = " ".join(result.stdout.split())
    for line in (
        'eval "$(plugman completion bash)"',
        'eval "$(plugman completion zsh)"',
        "plugman completion fish > ~/.config/fish/completions/plugman.fish",
    ):
        assert line in text
        assert line in Path(__file__).parents[2].joinpath("README.md").read_text()
    assert invoke(["completion", "tcsh"]).exit_code == 2


def test_agents_are_completed_from_the_links_and_the_table(
    tmp_path: Path, isolated_home: Path
) -> None:
    """`agents remove` offers the agents the scope's plugman.toml links (the --project and
    --scope on the line honoured), `agents add` and `--target` the agents plugman knows."""
    from plugman.agents.targets.table import SPECS

    (isolated_home / "config").mkdir()
    (isolated_home / "config" / "plugman.toml").write_text("[agents]\ngemini = {}\n")
    (tmp_path / "plugman.toml").write_text("[agents]\ncodex = { via_gateway = true }\n")
    project = ["--project", str(tmp_path)]
    assert complete([*project, "agents", "remove", ""]) == ["gemini", "codex"]
    assert complete([*project, "agents", "remove", "-s", "project", ""]) == ["codex"]
    assert complete(["agents", "remove", "--scope=user", "g"]) == ["gemini"]
    known = [spec.name for spec in SPECS]
    assert complete(["agents", "add", ""]) == known
    assert complete(["config", "resolve", "--target", "g"]) == ["gemini", "goose"]
    assert complete(["export", "--target=co"]) == [f"--target={n}" for n in known if n[:2] == "co"]
