"""Command lines as data: every command's arguments and options, parsed and explained here.

Every command is declared once, as data: a `Command` (its words, summary, arguments, options
and the function that runs it) or a `Group` of commands. The root table (plugman.cli.commands)
holds the top-level rows and the hot commands whole; a group's rows live beside its functions
in plugman.cli.<module>, imported only when that group runs. This module parses a command line
against a declaration and writes its `--help`; plugman.cli.app walks the table. It imports
nothing heavy: `plugman --help` lays out its table with it.

Errors read as click's did (`no such option: --x`, `missing argument SPEC...`, `invalid value
for '--scope' / '-s': 'x' is not one of ...`), as UsageErrors with a hint to the command's help.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import import_module

FLAG, VALUE, MANY = "flag", "value", "many"  # an option is a switch, takes a value, or repeats
Value = object  # a parsed value: bool, str, int, float, Path, a list of str, or None
_TYPES = {"text": "TEXT", "int": "INTEGER", "float": "NUMBER", "path": "PATH"}


class Option:
    """`--name`/`-n`: a flag (False/True), a value (the last one given) or many values, of a
    type (`text`, `int`, `float`, `path`) within `low`..`high` or one of `choices`."""

    __slots__ = (
        "choices",
        "default",
        "dest",
        "help",
        "high",
        "low",
        "metavar",
        "names",
        "shown",
        "takes",
        "type",
    )

    def __init__(
        self,
        names: tuple[str, ...],
        help: str,
        takes: str = FLAG,
        *,
        choices: tuple[str, ...] = (),
        default: Value = None,
        metavar: str = "",
        type: str = "text",
        low: float | None = None,
        high: float | None = None,
        dest: str = "",
        shown: str | None = None,
    ) -> None:
        self.names, self.help, self.takes = names, help, takes
        self.choices, self.type, self.low, self.high = choices, type, low, high
        self.default = False if takes == FLAG else default
        self.metavar = metavar or ("SCOPE" if choices else _TYPES[type])
        self.dest = dest or names[0].lstrip("-").replace("-", "_")
        self.shown = shown  # the default as the help says it (None: the default itself)

    def label(self) -> str:
        """How messages name it: `'--scope' / '-s'`."""
        return " / ".join(f"'{name}'" for name in self.names)


class Argument:
    """A positional word (`many`: one or more, or any number when not `required`)."""

    __slots__ = (
        "choices",
        "default",
        "dest",
        "help",
        "high",
        "low",
        "many",
        "metavar",
        "required",
        "type",
    )

    def __init__(
        self,
        dest: str,
        help: str = "",
        *,
        many: bool = False,
        required: bool = True,
        metavar: str = "",
        type: str = "text",
        default: Value = None,
        choices: tuple[str, ...] = (),
    ) -> None:
        self.dest, self.help, self.many, self.required = dest, help, many, required
        self.metavar = metavar or dest.upper() + ("..." if many else "")
        self.type, self.default, self.choices = type, default, choices
        self.low: float | None = None  # (an argument takes no range)
        self.high: float | None = None

    def label(self) -> str:
        return f"'{self.metavar}'"


HELP = Option(("--help", "-h"), "Show this message and exit.")
JSON = Option(("--json",), "Print a JSON document.", dest="as_json")
SHOW_SECRETS = Option(("--show-secrets",), "Show secret values unmasked.")
SCOPE = Option(
    ("--scope", "-s"),
    "user, project or local.",
    VALUE,
    choices=("user", "project", "local"),
    default="user",
)
Runs = "str | Callable[..., int | None]"


class Context:
    """What a command's function gets besides its values: the --project folder given (or
    None), and the words after `--` for a command that keeps them (`rest`; None: no `--`)."""

    __slots__ = ("project", "rest")

    def __init__(self, project: str | None, rest: list[str] | None = None) -> None:
        self.project, self.rest = project, rest


class Command:
    """One command: its words (`config resolve`, or its own word in a group's rows), summary,
    arguments, options, epilog, and the function that runs it (`runs`: the function, or
    `MODULE:NAME` in plugman.cli, imported only to run it), called with a Context and every
    value by its name. With no summary, the function's docstring is the help; `rest`: the words
    after `--` go to Context.rest."""

    __slots__ = ("arguments", "epilog", "options", "rest", "runs", "summary", "words")

    def __init__(
        self,
        words: str,
        summary: str,
        runs: str | Callable[..., int | None],
        arguments: tuple[Argument, ...] = (),
        options: tuple[Option, ...] = (),
        epilog: str = "",
        *,
        rest: bool = False,
    ) -> None:
        self.words, self.summary, self.runs = words, summary, runs
        self.arguments, self.options, self.epilog = arguments, (*options, HELP), epilog
        self.rest = rest

    def runner(self) -> Callable[..., int | None]:
        """The function that runs this command (its module imported now)."""
        if not isinstance(self.runs, str):
            return self.runs

        module, _, name = self.runs.partition(":")
        found: Callable[..., int | None] = getattr(import_module(f"plugman.cli.{module}"), name)
        return found

    def paragraphs(self, summary: str = "") -> list[str]:
        """The help's paragraphs: the summary (the table's, for a top-level command declared
        in a module), then the epilog or the function's docstring."""
        summary = summary or self.summary
        text = self.epilog or ("" if isinstance(self.runs, str) else self.runs.__doc__ or "")
        return [p for p in (summary, *_paragraphs(text)) if p]

    def usage(self, words: str) -> str:
        shown = " ".join(a.metavar if a.required else f"[{a.metavar}]" for a in self.arguments)
        return f"Usage: plugman {words} [OPTIONS] {shown}".rstrip()


class Group:
    """Commands under one word (`mcp`): its rows, in the order its help lists them; `runs`:
    what `plugman WORD` alone runs (with `options`), else it shows its help (exit 2)."""

    __slots__ = ("commands", "options", "runs", "summary", "words")

    def __init__(
        self,
        words: str,
        summary: str,
        commands: tuple[Command | Group, ...],
        *,
        runs: Callable[..., int | None] | None = None,
        options: tuple[Option, ...] = (),
    ) -> None:
        self.words, self.summary, self.commands, self.runs = words, summary, commands, runs
        self.options = (*options, HELP)

    def find(self, word: str) -> Command | Group | None:
        return next((c for c in self.commands if c.words.split()[-1] == word), None)


def _paragraphs(text: str) -> list[str]:
    """A docstring's paragraphs (blank-line separated), each one line: the layout wraps it."""
    paragraphs, lines = [], []  # (not inspect.cleandoc: inspect costs ~10 ms to import)
    for line in [*text.split("\n"), ""]:
        if line.strip():
            lines.append(line.strip())
        elif lines:
            paragraphs.append(" ".join(" ".join(lines).split()))
            lines = []
    return paragraphs


class Values(dict[str, Value]):
    """A parsed command line: each option's and argument's value, by its name."""


def wrong(words: str, message: str) -> Exception:
    """The UsageError of a command line `plugman WORDS` does not take (plugman.core.errors is
    imported here: `plugman --help` needs none of it)."""
    # lazy: core.errors not loaded by plugman --help (+21 ms)
    from plugman.core.errors import UsageError

    return UsageError(message, hint=f"see: plugman {words} --help".replace("  ", " "))


def parse(command: Command | Group, words: str, args: list[str]) -> tuple[Values, list[str] | None]:
    """The values of a command line (every option's, its default when absent, and every
    argument's) and the words after `--` (for a command that keeps them), or a UsageError."""
    values = Values({o.dest: ([] if o.takes == MANY else o.default) for o in command.options})
    positional: list[str] = []
    rest: list[str] | None = None
    named = {name: option for option in command.options for name in option.names}
    keeps = isinstance(command, Command) and command.rest
    items = iter(args)
    for arg in items:
        if arg == "--":
            if keeps:
                rest = list(items)
            else:
                positional.extend(items)
        elif arg.startswith("-") and arg != "-":
            name, eq, given = arg.partition("=")
            option = named.get(name)
            if option is None:
                raise wrong(words, f"no such option: {name}{_possible(name, named)}")
            _take(words, option, values, given if eq else None, items)
        else:
            positional.append(arg)
    arguments = command.arguments if isinstance(command, Command) else ()
    values |= _arguments(words, arguments, positional)
    return values, rest


def _possible(name: str, named: dict[str, Option]) -> str:
    """` (Possible options: --scope)`: the close names, as click said it."""
    # lazy: difflib not loaded by plugman list (+5 ms)
    from difflib import get_close_matches

    close = get_close_matches(name, [n for n in named if n.startswith("--")])
    return f" (Possible options: {', '.join(close)})" if close else ""


def _take(
    words: str, option: Option, values: Values, given: str | None, rest: Iterator[str]
) -> None:
    if option.takes == FLAG:
        if given is not None:
            raise wrong(words, f"option {option.names[0]} does not take a value")
        values[option.dest] = True
        return
    value = given if given is not None else next(rest, None)
    if value is None:
        raise wrong(words, f"option {option.names[0]} requires an argument")
    typed = convert(words, option, value)
    if option.takes == MANY:
        values[option.dest] = [*values[option.dest], typed]  # type: ignore[misc]
    else:
        values[option.dest] = typed


def convert(words: str, param: Option | Argument, value: str) -> Value:
    """`value` as `param` takes it, or click's message for one it does not."""
    if param.choices and value not in param.choices:
        choices = ", ".join(repr(c) for c in param.choices)
        raise wrong(words, f"invalid value for {param.label()}: {value!r} is not one of {choices}")
    if param.type == "path":
        from pathlib import Path  # (here: `plugman --help` needs none of it)

        return Path(value)
    if param.type not in ("int", "float"):
        return value
    low, high = param.low, param.high
    try:
        number: float = int(value) if param.type == "int" else float(value)
    except ValueError:
        kind = f"{param.type} range" if (low, high) != (None, None) else _NUMBERS[param.type]
        raise wrong(
            words, f"invalid value for {param.label()}: {value!r} is not a valid {kind}"
        ) from None
    if (low is not None and number < low) or (high is not None and number > high):
        bounds = (
            f"{low}<=x<={high}"
            if low is not None and high is not None
            else (f"x>={low}" if low is not None else f"x<={high}")
        )
        raise wrong(
            words, f"invalid value for {param.label()}: {number} is not in the range {bounds}"
        )
    return number


_NUMBERS = {"int": "integer", "float": "float"}


def _arguments(words: str, arguments: tuple[Argument, ...], given: list[str]) -> Values:
    values = Values()
    for argument in arguments:
        if argument.required and not given:
            raise wrong(words, f"missing argument {argument.metavar}")
        taken, given = (given, []) if argument.many else (given[:1], given[1:])
        typed = [convert(words, argument, word) for word in taken]
        if argument.many:
            values[argument.dest] = typed
        else:
            default = argument.default
            if taken or default is None:
                values[argument.dest] = typed[0] if typed else None
            else:
                values[argument.dest] = default
    if given:
        raise wrong(words, f"got unexpected extra argument ({' '.join(given)})")
    return values


def help_text(
    command: Command | Group,
    words: str,
    summary: str = "",
    rows: list[tuple[str, str]] | None = None,
    columns: int = 80,
) -> str:
    """`plugman WORDS --help`: usage, summary and the rest, arguments, options (and a group's
    commands, `rows`: each name and summary)."""
    options = [(_option_name(o), _option_help(o)) for o in command.options]
    if isinstance(command, Group):
        return layout(
            f"Usage: plugman {words} [OPTIONS] COMMAND [ARGS]...",
            [summary or command.summary],
            [("Options", options), ("Commands", rows or [])],
            columns,
        )
    arguments = [(a.metavar, a.help) for a in command.arguments]
    return layout(
        command.usage(words),
        command.paragraphs(summary),
        [("Arguments", arguments), ("Options", options)],
        columns,
    )


def layout(
    usage: str,
    paragraphs: list[str],
    sections: list[tuple[str, list[tuple[str, str]]]],
    columns: int = 80,
) -> str:
    """Every command's help, one style: the usage line, each paragraph wrapped whole, then
    each section that has rows as a table (`Options:`, name and text)."""
    # lazy: textwrap not loaded by plugman list (<1 ms)
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
    """An option's help, with its notes in brackets: repeatable, its range and default."""
    text = option.help + (" (repeatable)" if option.takes == MANY else "")
    notes = []
    if option.low is not None or option.high is not None:
        low, high = option.low, option.high
        if low is not None and high is not None:
            notes.append(f"{low} to {high}")
        else:
            notes.append(f"at least {low}" if low is not None else f"at most {high}")
    default = option.shown if option.shown is not None else option.default
    if option.takes != FLAG and default not in (None, "", (), []):
        notes.append(f"default: {default}")
    return (text + (f" [{'; '.join(notes)}]" if notes else "")).strip()


def table(rows: list[tuple[str, str]], columns: int) -> list[str]:
    """Rows of name and text, the text wrapped in `columns` beside the widest name."""
    # lazy: textwrap not loaded by plugman list (<1 ms)
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
