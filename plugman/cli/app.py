"""The `plugman` command line, one parser for every command: the root options, the command the
words name in the table (plugman.cli.commands; a group's rows imported from its module only
when it runs), its `--help`, its values (plugman.cli.argv), and every failure reported once:
`error:` / `hint:` on stderr (and, under --json, an error envelope on stdout) and its exit code.

This module imports nothing heavy: the hot commands (`list`, `config resolve`, `hooks exec`,
`mcp run`...) run through it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module

from plugman import __version__
from plugman.cli.argv import Command, Context, Group, _possible, help_text, parse
from plugman.cli.commands import COMMANDS, OPTIONS, TOP_LEVEL, Lazy, root_help
from plugman.cli.running import Exit, interrupted, listening, reader_gone, report
from plugman.core.errors import PlugmanError, UsageError, from_os_error

Node = Command | Group
LOUDNESS = {"-q": -1, "--quiet": -1, "-v": 1, "--verbose": 1}  # the root options -q and -v
HELP = ("-h", "--help")
ROOT_OPTIONS = [n.strip(",") for names, _ in OPTIONS for n in names.split() if n[0] == "-"]


def main(args: list[str]) -> int:
    """Run `plugman ARGS`: the command's exit code, every failure reported."""
    try:
        return _main(args)
    except BrokenPipeError:
        return reader_gone()
    except KeyboardInterrupt:
        return report(interrupted(), args, _name(args))
    except (PlugmanError, OSError) as exc:
        failure = exc if isinstance(exc, PlugmanError) else from_os_error(exc)
        return report(failure, args, _name(args))


def _main(args: list[str]) -> int:
    project, level, words = _root(args)
    _loudness(level)
    own = words[: words.index("--")] if "--" in words else words
    path, node, rest = _walk(words)
    if any(arg in HELP for arg in own) or (
        isinstance(node, Group) and not rest and node.runs is None
    ):
        return _help(path, node, 0 if any(arg in HELP for arg in own) else UsageError.exit_code)
    if isinstance(node, Group):
        if rest and not rest[0].startswith("-"):  # (a word no command of the group has)
            raise _no_such(rest[0], path, node)
        values, _ = parse(node, " ".join(path), rest)
        assert node.runs is not None
        return _run(node.runs, Context(project), values)
    assert node is not None
    values, after = parse(node, " ".join(path), rest)
    return _run(node.runner(), Context(project, after), values)


def _run(function: Callable[..., int | None], context: Context, values: dict[str, object]) -> int:
    """Call a command's function with its values (and the Context, when its first parameter
    is `ctx`): its exit code."""
    values.pop("help", None)  # (asked for, it is answered before)
    code = function.__code__
    given = (context,) if code.co_argcount and code.co_varnames[0].endswith("ctx") else ()
    with listening():
        try:
            return function(*given, **values) or 0
        except Exit as done:
            return done.code


def _root(args: list[str]) -> tuple[str | None, int, list[str]]:
    """The root options in front of the command (`--project PATH`, `-q`, `-v`, `--version`,
    `--help`) and the words after them."""
    project, level = None, 0
    while args and args[0].startswith("-"):
        arg, args = args[0], args[1:]
        if arg == "--project" and args:
            project, args = args[0], args[1:]
        elif arg.startswith("--project="):
            project = arg.partition("=")[2]
        elif arg in LOUDNESS:
            level = LOUDNESS[arg]
        elif arg in HELP:
            raise _Answer(root_help(), 0)
        elif arg == "--version":
            raise _Answer(f"plugman {__version__}", 0)
        else:
            name = arg.partition("=")[0]
            near = _possible(name, dict.fromkeys(ROOT_OPTIONS))  # type: ignore[arg-type]
            raise UsageError(f"no such option: {name}{near}", hint="see: plugman --help")
    if not args:
        raise _Answer(root_help(), UsageError.exit_code)
    return project, level, args


class _Answer(Exception):  # noqa: N818 (not an error: the root help or version)
    """The root's help or version, and its exit code."""

    def __init__(self, text: str, code: int) -> None:
        self.text, self.code = text, code


def _loudness(level: int) -> None:
    if level or "plugman.output.common" in sys.modules:  # (set again: main runs in tests too)
        # lazy: output.common not loaded by plugman __complete (+1 ms)
        from plugman.output.common import set_verbosity

        set_verbosity(level)


def top(word: str) -> Node | None:
    """The top-level command or group `word` names (its module imported when in one)."""
    declared = COMMANDS.get(word) if word in TOP_LEVEL else None
    if not isinstance(declared, Lazy):
        return declared

    found: Node = getattr(import_module(f"plugman.cli.{declared.module}"), declared.attribute)
    return found


def children(path: list[str], group: Group) -> list[tuple[str, Node]]:
    """A group's commands by name, in its help's order: its rows, then the hot commands the
    table declares under it."""
    prefix = " ".join(path) + " "
    rows = [(node.words.split()[-1], node) for node in group.commands]
    fast = [c for w, c in COMMANDS.items() if w.startswith(prefix) and isinstance(c, Command)]
    return rows + [(command.words.split()[-1], command) for command in fast]


def _walk(words: list[str]) -> tuple[list[str], Node | None, list[str]]:
    """The words of the command a line names, that command, and the arguments after them;
    an unknown word is a UsageError (`did you mean`)."""
    first = top(words[0])
    if first is None:
        raise _no_such(words[0], [], None)
    path, node = [words[0]], first
    rest = words[1:]
    while isinstance(node, Group):
        skipped = 0
        while skipped < len(rest) and rest[skipped].startswith("-") and rest[skipped] != "--":
            skipped += 1
        if skipped >= len(rest) or rest[skipped] == "--":
            break
        found = dict(children(path, node)).get(rest[skipped])
        if found is None:
            if any(arg in HELP for arg in rest[:skipped]):
                break
            raise _no_such(rest[skipped], path, node)
        path, node, rest = [*path, rest[skipped]], found, rest[:skipped] + rest[skipped + 1 :]
    return path, node, rest


def _no_such(word: str, path: list[str], group: Group | None) -> UsageError:
    names = TOP_LEVEL if group is None else [name for name, _ in children(path, group)]
    where = " ".join(["plugman", *path])
    return UsageError(
        f"no such command {word!r}{did_you_mean(word, names)}", hint=f"see: {where} --help"
    )


def did_you_mean(typo: str, names: list[str]) -> str:
    """`. Did you mean 'install'?` (the closest names), or nothing when none is close."""
    # lazy: difflib not loaded by plugman list (+5 ms)
    from difflib import get_close_matches

    matches = get_close_matches(typo, names)
    return f". Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""


def _help(path: list[str], node: Node | None, code: int) -> int:
    # lazy: output not loaded by plugman __complete (<1 ms)
    from plugman import output

    output.emit(help_of(path, node))
    return code


def help_of(path: list[str], node: Node | None) -> str:
    """The help of `plugman PATH`: a command's, or a group's with its commands."""
    words = " ".join(path)
    declared = COMMANDS.get(words)
    summary = declared.summary if isinstance(declared, Lazy) else ""
    if isinstance(node, Group):
        rows = [(name, _summary(child)) for name, child in children(path, node)]
        return help_text(node, words, summary, rows)
    assert node is not None
    return help_text(node, words, summary)


def _summary(node: Node) -> str:
    return node.summary if isinstance(node, Group) else (node.paragraphs() or [""])[0]


def _name(args: list[str]) -> str | None:
    """The command an argument list names (`mcp list`), as JSON envelopes call it."""
    try:
        words = _root(args)[2]
        return " ".join(_walk(words[: words.index("--")] if "--" in words else words)[0])
    except (PlugmanError, _Answer, ImportError):
        return None


def run(args: list[str]) -> int:
    """`plugman ARGS` in this process: the exit code (the root's help and version included)."""
    try:
        return main(args)
    except _Answer as answer:
        sys.stdout.write(answer.text + "\n")
        return answer.code


def hot(args: list[str]) -> bool:
    """Whether the command is one the table declares whole (a hot one: it may end the process
    at once, plugman.cli.done)."""
    try:
        words = _root(args)[2]
    except (PlugmanError, _Answer):
        return False
    return isinstance(COMMANDS.get(" ".join(words[:2])) or COMMANDS.get(words[0]), Command)


def every_command() -> list[list[str]]:
    """The words of every command and group, from the root down (each group imported)."""
    found: list[list[str]] = []

    def walk(path: list[str], node: Node | None) -> None:
        found.append(path)
        if isinstance(node, Group):
            for name, child in children(path, node):
                walk([*path, name], child)

    for word in TOP_LEVEL:
        walk([word], top(word))
    return found
