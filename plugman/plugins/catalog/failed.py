"""One entry's problem in a command over many (`update`, `outdated`, `search`, `marketplace
update`): a plugin or marketplace that is blocked, broken or cannot be reached is its own
finding, with what and what to do, and the command goes on with the rest; any finding makes it
exit 1 (docs/cli.md, "Exit codes"), as cargo and uv do when part of a batch fails."""

from __future__ import annotations

from typing import Any, NamedTuple

from plugman.core.errors import PlugmanError


class Failed(NamedTuple):
    """A plugin (`id@marketplace`, with its scope) or a marketplace (its name, no scope) the
    command could not act on."""

    id: str
    scope: str | None
    problem: str
    hint: str | None

    @classmethod
    def of(cls, subject: str, scope: str | None, failure: PlugmanError) -> Failed:
        return cls(subject, scope, said(failure), failure.hint)

    def as_json(self) -> dict[str, Any]:
        return self._asdict()

    def lines(self, verb: str) -> list[str]:
        """`not updated: ID (SCOPE): PROBLEM` and its hint, as text."""
        scope = f" ({self.scope})" if self.scope else ""
        hint = [f"  hint: {self.hint}"] if self.hint else []
        return [f"{verb}: {self.id}{scope}: {self.problem}", *hint]


def said(failure: PlugmanError) -> str:
    """A failure's message with where it is (a file, a key path), as one finding says it."""
    return f"{failure.where}: {failure.message}" if failure.where else failure.message
