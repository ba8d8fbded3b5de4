"""Mutators and generators for the fuzz tests, as hypothesis strategies (so failures shrink).

A case is a seed (a real corpus file) plus a list of structure-aware edits (parse the JSON or the
YAML front matter, change one node: another type, another value, deleted, a duplicate key, a
subtree moved elsewhere; or put a YAML value PyYAML chokes on in front matter) and then a list
of byte edits (bit flips, deletions, insertions of syntax tokens, truncation, deep nesting).
Generated cases come from plugman's own JSON Schemas, mostly valid with off-schema values mixed
in, so the semantic checks behind the schema run too; they are built with `random` from a seed
hypothesis draws (many times faster than drawing every field, at the price of shrinking).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from hypothesis import strategies as st

from plugman.manifest import schema as schemas

# ---------------------------------------------------------------------------------------------
# A JSON tree that keeps duplicate keys and raw number tokens


class Obj(list[list[Any]]):
    """A JSON object as a list of [key, value] members: duplicates and order survive."""


@dataclass(frozen=True)
class Raw:
    """Text written into the document as is (huge numbers, NaN, broken tokens)."""

    text: str

    def __repr__(self) -> str:
        if len(self.text) <= 40:
            return f"Raw({self.text!r})"
        return f"Raw({self.text[:20]!r} ... {self.text[-10:]!r}, {len(self.text)} characters)"


def load_tree(text: str) -> Any:
    return json.loads(text, object_pairs_hook=lambda pairs: Obj([k, v] for k, v in pairs))


def to_tree(value: Any) -> Any:
    """Plain data (dicts) as a tree (Obj)."""
    if isinstance(value, dict):
        return Obj([str(k), to_tree(v)] for k, v in value.items())
    if isinstance(value, list):
        return [to_tree(v) for v in value]
    return value


def to_plain(value: Any) -> Any:
    """A tree as plain data (the last duplicate wins, raw tokens become strings)."""
    if isinstance(value, Obj):
        return {k: to_plain(v) for k, v in value}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, Raw):
        return value.text
    return value


HUGE = 10**4000


def dump(value: Any, indent: int | None = 2, ascii_only: bool = False, level: int = 0) -> str:
    """A tree as JSON text (duplicate keys and raw tokens written as they are)."""
    pad = "" if indent is None else "\n" + " " * (indent * (level + 1))
    end = "" if indent is None else "\n" + " " * (indent * level)
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Obj):
        if not value:
            return "{}"
        members = [
            json.dumps(k, ensure_ascii=ascii_only) + ": " + dump(v, indent, ascii_only, level + 1)
            for k, v in value
        ]
        return "{" + pad + ("," + pad).join(members) + end + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [dump(v, indent, ascii_only, level + 1) for v in value]
        return "[" + pad + ("," + pad).join(items) + end + "]"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > HUGE:
        return "1" * 4500  # what int() would refuse to print
    return json.dumps(value, ensure_ascii=ascii_only)


def slots(tree: list[Any]) -> list[tuple[list[Any], int]]:
    """Every node as (container, index), depth first; `tree` is a one-item holder list."""
    found: list[tuple[list[Any], int]] = []
    stack: list[Any] = [tree]
    while stack:
        container = stack.pop()
        members = range(len(container))
        for index in members:
            found.append((container, index))
            child = container[index][1] if isinstance(container, Obj) else container[index]
            if isinstance(child, list):
                stack.append(child)
    return found


def _get(container: list[Any], index: int) -> Any:
    return container[index][1] if isinstance(container, Obj) else container[index]


def _set(container: list[Any], index: int, value: Any) -> None:
    if isinstance(container, Obj):
        container[index][1] = value
    else:
        container[index] = value


# ---------------------------------------------------------------------------------------------
# Values and keys that break things

SCHEMA_FILES = (
    "plugin.schema.json",
    "marketplace.schema.json",
    "hooks.schema.json",
    "mcp-config.schema.json",
    "gemini-extension.schema.json",
    "skill.schema.json",
)


def _schema_keys() -> list[str]:
    keys: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    keys.update(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for name in SCHEMA_FILES:
        walk(schemas.load(name))
    return sorted(keys)


KEYS = _schema_keys()
ODD_KEYS = [
    "",
    " ",
    "$schema",
    "__proto__",
    "a.b",
    "a\u0000b",
    "\u202ename",
    "\ud800",
    "-x",
    "名前",
]
PATHS = [
    ".",
    "./",
    "./skills",
    "./skills/",
    "./skills/s",
    "./commands",
    "./commands/c.md",
    "./agents",
    "./agents/a.md",
    "./hooks/hooks.json",
    "./hooks/extra.json",
    "./.mcp.json",
    "./escape",
    "./escape/x",
    "skills",
    "../escape",
    "./a/../../b",
    "/etc/passwd",
    "~/x",
    "C:\\x",
    "\\\\server\\share",
    "./a\u0000b",
    "./" + "a" * 300,
    "./" + "a/" * 2100,
    "https://example.com/x.mcpb",
    "./x.mcpb",
    "./plugins/p0",
    "./plugins/p1",
    "plugins/p1",
]
NAMES = [
    "my-plugin",
    "MyPlugin",
    "a",
    "-rf",
    ".",
    "..",
    "a/b",
    "a\\b",
    "claude-code",
    "claude-plugins-official",
    "official-claude-tools",
    "workspace",
    "x" * 129,
    "tab\there",
    "zero\u200bwidth",
    "\u001b[31mred",
]
STRINGS = [
    "",
    " ",
    "${HOME}",
    "${UNSET}",
    "${A:-default}",
    "$(rm -rf /)",
    "http://",
    "http://[::1",
    "http://host:99999/x",
    "https://example.com/mcp",
    "npx",
    "1.0.0",
    "not a version",
    "Bash|Edit",
    "(?P<x>a)",
    "(?<x>a)",
    "[",
    "*",
    "a" * 2000,
    "\u0000",
    "\ud800",
    "line\nbreak",
    "stdio",
    "http",
    "sse",
    "ws",
    "streamable-http",
    "command",
    "prompt",
    "github",
    "url",
    "git-subdir",
    "npm",
    "archive",
    "owner/repo",
    "2020-13-45",
    "yes",
    "null",
    *PATHS,
    *NAMES,
]
RAWS = [
    Raw("1" * 5000),
    Raw("-" + "9" * 4400),
    Raw("1e999"),
    Raw("-1e999"),
    Raw("1" + "0" * 400),
    Raw("0." + "0" * 400 + "1"),
    Raw("NaN"),
    Raw("Infinity"),
    Raw("01"),
    Raw("1."),
    Raw(".5"),
    Raw("+1"),
    Raw("0x10"),
    Raw("'single'"),
    Raw("undefined"),
    Raw('"\\ud800"'),
    Raw('"\\u0000"'),
    Raw('"\\x41"'),
    Raw("[" * 300 + "]" * 300),
    Raw('{"a":' * 300 + "1" + "}" * 300),
]
SCALARS = [
    None,
    True,
    False,
    0,
    -1,
    1,
    999,
    1000,
    86400000,
    2**31,
    2**53 + 1,
    -(2**63),
    10**400,
    0.5,
    -0.0,
    1e308,
    *STRINGS,
]

scalars = st.one_of(
    st.sampled_from(SCALARS),
    st.sampled_from(RAWS),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
keys = st.one_of(st.sampled_from(KEYS), st.sampled_from(ODD_KEYS), st.text(max_size=8))
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(st.tuples(keys, children), max_size=3).map(
            lambda pairs: Obj([k, v] for k, v in pairs)
        ),
    ),
    max_leaves=4,
)


# ---------------------------------------------------------------------------------------------
# Structure-aware edits


@dataclass(frozen=True)
class Replace:
    at: int
    value: Any

    def apply(self, holder: list[Any]) -> None:
        container, index = _pick(holder, self.at)
        _set(container, index, self.value)


@dataclass(frozen=True)
class Delete:
    at: int

    def apply(self, holder: list[Any]) -> None:
        container, index = _pick(holder, self.at)
        if container is not holder:
            del container[index]


@dataclass(frozen=True)
class AddKey:
    at: int
    key: str
    value: Any

    def apply(self, holder: list[Any]) -> None:
        objects = [c for c, _ in slots(holder) if isinstance(c, Obj)]
        objects += [_get(c, i) for c, i in slots(holder) if isinstance(_get(c, i), Obj)]
        if objects:
            objects[self.at % len(objects)].append([self.key, self.value])


@dataclass(frozen=True)
class DuplicateKey:
    """Repeat a member, with its own value or another one."""

    at: int
    value: Any = None
    same: bool = True

    def apply(self, holder: list[Any]) -> None:
        members = [(c, i) for c, i in slots(holder) if isinstance(c, Obj)]
        if members:
            container, index = members[self.at % len(members)]
            key, value = container[index]
            container.append([key, value if self.same else self.value])


@dataclass(frozen=True)
class RenameKey:
    at: int
    key: str

    def apply(self, holder: list[Any]) -> None:
        members = [(c, i) for c, i in slots(holder) if isinstance(c, Obj)]
        if members:
            container, index = members[self.at % len(members)]
            container[index][0] = self.key


@dataclass(frozen=True)
class Transplant:
    """Copy one node over another: real values at the wrong key path."""

    source: int
    target: int

    def apply(self, holder: list[Any]) -> None:
        value = to_tree(json.loads(json.dumps(to_plain(_get(*_pick(holder, self.source))))))
        _set(*_pick(holder, self.target), value)


@dataclass(frozen=True)
class Wrap:
    """Put a node inside a list or an object (a string where a list is expected, …)."""

    at: int
    in_list: bool

    def apply(self, holder: list[Any]) -> None:
        container, index = _pick(holder, self.at)
        value = _get(container, index)
        _set(container, index, [value] if self.in_list else Obj([["value", value]]))


def _pick(holder: list[Any], at: int) -> tuple[list[Any], int]:
    found = slots(holder)
    return found[at % len(found)]


positions = st.integers(min_value=0, max_value=10_000)
tree_edits = st.one_of(
    st.builds(Replace, positions, values),
    st.builds(Delete, positions),
    st.builds(AddKey, positions, keys, values),
    st.builds(DuplicateKey, positions, values, st.booleans()),
    st.builds(RenameKey, positions, keys),
    st.builds(Transplant, positions, positions),
    st.builds(Wrap, positions, st.booleans()),
)


# ---------------------------------------------------------------------------------------------
# Byte edits

TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b",",
    b":",
    b"\\",
    b"\x00",
    b"\\u0000",
    b"\\ud800",
    b"\\uZZZZ",
    b"//",
    b"/*",
    b"*/",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\r",
    b"\r\n",
    b"\n",
    b"\t",
    b" ",
    b"\x1b[31m",
    b"\xe2\x80\xae",
    b"1e999",
    b"-0",
    b"1" * 5000,
    b"9" * 400,
    b"NaN",
    b"true",
    b"null",
    b"---",
    b"\n---\n",
    b": ",
    b"- ",
    b"? ",
    b"&a ",
    b"*a",
    b"&a [*a]",
    b"!!binary ",
    b"!!float ",
    b"!!timestamp ",
    b"!!python/object:os.system ",
    b"2020-13-45",
    b"2001-02-29 10:00:00",
    b"0x" + b"f" * 4000,
    b"|",
    b">",
    b"%YAML 1.1\n",
    b"<<: *a",
    b"${HOME}",
    b"../",
    b"./escape",
]
DEPTHS = [10, 200, 254, 255, 256, 257, 300, 1000, 20_000]
fractions = st.floats(min_value=0, max_value=1, exclude_max=True)


@dataclass(frozen=True)
class ByteEdit:
    kind: str  # flip | delete | insert | replace | truncate | repeat | nest
    where: float
    arg: Any = None
    closed: bool = field(default=False)

    def apply(self, data: bytes) -> bytes:
        at = int(self.where * len(data))
        if self.kind == "flip":
            if not data:
                return data
            at = min(at, len(data) - 1)
            return data[:at] + bytes([data[at] ^ (1 << self.arg)]) + data[at + 1 :]
        if self.kind == "delete":
            return data[:at] + data[at + self.arg :]
        if self.kind == "insert":
            return data[:at] + bytes(self.arg) + data[at:]
        if self.kind == "replace":
            return data[:at] + bytes(self.arg) + data[at + len(self.arg) :]
        if self.kind == "truncate":
            return data[:at]
        if self.kind == "repeat":
            end = at + int(self.arg)
            return data[:at] + data[at:end] * 2 + data[end:]
        opener, closer = (b"[", b"]") if self.arg % 2 else (b'{"k":', b"}")
        depth = int(self.arg)
        tail = closer * depth if self.closed else b""
        return data[:at] + opener * depth + b"1" + tail + data[at:]


byte_edits = st.one_of(
    st.builds(ByteEdit, st.just("flip"), fractions, st.integers(0, 7)),
    st.builds(ByteEdit, st.just("delete"), fractions, st.integers(1, 32)),
    st.builds(ByteEdit, st.just("insert"), fractions, st.sampled_from(TOKENS)),
    st.builds(ByteEdit, st.just("insert"), fractions, st.binary(min_size=1, max_size=6)),
    st.builds(ByteEdit, st.just("replace"), fractions, st.sampled_from(TOKENS)),
    st.builds(ByteEdit, st.just("truncate"), fractions),
    st.builds(ByteEdit, st.just("repeat"), fractions, st.integers(1, 64)),
    st.builds(ByteEdit, st.just("nest"), fractions, st.sampled_from(DEPTHS), st.booleans()),
)


# ---------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Mutation:
    """A seed, and what is done to it."""

    seed: int
    edits: tuple[Any, ...] = ()
    bytes_edits: tuple[ByteEdit, ...] = ()
    indent: int | None = 2
    ascii_only: bool = False


# ---------------------------------------------------------------------------------------------
# YAML front matter edits: values PyYAML's constructors choke on, aliases, nesting

LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)
)
YAML_VALUES = [
    "2020-13-45",
    "2001-02-29",
    "2001-02-28 25:61:00",
    "1" * 5000,
    "-0x" + "f" * 4000,
    "1_" * 3000 + "1",
    "!!float 'x'",
    "!!int 'x'",
    "!!bool 'maybe'",
    "!!binary 'not base64'",
    "!!timestamp 'x'",
    "!!bool ''",
    "!!int ''",
    "!!int '0b'",
    "2001-02-28T10:00:00Z",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!!python/object/apply:os.system ['true']",
    "&x [*x]",
    "&y {k: *y}",
    "*undefined",
    "[" * 256 + "]" * 256,
    "[" * 257 + "]" * 257,
    "[" * 60_000,
    "{a: " * 300 + "1" + "}" * 300,
    ".inf",
    ".nan",
    "~",
    "|\n  multi\n  line",
    ">-\n  folded",
    '"\\ud800"',
    '"\\x00"',
    '"\\e[31m"',
    "'unterminated",
    "[a, b",
    "{a: 1",
    "- item",
    "a: b: c",
    "\t tab",
    "@reserved",
]
YAML_BLOCKS = [
    LAUGHS,
    "&a {b: *a}",
    "- a\n- b",
    "just text",
    "a: 1\na: 2",
    "? [a, b]\n: c",
    "? {a: 1}\n: c",
    "1: one\n2.5: x\nnull: y\n2020-01-01: z",
    "a:\n" + "".join(" " * i + "- \n" for i in range(300)),
    "a: " + "- " * 2100 + "x",
    "",
    "---\na: 1\n---\nb: 2",
    "%YAML 1.1\n---\na: 1",
]


@dataclass(frozen=True)
class YamlText:
    """Replace the value of one top-level `key:` line of the front matter (or all of it)."""

    at: int
    text: str
    whole: bool = False

    def __repr__(self) -> str:
        return f"YamlText({self.at}, {Raw(self.text)!r}, {self.whole})"

    def apply(self, block: bytes) -> bytes:
        if self.whole:
            return self.text.encode("utf-8")
        lines = block.split(b"\n")
        keys = [i for i, line in enumerate(lines) if re.match(rb"[A-Za-z_][\w-]*:", line)]
        if not keys:
            return block + b"\nx: " + self.text.encode("utf-8")
        index = keys[self.at % len(keys)]
        lines[index] = lines[index].split(b":")[0] + b": " + self.text.encode("utf-8")
        return b"\n".join(lines)


yaml_edits = st.one_of(
    st.builds(YamlText, positions, st.sampled_from(YAML_VALUES)),
    st.builds(YamlText, positions, st.sampled_from(YAML_BLOCKS), st.just(True)),
)


def mutations(count: int) -> st.SearchStrategy[Mutation]:
    """Edits of a seed; YAML text edits only touch Markdown front matter."""
    return st.builds(
        Mutation,
        st.integers(0, count - 1),
        st.lists(st.one_of(tree_edits, yaml_edits), max_size=4).map(tuple),
        st.lists(byte_edits, max_size=3).map(tuple),
        st.sampled_from([2, None, 0, 4]),
        st.booleans(),
    )


_FRONT = re.compile(rb"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?(?:\n|\Z)", re.DOTALL)


def mutate(data: bytes, case: Mutation, *, markdown: bool = False) -> bytes:
    """Apply the case's edits: tree edits (when the seed parses), then byte edits."""
    if case.edits:
        data = (_mutate_markdown if markdown else _mutate_json)(data, case)
    for edit in case.bytes_edits:
        data = edit.apply(data)
    return data


def _mutate_json(data: bytes, case: Mutation) -> bytes:
    try:
        holder = [load_tree(data.decode("utf-8-sig"))]
    except (ValueError, RecursionError):
        return data  # not strict JSON (comments, already broken): byte edits only
    for edit in case.edits:
        if not isinstance(edit, YamlText):
            edit.apply(holder)
    text = dump(holder[0], case.indent, case.ascii_only)
    return text.encode("utf-8", "surrogatepass")


def _mutate_markdown(data: bytes, case: Mutation) -> bytes:
    """Tree edits on the parsed front matter (when PyYAML reads it), then YAML text edits."""
    match = _FRONT.match(data)
    if match is None:
        return data
    block = match.group(1)
    edits = [edit for edit in case.edits if not isinstance(edit, YamlText)]
    if edits and not (b"&" in block and b"*" in block):  # aliases: expanding may never end
        try:
            meta = yaml.safe_load(block.decode("utf-8"))
            holder = [to_tree(json.loads(json.dumps(meta, default=str)))]
            for edit in edits:
                edit.apply(holder)
            text = yaml.safe_dump(
                to_plain(holder[0]),
                default_flow_style=None if case.indent is None else False,
                allow_unicode=not case.ascii_only,
                sort_keys=False,
            )
            block = text.encode("utf-8", "surrogatepass").removesuffix(b"\n")
        except Exception:  # whatever PyYAML raises on a block already mutated: edit its text
            pass
    for edit in case.edits:
        if isinstance(edit, YamlText):
            block = edit.apply(block)
    return b"---\n" + block + b"\n---\n" + data[match.end() :]


# ---------------------------------------------------------------------------------------------
# Documents generated from plugman's JSON Schemas

MAX_GENERATED_DEPTH = 7


def _hex(rnd: random.Random, count: int) -> str:
    return "".join(rnd.choice("0123456789abcdef") for _ in range(count))


PATTERN_VALUES: dict[str, Callable[[random.Random], str]] = {
    "^[A-Fa-f0-9]{64}$": lambda rnd: _hex(rnd, 64),
    "^sha256:[a-f0-9]{64}$": lambda rnd: "sha256:" + _hex(rnd, 64),
    "^[a-f0-9]{40}$": lambda rnd: _hex(rnd, 40),
    "^[^@]+@[^@]+$": lambda rnd: rnd.choice(NAMES) + "@" + rnd.choice(NAMES),
    "^[A-Za-z_][A-Za-z0-9_]*$": lambda rnd: rnd.choice(["API_KEY", "_x", "HOME", "a1"]),
    "^(always|on-skill-invoke:.+)$": lambda rnd: rnd.choice(["always", "on-skill-invoke:s"]),
}


def random_text(rnd: random.Random) -> str:
    """A short string: mostly ASCII, sometimes any code point (surrogates included)."""
    wide = rnd.random() < 0.3
    top = 0x10FFFF if wide else 0x7E
    return "".join(chr(rnd.randint(0 if wide else 0x20, top)) for _ in range(rnd.randint(0, 10)))


def random_value(rnd: random.Random, depth: int = 0) -> Any:
    """Any JSON value (and some raw tokens that are not JSON)."""
    roll = rnd.random()
    if depth > 2 or roll < 0.6:
        pick = rnd.randrange(5)
        if pick == 0:
            return rnd.choice(SCALARS)
        if pick == 1:
            return rnd.choice(RAWS)
        if pick == 2:
            return rnd.choice([rnd.randint(-(2**70), 2**70), rnd.uniform(-1e6, 1e6)])
        if pick == 3:
            return rnd.choice(STRINGS)
        return random_text(rnd)
    if roll < 0.8:
        return [random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return Obj([random_key(rnd), random_value(rnd, depth + 1)] for _ in range(rnd.randint(0, 3)))


def random_key(rnd: random.Random) -> str:
    roll = rnd.random()
    return (
        rnd.choice(KEYS) if roll < 0.6 else rnd.choice(ODD_KEYS) if roll < 0.8 else random_text(rnd)
    )


def generate(ref: str, rnd: random.Random) -> Any:
    """A document for the schema at `ref`: valid in most places, off-schema in a few."""
    node, base = schemas.resolve(ref, ref.partition("#")[0])
    return _generate(rnd, node, base, 0)


def _generate(rnd: random.Random, node: dict[str, Any], base: str, depth: int) -> Any:
    if depth > MAX_GENERATED_DEPTH or rnd.random() < 0.04:
        return random_value(rnd)
    if "$ref" in node:
        node, base = schemas.resolve(node["$ref"], base)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return rnd.choice(node["enum"])
    if node.get("examples") and rnd.random() < 0.25:
        return to_tree(rnd.choice(node["examples"]))
    for keyword in ("oneOf", "anyOf"):
        if keyword in node:
            return _generate(rnd, rnd.choice(node[keyword]), base, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = rnd.choice(kind)
    if kind is None:
        kind = "object" if "properties" in node else "array" if "items" in node else None
    if kind == "object":
        return _object(rnd, node, base, depth)
    if kind == "array":
        least = node.get("minItems", 0)
        items = node.get("items", {})
        return [
            _generate(rnd, items, base, depth + 1) for _ in range(rnd.randint(least, least + 3))
        ]
    if kind == "string":
        pattern = PATTERN_VALUES.get(node.get("pattern", ""))
        if pattern and rnd.random() < 0.7:
            return pattern(rnd)
        return rnd.choice(STRINGS) if rnd.random() < 0.7 else random_text(rnd)
    if kind == "integer":
        return rnd.choice([0, 1, 5, 30, 1000, 86400000, -1, rnd.randint(-(2**40), 2**40)])
    if kind == "number":
        return rnd.choice([0, 0.5, 30, 1e300, rnd.uniform(-1e3, 1e5)])
    if kind == "boolean":
        return rnd.random() < 0.5
    if kind == "null":
        return None
    return random_value(rnd)


def _object(rnd: random.Random, node: dict[str, Any], base: str, depth: int) -> Obj:
    properties: dict[str, Any] = node.get("properties", {})
    required = set(node.get("required", ()))
    result = Obj()
    for key, sub in properties.items():
        wanted = rnd.random() > 0.03 if key in required else rnd.random() < 0.35
        if wanted:
            result.append([key, _generate(rnd, sub, base, depth + 1)])
    extra = node.get("additionalProperties", True)
    if isinstance(extra, dict):
        for _ in range(rnd.randint(0, 3)):
            name = rnd.choice(NAMES[:4]) if rnd.random() < 0.8 else random_key(rnd)
            result.append([name, _generate(rnd, extra, base, depth + 1)])
    elif rnd.random() < 0.1:
        result.append([random_key(rnd), random_value(rnd)])
    if rnd.random() < 0.2:
        rnd.shuffle(result)
    return result


seed_numbers = st.integers(min_value=0, max_value=2**32 - 1)


def generated_json(ref: str) -> st.SearchStrategy[bytes]:
    """JSON text of a generated document (from a seed), sometimes with byte edits on top."""

    def render(seed: int, edits: list[ByteEdit], indent: int | None) -> bytes:
        text = dump(generate(ref, random.Random(seed)), indent)
        return _apply_bytes(text.encode("utf-8", "surrogatepass"), edits)

    return st.builds(
        render, seed_numbers, st.lists(byte_edits, max_size=1), st.sampled_from([2, None])
    )


def generated_front_matter() -> st.SearchStrategy[bytes]:
    """A Markdown file whose front matter is generated from skill.schema.json (from a seed)."""

    def render(seed: int, flow: bool, edits: list[ByteEdit]) -> bytes:
        tree = to_plain(generate("skill.schema.json", random.Random(seed)))
        try:
            block = yaml.safe_dump(tree, default_flow_style=flow, allow_unicode=True)
        except (yaml.YAMLError, UnicodeEncodeError):
            block = json.dumps(tree)  # JSON is YAML too
        text = "---\n" + block + "---\nbody\n"
        return _apply_bytes(text.encode("utf-8", "surrogatepass"), edits)

    return st.builds(render, seed_numbers, st.booleans(), st.lists(byte_edits, max_size=1))


def _apply_bytes(data: bytes, edits: list[ByteEdit]) -> bytes:
    for edit in edits:
        data = edit.apply(data)
    return data
