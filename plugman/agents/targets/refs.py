"""`${VAR}` references in the agent's own syntax: `Refs` says how an agent spells them, `rewrite`
writes a value that way, or raises `Unwritable` naming what the agent cannot be given."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from plugman.config.expand import VARIABLE
from plugman.config.redact import is_secret_name

EXACT = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
Form = Callable[[str, str | None], str | None]  # (VAR, default) → text, None: cannot


def exact_reference(value: Any) -> str | None:
    """VAR when `value` is exactly `${VAR}`."""
    match = EXACT.match(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def rewrite(value: Any, form: Form) -> Any:
    """`value` (string, list or dict of strings) with each `${VAR}` / `${VAR:-d}` replaced by
    form(VAR, d); raises `Unwritable` naming the variable when form returns None."""
    if isinstance(value, str):
        return VARIABLE.sub(lambda m: _form(form, m.group(1), m.group(2)), value)
    if isinstance(value, list):
        return [rewrite(v, form) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, form) for k, v in value.items()}
    return value


class Unwritable(Exception):  # noqa: N818 (caught right where a field is written)
    def __init__(self, variable: str):
        super().__init__(variable)
        self.variable = variable


def _form(form: Form, var: str, default: str | None) -> str:
    text = form(var, default)
    if text is None:
        raise Unwritable(var)
    return text


def syntax(env: Mapping[str, str], reference: Callable[[str], str]) -> Form:
    """An agent that expands `reference(VAR)` but has no default syntax: a default is written
    as its value when VAR is unset here, else as a reference."""

    def form(var: str, default: str | None) -> str:
        return default if default is not None and var not in env else reference(var)

    return form


def literal(env: Mapping[str, str]) -> Form:
    """An agent that expands nothing: a non-secret variable is written as its value here; a
    secret (or unset) one cannot be written."""

    def form(var: str, default: str | None) -> str | None:
        if is_secret_name(var):
            return None
        return env.get(var, default)

    return form


@dataclass(frozen=True, kw_only=True)
class Refs:
    """How an agent's file spells a reference. `spelling` is the text it expands, with `VAR`
    standing for the name (`${env:VAR}`); None when it expands nothing, so variables are written
    as their values here and secret ones cannot be written."""

    spelling: str | None
    defaults: bool = False  # it expands `${VAR:-d}` too: every reference is written as given
    native_in: tuple[str, ...] = ()  # fields it expands `${VAR}` / `${VAR:-d}` in all the same

    def form(self, env: Mapping[str, str], *, shared: bool = False) -> Form | None:
        """How a reference outside `native_in` is written; None: as given. In a `shared` file
        (a project's, committed) a reference the agent expands stays a reference whatever this
        environment holds, so every teammate's deploy writes the same bytes."""
        if self.defaults:
            return None
        spelling = self.spelling
        if spelling is None:
            return literal(env)
        if shared:
            return lambda var, _default: spelling.replace("VAR", var)
        return syntax(env, lambda var: spelling.replace("VAR", var))


AS_GIVEN = Refs(spelling="${VAR}", defaults=True)
VALUES = Refs(spelling=None)
