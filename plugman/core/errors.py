"""The one error type plugman raises for anything a user can fix, with its exit code."""

from __future__ import annotations

import errno
from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    """Process exit codes; documented in the README."""

    OK = 0
    FAILED = 1  # the command ran and found problems (validation issues, a failed operation)
    USAGE = 2  # bad command line: unknown option, missing or unreadable argument
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as a shell reports a command it interrupted


class PlugmanError(Exception):
    """A user-facing failure: what is wrong, where, and what to do next."""

    exit_code: ExitCode = ExitCode.FAILED

    def __init__(self, message: str, *, hint: str | None = None, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.where = where

    def __str__(self) -> str:
        head = f"{self.where}: {self.message}" if self.where else self.message
        return f"{head}\n  hint: {self.hint}" if self.hint else head


class UsageError(PlugmanError):
    """The command line itself is wrong."""

    exit_code = ExitCode.USAGE


class InputError(PlugmanError):
    """A file the command reads is damaged or hostile (a broken plugman.lock, a wrong type in
    plugman.toml, an unresolved merge): bad input, as a bad command line is. `where` is
    `FILE:LINE` and the message names the key path; `diagnostics` has every finding."""

    exit_code = ExitCode.USAGE

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        where: str | None = None,
        diagnostics: list[Any] | None = None,
    ):
        super().__init__(message, hint=hint, where=where)
        self.diagnostics = diagnostics or []


class InterruptError(PlugmanError):
    """The user pressed Ctrl-C: the open transaction has rolled back by the time it is said."""

    exit_code = ExitCode.INTERRUPTED


class FetchError(PlugmanError):
    """Something could not be fetched (a download, a clone, unsafe content)."""


_OS_HINTS = {
    errno.ENOSPC: "free some disk space, then run the command again",
    errno.EDQUOT: "free some space within your quota, then run the command again",
    errno.EACCES: "check the permissions of that path, then run the command again",
    errno.EPERM: "check the permissions of that path, then run the command again",
    errno.EROFS: "that file system is read-only; point plugman elsewhere (PLUGMAN_HOME)",
}


def from_os_error(exc: OSError) -> PlugmanError:
    """A failed file operation as a user-facing error. Commands that change files run in a
    transaction that has rolled back by the time this is shown, so nothing was changed."""
    what = exc.strerror or str(exc)
    hint = _OS_HINTS.get(exc.errno or 0, "run the command again once the cause is fixed")
    return PlugmanError(
        f"{what}; nothing was changed", where=exc.filename and str(exc.filename), hint=hint
    )
