"""What every renderer shares: the one writer (`emit`), listeners, the JSON envelope, paths."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plugman.core.errors import PlugmanError
    from plugman.manifest.diagnostics import Diagnostic

from plugman.manifest.diagnostics import printable

FORMAT_VERSION = 1
SHOWN: list[Progress] = []  # the status line on screen (Progress), cleared before any text


def emit(text: str, *, err: bool = False) -> None:
    for shown in SHOWN:  # a status line on screen goes before the text is written
        shown.finish()
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") or not text else text + "\n")


def announced(line: str) -> None:
    """A line for whoever started a long-running command (stderr, at once: `mcp serve`
    announces where it listens, and a caller may be waiting for that line)."""
    emit(line, err=True)
    sys.stderr.flush()


VERBOSITY = [0]  # -q: -1, -v: 1; set once by the CLI (plugman.cli), before a command runs


def set_verbosity(level: int) -> None:
    """`-q` (-1: no progress, results summed up) or `-v` (1: every step and result a line)."""
    VERBOSITY[0] = level


def verbosity() -> int:
    return VERBOSITY[0]


class Progress:
    """Progress on stderr: on a terminal one status line rewritten in place (`[12/40]
    fetching p11@m`) and cleared when the command ends, as pip and uv show theirs; with -v every
    message a line of its own, on a terminal or not; nothing when piped or with -q."""

    def __init__(self, lines: bool) -> None:
        self.lines, self.shown = lines, False

    def __call__(self, message: object) -> None:
        from plugman.core.progress import Step  # lazy: not loaded by `plugman paths`, say

        text = printable(message if isinstance(message, str) else "")
        if isinstance(message, Step):
            text = f"[{message.number}/{message.total}] {printable(message.what)}"
        if self.lines:
            emit(f"… {text}", err=True)
            return
        width = _columns()  # cut to the terminal's width: a line that wraps is not rewritten
        dim, plain = ("", "") if os.environ.get("NO_COLOR") else ("\x1b[2m", "\x1b[0m")
        sys.stderr.write(f"\r\x1b[K{dim}{text[: width - 1] if width else text}{plain}")
        sys.stderr.flush()
        self.shown = True
        SHOWN[:] = [self]

    def finish(self) -> None:
        """Clear the status line (before the command's result or error is written)."""
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False


def _columns() -> int:
    """The width of the terminal stderr is on; 0 when it does not say (a new pty)."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        return 0


def progress_listener() -> Progress | None:
    """Progress for this command (Progress), or None: with -q, or stderr not a terminal
    (unless -v)."""
    level = verbosity()
    if level < 0 or (level == 0 and not sys.stderr.isatty()):
        return None
    return Progress(lines=level > 0)


def warning_listener() -> Callable[[object], None]:
    """Show warnings on stderr, always (stdout stays the command's result, e.g. its JSON): a
    sentence as one `warning:` line, a deployment's warnings grouped (`output.agents`)."""

    def show(message: object) -> None:
        if isinstance(message, str):
            emit(f"warning: {printable(message)}", err=True)
            return
        from plugman.output.warned import deploy_warnings  # lazy: only a deployment's warnings

        text = deploy_warnings(message)
        if text:
            emit(text, err=True)

    return show


def warnings(notes: list[str]) -> str:
    """Notes that do not fail the command, one `warning:` line each (stderr)."""
    return "\n".join(f"warning: {printable(note)}" for note in notes)


def ask(question: str, *, hidden: bool = False) -> str:
    """A line typed at the terminal in answer to `question` (not echoed when `hidden`)."""
    for shown in SHOWN:
        shown.finish()
    if hidden:
        from getpass import getpass  # lazy: only a hidden question (termios with it)

        return getpass(question, stream=sys.stderr)
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline().rstrip("\n")


def located(found: dict[str, str], as_json: bool) -> str:
    """`plugman paths`: every location, one per line, or its JSON document."""
    if as_json:
        return envelope("paths", paths=found)
    return "\n".join(f"{name:18} {value}" for name, value in found.items())


def envelope(command: str, **body: Any) -> str:
    """The versioned JSON document every `--json` output uses."""
    return json.dumps({"format": FORMAT_VERSION, "command": command, **body}, indent=2)


def error_envelope(failure: PlugmanError, command: str | None) -> str:
    """What a failed command prints on stdout under --json (stderr still has `error:`)."""
    from plugman.config.redact import message  # lazy: only an error loads the redactor

    error: dict[str, Any] = {
        "message": message(failure.message),
        "where": failure.where and message(failure.where),
        "hint": failure.hint and message(failure.hint),
        "exit_code": int(failure.exit_code),
    }
    found: list[Diagnostic] | None = getattr(failure, "diagnostics", None)
    if found:  # a refused plugin (plugman pack, tag): the validator's findings
        error["diagnostics"] = [{**d._asdict(), "file": display_path(d.file)} for d in found]
    return json.dumps({"format": FORMAT_VERSION, "command": command, "error": error}, indent=2)


def display_path(file: str) -> str:
    """A path relative to the working directory when it is below it."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def error(exc: Exception) -> str:
    """A user-facing error for stderr (with the validator's findings, for a refused plugin);
    never a sensitive value or a URL's credentials (`config.redact.message`)."""
    from plugman.config.redact import message  # lazy: only an error loads the redactor

    found: list[Diagnostic] | None = getattr(exc, "diagnostics", None)
    if not found:
        return message(f"error: {exc}")
    where, hint = getattr(exc, "where", None), getattr(exc, "hint", None)
    head = f"{where}: {exc.args[0]}" if where else str(exc.args[0])
    lines = [f"error: {head}", *(f"  {line}" for d in found for line in diagnostic_lines(d))]
    return message("\n".join([*lines, f"  hint: {hint}"] if hint else lines))


def diagnostic_lines(d: Diagnostic) -> list[str]:
    """One finding as text: `file:line:col: severity [code] path: message`, and its hint."""
    where = display_path(d.file)
    if d.line is not None:
        where += f":{d.line}:{d.column or 1}"
    at = f" {d.path}:" if d.path else ""
    line = f"{where}: {d.severity} [{d.code}]{at} {d.message}"
    return [line, f"    hint: {d.hint}"] if d.hint else [line]
