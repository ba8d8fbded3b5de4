"""`--help` of the typer commands, written as plugman.cli.argv writes a fast command's: one
plain style for every command (usage, the help's paragraphs each wrapped whole, then
`Arguments:`, `Options:` and `Commands:` tables), where typer would draw boxes, break a docstring
at its source lines and name types (`<str>`, `<int range>`).

It reads the click command typer built (its params and help), so a command declares its help
once, as typer options and a docstring; nothing here imports rich.
"""

from __future__ import annotations

import inspect
from typing import Any

from plugman.cli.argv import layout

_TYPES = {"int": "INTEGER", "int range": "INTEGER", "float": "NUMBER", "float range": "NUMBER"}
_TYPES |= {"path": "PATH", "file": "FILE"}


def help_of(command: Any, words: str) -> str:
    """The help of the click `command` that `plugman WORDS` runs (a group's lists its
    commands)."""
    arguments = [p for p in command.params if _kind(p) == "argument"]
    options = [p for p in command.params if _kind(p) == "option" and not p.hidden]
    usage = " ".join(_argument_usage(p) for p in arguments)
    if hasattr(command, "list_commands"):
        usage = "COMMAND [ARGS]..."
    sections = [
        ("Arguments", [(_argument_name(p), _help(p)) for p in arguments]),
        ("Options", [*((_option_name(p), _help(p)) for p in options), HELP_ROW]),
        ("Commands", _commands(command)),
    ]
    return layout(
        f"Usage: plugman {words} [OPTIONS] {usage}".rstrip(),
        paragraphs(command.help or ""),
        sections,
    )


HELP_ROW = ("-h, --help", "Show this message and exit.")


def paragraphs(text: str) -> list[str]:
    """A docstring's paragraphs (blank-line separated), each one line: the layout wraps it."""
    cleaned = inspect.cleandoc(text)
    return [" ".join(part.split()) for part in cleaned.split("\n\n") if part.strip()]


def _kind(param: Any) -> str:
    return str(getattr(param, "param_type_name", ""))


def _commands(group: Any) -> list[tuple[str, str]]:
    if not hasattr(group, "list_commands"):
        return []
    rows = []
    for name in group.list_commands(None):
        sub = group.get_command(None, name)
        if sub is not None and not getattr(sub, "hidden", False):
            summary = sub.short_help or (paragraphs(sub.help or "") or [""])[0]
            rows.append((name, summary))
    return rows


def _argument_name(param: Any) -> str:
    name = param.metavar or param.name.upper()
    return f"{name}..." if param.nargs == -1 and not name.endswith("...") else name


def _argument_usage(param: Any) -> str:
    name = _argument_name(param)
    return name if param.required else f"[{name}]"


def _option_name(param: Any) -> str:
    names = ", ".join(sorted(param.opts, key=len))
    if param.secondary_opts:
        names += " / " + ", ".join(sorted(param.secondary_opts, key=len))
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return names
    return f"{names} {_metavar(param)}"


def _metavar(param: Any) -> str:
    if param.metavar:
        return str(param.metavar)
    kind = getattr(param.type, "name", "text")
    if kind == "choice":
        return str(param.name).upper()
    return _TYPES.get(kind, "TEXT")


def _help(param: Any) -> str:
    """An option's or argument's help, with what typer shows in brackets: repeatable, its
    range and default."""
    text = getattr(param, "help", None) or ""
    notes = []
    if getattr(param, "multiple", False):
        text += " (repeatable)"
    low, high = getattr(param.type, "min", None), getattr(param.type, "max", None)
    if low is not None or high is not None:
        notes.append(_range(low, high))
    default = _default(param)
    if default:
        notes.append(f"default: {default}")
    if notes:
        text += f" [{'; '.join(notes)}]"
    return text.strip()


def _range(low: object, high: object) -> str:
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


def _default(param: Any) -> str:
    shown = getattr(param, "show_default", None)
    if shown is False or getattr(param, "is_flag", False) or _kind(param) != "option":
        return ""
    if isinstance(shown, str):
        return shown
    value = param.default
    if value is None or value == () or value == [] or callable(value):
        return ""
    return str(getattr(value, "value", value))  # an enum's value as typed
