"""JSON text as `json.dumps(value, indent=2)` writes it, byte for byte, made faster: the standard
library writes indented JSON in pure Python, a generator per value; this writes the common values
(objects with string keys, arrays, strings, integers, booleans, null) in one recursive pass, the
strings by the C escaper, and hands anything else (a float, a non-string key, another type, a
cycle) to `json.dumps` itself."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

INDENT = "  "


class _OtherError(Exception):
    """A value this writer leaves to `json.dumps`."""


def dumps(value: Any) -> str:
    """`json.dumps(value, indent=2)`."""
    out: list[str] = []
    try:
        _write(value, out, "\n")
    except (_OtherError, RecursionError):
        return json.dumps(value, indent=2)
    return "".join(out)


def _write(value: Any, out: list[str], newline: str) -> None:
    if isinstance(value, str):
        out.append(encode_basestring_ascii(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int) and not isinstance(value, bool):
        out.append(int.__repr__(value))
    elif isinstance(value, dict):
        _object(value, out, newline)
    elif isinstance(value, list | tuple):
        _array(value, out, newline)
    else:
        raise _OtherError


def _object(value: dict[Any, Any], out: list[str], newline: str) -> None:
    if not value:
        out.append("{}")
        return
    inner = newline + INDENT
    separator = "{" + inner
    for key, item in value.items():
        if not isinstance(key, str):
            raise _OtherError
        out.append(separator)
        out.append(encode_basestring_ascii(key))
        out.append(": ")
        _write(item, out, inner)
        separator = "," + inner
    out.append(newline + "}")


def _array(value: list[Any] | tuple[Any, ...], out: list[str], newline: str) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + INDENT
    separator = "[" + inner
    for item in value:
        out.append(separator)
        _write(item, out, inner)
        separator = "," + inner
    out.append(newline + "]")
