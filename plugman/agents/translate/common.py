"""Translators, the common part: reading one Claude-format Markdown file (a command or a
subagent) into its front matter and body, and writing YAML front matter and TOML strings that
read back exactly.

A translator is a pure function from the file's bytes to `Translated` (a file name relative to
the agent's folder, its bytes, and `notes`: one line for each thing the agent's form cannot say,
left out or kept as plain text) or `Refused` (why the file cannot be expressed at all). Nothing is
dropped silently. The formats: `translate_commands` (commands) and `translate_agents`
(subagents); skills keep their folder (`skill_names`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from plugman.core.jsonvalue import JSONObject
from plugman.manifest import frontmatter
from plugman.manifest.diagnostics import WARNING, Sink

NAME_MAX = 64
PLUGIN_ROOT = "${CLAUDE_PLUGIN_ROOT}"
_NOT_NAME = re.compile(r"[^a-z0-9]+")
_POSITIONAL = re.compile(r"\$[0-9]+")
# Claude Code runs `` !`cmd` `` before sending a command's prompt (when allowed-tools permit).
SHELL = re.compile(r"(?<![\w`])!`([^`\n]+)`")


class Translated(NamedTuple):
    name: str  # the file, relative to the agent's folder ("x.toml", "x/SKILL.md")
    data: bytes
    notes: tuple[str, ...] = ()  # what the agent's form cannot say: left out or kept as text


class Refused(NamedTuple):
    reason: str


Result = Translated | Refused


class Source(NamedTuple):
    """One Claude-format Markdown file: its name (the file stem), front matter, body."""

    name: str
    meta: JSONObject
    body: str
    raw: bytes


# An agent's own translator (`Component.translate`, for an extension's agent with a form of its
# own): (the command or subagent file read, the plugin's name) → the file the agent reads, its
# name relative to the agent's folder for that kind (one file, or `NAME/FILE` for a folder), or
# `Refused`: why it cannot be expressed (said in a note, never dropped silently).
Translate = Callable[[Source, str], Result]


def read(path: Path, data: bytes | None = None) -> Source | Refused:
    """The file at `path` (or `data`, its bytes), split into front matter and body."""
    raw = path.read_bytes() if data is None else data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refused(f"{path.name} is not UTF-8 text ({exc.reason} at byte {exc.start})")
    try:
        meta = frontmatter.parse(text, Sink(str(path)), WARNING)
    except frontmatter.Unreadable:
        return Refused(f"{path.name}: its front matter is not readable YAML")
    return Source(path.stem, meta or {}, body(text), raw)


def body(text: str) -> str:
    """The text after the front matter (all of it when there is none)."""
    text = text.removeprefix("\ufeff")
    found = frontmatter.split(text)
    if found is None:
        return text
    start = text.index("\n") + 1
    closing = text.find("\n", start + len(found[0]))
    return "" if closing < 0 else text[closing + 1 :]


_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def safe_name(name: str) -> bool:
    """Whether `name` can be a file name in an agent's folder (no separator, no `..`)."""
    return _SAFE.fullmatch(name) is not None and ".." not in name


def skill_name(name: str) -> str:
    """`name` as an Agent Skills name: lowercase `[a-z0-9-]`, single hyphens, at most 64
    characters ("" when nothing is left)."""
    return _NOT_NAME.sub("-", name.lower()).strip("-")[:NAME_MAX].rstrip("-")


def text_field(meta: JSONObject, key: str) -> str | None:
    value = meta.get(key)
    return value if isinstance(value, str) and value.strip() else None


def left_out(meta: JSONObject, kept: tuple[str, ...], label: str) -> list[str]:
    """One note per front matter field the agent's form has no place for."""
    return [f"`{key}` left out: {label} has no such field" for key in meta if key not in kept]


def plugin_root(text: str, root: str | None, label: str) -> tuple[str, list[str]]:
    """`${CLAUDE_PLUGIN_ROOT}` replaced by the plugin's folder when given; otherwise kept, with
    a note (the agent does not set it)."""
    if PLUGIN_ROOT not in text:
        return text, []
    if root is not None:
        return text.replace(PLUGIN_ROOT, root), []
    return text, [f"`{PLUGIN_ROOT}` kept as text: {label} does not set it"]


def positional(text: str, label: str) -> list[str]:
    found = sorted(set(_POSITIONAL.findall(text)))
    if not found:
        return []
    return [f"{', '.join(found)} kept as text: {label} has no positional arguments"]


def yaml_string(value: str) -> str:
    """A YAML double-quoted scalar that reads back as `value` (JSON escapes are YAML's; a
    character that is not printable is escaped too)."""
    out = []
    for char in json.dumps(value, ensure_ascii=False)[1:-1]:
        if char.isprintable() or char == "\\":
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def yaml_value(value: Any, indent: str = "") -> str:
    """Plain data as block YAML after `key:` (strings quoted, lists and maps as blocks)."""
    if isinstance(value, bool):
        return " true" if value else " false"
    if isinstance(value, int | float):
        return f" {value}"
    if isinstance(value, list):
        return "".join(f"\n{indent}  -{yaml_value(item, indent + '  ')}" for item in value) or " []"
    if isinstance(value, dict):
        lines = [
            f"\n{indent}  {yaml_string(str(k))}:{yaml_value(v, indent + '  ')}"
            for k, v in value.items()
        ]
        return "".join(lines) or " {}"
    if value is None:
        return " null"
    return " " + yaml_string(str(value))


def markdown(meta: JSONObject, text: str) -> bytes:
    """A Markdown file with `meta` as its front matter (none when empty), then `text`."""
    if not meta:
        return text.encode()
    head = "".join(f"{key}:{yaml_value(value)}\n" for key, value in meta.items())
    return f"---\n{head}---\n{text}".encode()


def toml_string(value: str) -> str:
    """A TOML string that reads back as `value`: a multi-line literal string for text of
    several lines when it can be one (readable prompts), else a basic string with escapes."""
    literal_ok = "\n" in value and "'''" not in value and not value.endswith("'")
    if literal_ok and all(c in "\t\n" or (c.isprintable() and c != "\x7f") for c in value):
        return "'''\n" + value + "'''"
    out = []
    for char in json.dumps(value, ensure_ascii=False)[1:-1]:
        code = ord(char)
        if code == 0x7F or (not char.isprintable() and char != "\\"):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_table(fields: dict[str, str]) -> bytes:
    """A TOML document of string keys; checked by reading it back."""
    import tomllib  # lazy: tomllib takes ~6 ms to import, only this path needs it

    text = "".join(f"{key} = {toml_string(value)}\n" for key, value in fields.items())
    if tomllib.loads(text) != fields:  # pragma: no cover - a bug in toml_string
        raise AssertionError(f"TOML does not read back: {text!r}")
    return text.encode()
