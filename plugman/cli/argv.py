"""Command lines as data: the hot commands' options, parsed and explained without typer.

Importing typer and click costs ~30 ms of a process that installs a plugin in ~80 ms, and the
commands a user or a script runs most (`install`, `uninstall`, `list`, `paths`, `config resolve`,
`validate`) need none of what they offer here: a few flags, an option or two, positional words.
So each of these commands is declared once, as a `FastCommand` in the command table
(plugman.cli.commands), and this module parses a command line against one and writes its
`--help`; the typer application derives its mount of the same command from that declaration
(plugman.cli.app), forwarding the words here, so both ways in parse alike.

Errors read as click's did (`no such option: --x`, `missing argument SPEC...`, `'x' is not one
of ...`), as UsageErrors with a hint to the command's help.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

FLAG, VALUE, MANY = "flag", "value", "many"  # an option is a switch, takes a value, or repeats
Given = dict[str, "bool | str | list[str] | None"]


class Option:
    """`--name`/`-n`: a flag (False/True), a value (the last one given) or many values."""

    __slots__ = ("choices", "default", "dest", "help", "metavar", "names", "takes")

    def __init__(
        self,
        names: tuple[str, ...],
        help: str,
        takes: str = FLAG,
        *,
        choices: tuple[str, ...] = (),
        default: str | None = None,
        metavar: str = "TEXT",
    ) -> None:
        self.names, self.help, self.takes = names, help, takes
        self.choices, self.default, self.metavar = choices, default, metavar
        self.dest = names[0].lstrip("-").replace("-", "_")


class Argument:
    """A positional word (`many`: one or more, or any number when not `required`)."""

    __slots__ = ("dest", "help", "many", "metavar", "required")

    def __init__(
        self,
        dest: str,
        help: str,
        *,
        many: bool = False,
        required: bool = True,
        metavar: str = "",
    ) -> None:
        self.dest = dest
        self.help = help
        self.many = many
        self.required = required
        self.metavar = metavar or dest.upper() + ("..." if many else "")


HELP = Option(("--help", "-h"), "Show this message and exit.")
JSON = Option(("--json",), "Print a JSON document.")
SCOPE = Option(
    ("--scope", "-s"),
    "user, project or local.",
    VALUE,
    choices=("user", "project", "local"),
    default="user",
    metavar="SCOPE",
)


class Values:
    """A parsed command line: each option's and argument's value, by its name."""

    __slots__ = ("_given",)

    def __init__(self, given: dict[str, bool | str | list[str] | None]) -> None:
        self._given = given

    def flag(self, name: str) -> bool:
        return self._given[name] is True

    def text(self, name: str) -> str | None:
        value = self._given[name]
        return value if isinstance(value, str) else None

    def words(self, name: str) -> list[str]:
        value = self._given[name]
        return value if isinstance(value, list) else []


class FastCommand:
    """One command plugman parses and runs itself: its words (`config resolve`), summary,
    arguments, options, epilog, and where the function that runs it lives (`runs`: `MODULE:NAME`
    in plugman.cli, imported only to run it), called with the parsed values and the --project
    folder given (or None)."""

    __slots__ = ("arguments", "epilog", "options", "runs", "summary", "words")

    def __init__(
        self,
        words: str,
        summary: str,
        runs: str,
        arguments: tuple[Argument, ...] = (),
        options: tuple[Option, ...] = (),
        epilog: str = "",
    ) -> None:
        self.words, self.summary, self.runs = words, summary, runs
        self.arguments, self.options, self.epilog = arguments, (*options, HELP), epilog

    def runner(self) -> Callable[[Values, str | None], int | None]:
        """The function that runs this command (its module imported now)."""
        from importlib import import_module

        module, _, name = self.runs.partition(":")
        found: Callable[[Values, str | None], int | None]
        found = getattr(import_module(f"plugman.cli.{module}"), name)
        return found

    def usage(self) -> str:
        words = " ".join(a.metavar if a.required else f"[{a.metavar}]" for a in self.arguments)
        return f"Usage: plugman {self.words} [OPTIONS] {words}".rstrip()

    def wrong(self, message: str) -> Exception:
        """The UsageError of a command line this command does not take (plugman.core.errors is
        imported here: `plugman --help`, which lays out its table with this module, needs none
        of it)."""
        from plugman.core.errors import UsageError

        return UsageError(message, hint=f"see: plugman {self.words} --help")


def parse(command: FastCommand, args: list[str]) -> Values:
    """The values of a command line: every option's (its default when absent) and every
    argument's, or a UsageError saying what is wrong."""
    values: Given = {o.dest: ([] if o.takes == MANY else o.default) for o in command.options}
    values |= {o.dest: False for o in command.options if o.takes == FLAG}
    words: list[str] = []
    named = {name: option for option in command.options for name in option.names}
    items = iter(args)
    for arg in items:
        if arg == "--":
            words += items
        elif arg.startswith("-") and arg != "-":
            name, eq, given = arg.partition("=")
            option = named.get(name)
            if option is None:
                raise command.wrong(f"no such option: {name}{_possible(name, named)}")
            _take(command, option, values, given if eq else None, items)
        else:
            words.append(arg)
    return Values(values | _arguments(command, words))


def _possible(name: str, named: dict[str, Option]) -> str:
    """` (Possible options: --scope)`: the close names, as click says it for typer's commands."""
    from difflib import get_close_matches

    close = get_close_matches(name, [n for n in named if n.startswith("--")])
    return f" (Possible options: {', '.join(close)})" if close else ""


def _take(
    command: FastCommand, option: Option, values: Given, given: str | None, rest: Iterator[str]
) -> None:
    if option.takes == FLAG:
        if given is not None:
            raise command.wrong(f"option {option.names[0]} does not take a value")
        values[option.dest] = True
        return
    value = given if given is not None else next(rest, None)
    if value is None:
        raise command.wrong(f"option {option.names[0]} requires an argument")
    if option.choices and value not in option.choices:
        choices = ", ".join(repr(c) for c in option.choices)
        names = "/".join(option.names)
        raise command.wrong(f"invalid value for {names}: {value!r} is not one of {choices}")
    if option.takes == MANY:
        values[option.dest] = [*values[option.dest], value]  # type: ignore[misc]
    else:
        values[option.dest] = value


def _arguments(command: FastCommand, words: list[str]) -> Given:
    values: Given = {}
    for argument in command.arguments:
        if argument.required and not words:
            raise command.wrong(f"missing argument {argument.metavar}")
        taken, words = (words, []) if argument.many else (words[:1], words[1:])
        values[argument.dest] = taken if argument.many else (taken[0] if taken else None)
    if words:
        raise command.wrong(f"got unexpected extra argument ({' '.join(words)})")
    return values


def help_text(command: FastCommand, columns: int = 80) -> str:
    """`plugman WORDS --help`: usage, summary, arguments and options."""
    options = [(_option_name(o), _option_help(o)) for o in command.options]
    return layout(
        command.usage(),
        [command.summary, *(command.epilog.split("\n\n") if command.epilog else ())],
        [("Arguments", [(a.metavar, a.help) for a in command.arguments]), ("Options", options)],
        columns,
    )


def layout(
    usage: str,
    paragraphs: list[str],
    sections: list[tuple[str, list[tuple[str, str]]]],
    columns: int = 80,
) -> str:
    """Every command's help, one style (plugman.cli.helptext writes the typer commands' with
    it): the usage line, each paragraph wrapped whole, then each section that has rows as a
    table (`Options:`, name and text)."""
    from textwrap import wrap

    lines = [usage]
    for paragraph in paragraphs:
        lines += ["", *wrap(" ".join(paragraph.split()), columns, break_on_hyphens=False)]
    for title, rows in sections:
        if rows:
            lines += ["", f"{title}:", *table(rows, columns)]
    return "\n".join(lines)


def _option_name(option: Option) -> str:
    names = ", ".join(sorted(option.names, key=len))
    return names if option.takes == FLAG else f"{names} {option.metavar}"


def _option_help(option: Option) -> str:
    extra = f" [default: {option.default}]" if option.default else ""
    return option.help + (" (repeatable)" if option.takes == MANY else "") + extra


def table(rows: list[tuple[str, str]], columns: int) -> list[str]:
    """Rows of name and text, the text wrapped in `columns` beside the widest name."""
    from textwrap import wrap

    width = min(max(len(name) for name, _ in rows), NAME_WIDTH)
    lines = []
    for name, text in rows:
        parts = wrap(text, max(columns - width - 4, 20), break_on_hyphens=False) or [""]
        if len(name) > width:  # a long name on a line of its own, its text below
            lines.append(f"  {name}")
        else:
            lines.append(f"  {name.ljust(width)}  {parts.pop(0)}".rstrip())
        lines += [" " * (width + 4) + part for part in parts if part]
    return lines


NAME_WIDTH = 28  # a longer option name (`--first-list-wait NUMBER`) has its text below it
