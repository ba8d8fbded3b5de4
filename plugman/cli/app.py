"""The typer application: the root group builds only the command it runs (from the table in
plugman.cli.commands), and turns every failure into `error:` / `hint:` on stderr (and, under
--json, an error envelope on stdout) and its exit code, once."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from plugman import __version__, output
from plugman.cli import running
from plugman.cli.argv import FastCommand, help_text
from plugman.cli.commands import COMMANDS, QUIET, TOP_LEVEL, VERBOSE, root_help
from plugman.cli.common import forwarded
from plugman.cli.completion import COMPLETION
from plugman.core.errors import PlugmanError, UsageError, from_os_error


class RootGroup(TyperGroup):
    """Builds a command when it is asked for (plugman.cli.commands), runs it with progress and
    warnings shown, and reports any failure the same way: a PlugmanError, a failed file
    operation, or a command line click could not parse."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in TOP_LEVEL if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = self.commands.get(cmd_name)
        if found is None and cmd_name in TOP_LEVEL:
            found = self.commands[cmd_name] = _built(cmd_name)
        return found

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(root_help() + "\n")

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """A command of the table; a typo gets the closest names (`did you mean`), as typer
        does below the top level (its own suggestions know only the commands built)."""
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as exc:
            said = exc.message
            if args and "Did you mean" not in said and said.startswith("No such command"):
                exc.message = said.rstrip(".") + did_you_mean(args[0], TOP_LEVEL)
            raise

    def invoke(self, ctx: Any) -> Any:
        with running.listening():
            try:
                return super().invoke(ctx)
            except KeyboardInterrupt:  # before click makes it "Aborted!" with exit code 1
                raise running.interrupted() from None

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        asked = _help_asked(self, argv)
        if asked is not None:  # one help style for every command (plugman.cli.helptext)
            output.emit(asked[0])
            if standalone_mode:
                sys.exit(asked[1])
            return asked[1]
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) else 0
        except typer.TyperException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # (answered above, before click)
                output.emit(exc.format_message())
                code = int(UsageError.exit_code)
            else:
                code = running.report(_as_error(exc), argv, _command_name(self, argv))
        except typer.Abort:
            output.emit("error: aborted", err=True)
            code = 1
        except BrokenPipeError:
            code = running.reader_gone()
        except (PlugmanError, OSError) as exc:
            code = running.report(_as_error(exc), argv, _command_name(self, argv))
        if standalone_mode:
            sys.exit(code)
        return code


def _as_error(exc: Exception) -> PlugmanError:
    if isinstance(exc, PlugmanError):
        return exc
    if isinstance(exc, OSError):  # a full disk, a denied path: said plainly, never a traceback
        return from_os_error(exc)
    assert isinstance(exc, typer.TyperException)  # click's errors, as typer vendors them
    message = exc.format_message().rstrip(".")
    message = message[:1].lower() + message[1:]
    context = getattr(exc, "ctx", None)
    where = context.command_path if context is not None else "plugman"
    kind = UsageError if exc.exit_code == UsageError.exit_code else PlugmanError
    return kind(message, hint=f"see: {where} --help")


def _built(name: str) -> Any:
    """The click command `name` names in plugman.cli.commands, with the summary written there: a
    fast command as its declaration says, a typer group with the fast commands declared under
    it, or a function as a command of its own."""
    declared = COMMANDS[name]
    if isinstance(declared, FastCommand):
        built: Any = forwarded(declared)
    else:
        module = importlib.import_module(f"plugman.cli.{declared.module}")
        target = getattr(module, declared.attribute)
        if isinstance(target, typer.Typer):
            built = typer.main.get_group(target)
            built.help = declared.summary
            for words, command in COMMANDS.items():
                if isinstance(command, FastCommand) and words.startswith(f"{name} "):
                    built.add_command(forwarded(command), words.split()[-1])
        else:  # its help: the summary, then what its docstring adds
            more = inspect.cleandoc(target.__doc__ or "")
            single = typer.Typer(add_completion=False)
            single.command(name, help="\n\n".join(filter(None, (declared.summary, more))))(target)
            built = typer.main.get_command(single)
    built.name = name
    return built


def _help_asked(group: typer.core.TyperGroup, argv: list[str]) -> tuple[str, int] | None:
    """The help of the command an argument list names and its exit code, when it asks for
    help (`-h` or `--help` before any `--`; 0) or names a group that needs a command (`plugman
    mcp`; 2): a fast command's as plugman.cli.argv writes it, another's from its click command
    in the same style (plugman.cli.helptext)."""
    if COMPLETION in os.environ:
        return None
    own = argv[: argv.index("--")] if "--" in argv else argv
    words, command = _command_path(group, own)
    asked = bool({"-h", "--help"} & set(own))
    bare = getattr(command, "no_args_is_help", False) and words[-1:] == own[-1:]
    if not asked and not (words and bare):
        return None
    code = 0 if asked else int(UsageError.exit_code)
    if not words:
        return root_help(), code
    declared = COMMANDS.get(" ".join(words))
    if isinstance(declared, FastCommand):
        return help_text(declared), code
    from plugman.cli.helptext import help_of

    return help_of(command, " ".join(words)), code


def did_you_mean(typo: str, names: list[str]) -> str:
    """`. Did you mean 'install'?` (the closest names), or nothing when none is close."""
    from difflib import get_close_matches

    matches = get_close_matches(typo, names)
    return f". Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""


def _command_name(group: typer.core.TyperGroup, argv: list[str]) -> str | None:
    """The command an argument list names (`mcp list`), as JSON envelopes call it."""
    return " ".join(_command_path(group, argv)[0]) or None


def _command_path(group: typer.core.TyperGroup, argv: list[str]) -> tuple[list[str], Any]:
    """The words of the command an argument list names, and that click command."""
    words: list[str] = []
    command: Any = group
    items = iter(argv)
    for arg in items:
        if arg == "--project":
            next(items, None)
        elif not arg.startswith("-"):
            sub = command.get_command(None, arg) if hasattr(command, "get_command") else None
            if sub is None:
                break
            words.append(arg)
            command = sub
        elif arg == "--":
            break
    return words, command


app = typer.Typer(
    cls=RootGroup,
    name="plugman",
    help="A package manager and marketplace CLI for agent plugins.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        output.emit(f"plugman {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            help="Project folder (default: the nearest folder from here upward with a "
            "plugman.toml, .mcp.json or .git; else the current folder).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=QUIET)] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE)] = False,
) -> None:
    """A package manager and marketplace CLI for agent plugins."""
    ctx.obj = {"project": project}
    output.set_verbosity(-1 if quiet else 1 if verbose else 0)


def run_app(args: list[str]) -> int:
    try:
        app(args=args, prog_name="plugman")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0
