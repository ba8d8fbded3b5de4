"""Validate data against plugman's published JSON Schemas (the ones in `plugman/manifest/schemas/`).

The schemas are the single source of truth for the shape of every file. This is a small engine
for the draft 2020-12 subset those schemas use, so validation costs no heavy import and reports
*every* problem with its key path. `tests/unit/test_schema_engine.py` checks it agrees with the
`jsonschema` reference implementation. An unknown key (`additionalProperties: false`) is a
warning, as the ecosystem is tolerant; anything under `"x-plugman-severity": "warning"` too.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, NamedTuple

from plugman.manifest.diagnostics import ERROR, WARNING, KeyPath, Sink
from plugman.manifest.schema_files import SCHEMA_DIR as SCHEMA_DIR
from plugman.manifest.schema_files import Schema as Schema
from plugman.manifest.schema_files import load as load
from plugman.manifest.schema_files import resolve as resolve

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


# Every keyword `_check` reads besides `type`: a schema with none of them is a leaf, which only
# a value of another type fails.
CHECKED = frozenset(
    {
        "$ref",
        "x-plugman-severity",
        "const",
        "enum",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "required",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "minItems",
        "maxItems",
        "uniqueItems",
        "items",
        "anyOf",
        "oneOf",
    }
)


class Finding(NamedTuple):
    severity: str
    code: str
    message: str
    path: KeyPath
    hint: str | None = None


def validate(value: Any, ref: str, sink: Sink, path: KeyPath = ()) -> None:
    """Check `value` against the schema at `ref` and report every finding into `sink`."""
    schema, base = resolve(ref, ref.partition("#")[0])
    for finding in check(value, schema, base, path):
        sink.add(finding.severity, finding.code, finding.message, finding.path, finding.hint)


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "integer" if isinstance(value, int) else "number"
    return "null"


def is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return name == "boolean"
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[name])


def check(
    value: Any, schema: Schema, base: str, path: KeyPath, severity: str = ERROR
) -> list[Finding]:
    """Every finding for `value` against `schema` (located under `path`)."""
    out: list[Finding] = []
    _check(value, schema, base, path, severity, out)
    return out


def _check(
    value: Any, schema: Schema, base: str, path: KeyPath, severity: str, out: list[Finding]
) -> None:
    """`check`, its findings added to `out` (no list per value)."""
    if CHECKED.isdisjoint(schema):  # a leaf: nothing but its type can give a finding
        expected = schema.get("type")
        if expected is None or (isinstance(expected, str) and is_type(value, expected)):
            return
    severity = WARNING if schema.get("x-plugman-severity") == WARNING else severity
    if "$ref" in schema:
        target, target_base = resolve(schema["$ref"], base)
        _check(value, target, target_base, path, severity, out)
    if not _check_type(value, schema, path, severity, out):
        return
    _check_value(value, schema, path, severity, out)
    if isinstance(value, dict):
        _check_object(value, schema, base, path, severity, out)
    elif isinstance(value, list):
        _check_array(value, schema, base, path, severity, out)
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            out.extend(_best_branch(value, schema[keyword], base, path, severity))


def _check_type(
    value: Any, schema: Schema, path: KeyPath, severity: str, out: list[Finding]
) -> bool:
    expected = schema.get("type")
    if expected is None:
        return True
    if isinstance(expected, str):
        if is_type(value, expected):
            return True
        names = [expected]
    elif any(is_type(value, name) for name in expected):
        return True
    else:
        names = expected
    wanted = " or ".join(names)
    message = f"expected {wanted}, got {type_name(value)}"
    out.append(Finding(severity, "schema-type", message, path, _hint(schema)))
    return False


def _hint(schema: Schema) -> str | None:
    text = schema.get("description")
    return text if isinstance(text, str) else None


def _check_value(
    value: Any, schema: Schema, path: KeyPath, severity: str, out: list[Finding]
) -> None:
    if "const" in schema and value != schema["const"]:
        out.append(Finding(severity, "schema-const", f"must be {schema['const']!r}", path))
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(choice) for choice in schema["enum"])
        out.append(Finding(severity, "schema-enum", f"{value!r} is not one of {choices}", path))
    if isinstance(value, str):
        _check_string(value, schema, path, severity, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(Finding(severity, "schema-range", f"must be ≥ {schema['minimum']}", path))
        if "maximum" in schema and value > schema["maximum"]:
            out.append(Finding(severity, "schema-range", f"must be ≤ {schema['maximum']}", path))


def _check_string(
    value: str, schema: Schema, path: KeyPath, severity: str, out: list[Finding]
) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        message = "must not be empty" if schema["minLength"] == 1 else "is too short"
        out.append(Finding(severity, "schema-length", message, path))
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        message = f"is {len(value)} characters; at most {schema['maxLength']} are allowed"
        out.append(Finding(severity, "schema-length", message, path))
    if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
        message = f"{value!r} does not match {schema['pattern']}"
        out.append(Finding(severity, "schema-pattern", message, path, _hint(schema)))


@cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _check_object(
    value: dict[str, Any],
    schema: Schema,
    base: str,
    path: KeyPath,
    severity: str,
    out: list[Finding],
) -> None:
    for key in schema.get("required", ()):
        if key not in value:
            message = f"missing required key {key!r}"
            out.append(Finding(severity, "schema-required", message, path, _hint(schema)))
    properties: Schema = schema.get("properties", {})
    patterns: Schema = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    names = schema.get("propertyNames")
    for key, item in value.items():
        where = (*path, key)
        if names is not None:
            _check(key, names, base, where, severity, out)
        matched = (
            [sub for pat, sub in patterns.items() if _pattern(pat).search(key)] if patterns else []
        )
        if key in properties:
            matched.append(properties[key])
        for sub in matched:
            _check(item, sub, base, where, severity, out)
        if matched:
            continue
        if extra is False:
            out.append(
                Finding(
                    WARNING, "unknown-key", f"unknown key {key!r}", where, _suggest(key, properties)
                )
            )
        elif isinstance(extra, dict):
            _check(item, extra, base, where, severity, out)


def _suggest(key: str, properties: Schema) -> str:
    # lazy: difflib is not loaded by `plugman config resolve` (+2 ms)
    from difflib import get_close_matches

    close = get_close_matches(key, list(properties), n=1, cutoff=0.7)
    if close:
        return f"did you mean {close[0]!r}?"
    return "it is ignored; remove it or check the spelling"


def _check_array(
    value: list[Any],
    schema: Schema,
    base: str,
    path: KeyPath,
    severity: str,
    out: list[Finding],
) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        out.append(
            Finding(severity, "schema-items", f"needs at least {schema['minItems']} item(s)", path)
        )
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        out.append(
            Finding(severity, "schema-items", f"allows at most {schema['maxItems']} item(s)", path)
        )
    if schema.get("uniqueItems") and _has_duplicates(value):
        out.append(Finding(severity, "schema-unique", "items must be unique", path))
    if "items" in schema:
        for index, item in enumerate(value):
            _check(item, schema["items"], base, (*path, index), severity, out)


def _has_duplicates(items: list[Any]) -> bool:
    seen = [json.dumps(item, sort_keys=True) for item in items]
    return len(set(seen)) != len(seen)


def _best_branch(
    value: Any, branches: list[Schema], base: str, path: KeyPath, severity: str
) -> list[Finding]:
    """Findings of the branch that fits best; none (beyond warnings) if one fits."""
    results = [
        _mismatch(value, branch, base, path, severity) or check(value, branch, base, path, severity)
        for branch in branches
    ]
    for findings in results:
        if not any(f.severity == ERROR for f in findings):
            return findings
    typed = [f for f in results if not _wrong_type(f, path)]
    if not typed:
        return [_no_branch(value, branches, base, path, severity)]
    fitting = [f for f in typed if not _wrong_kind(f, path)]
    if not fitting:
        return [_no_kind(typed, path, severity)]
    return min(fitting, key=len)


def _mismatch(
    value: Any, branch: Schema, base: str, path: KeyPath, severity: str
) -> list[Finding] | None:
    """The discriminator failure of an object branch (`"type": {"const": ...}` differs), found
    without checking the rest of the branch; None when the branch needs a full check."""
    if "$ref" in branch:
        branch, base = resolve(branch["$ref"], base)
    if not isinstance(value, dict):
        return None
    for key, sub in branch.get("properties", {}).items():
        if not isinstance(sub, dict) or key not in value:
            continue
        if "const" in sub and value[key] != sub["const"]:
            return [Finding(severity, "schema-const", f"must be {sub['const']!r}", (*path, key))]
        named = sub.get("x-plugman-discriminator")  # an open discriminator: any other name
        if named and any(f.severity == ERROR for f in check(value[key], sub, base, path)):
            return [Finding(severity, "schema-const", f"must be {named}", (*path, key))]
    return None


def _wrong_type(findings: list[Finding], path: KeyPath) -> bool:
    return any(f.path == path and f.code == "schema-type" for f in findings)


def _wrong_kind(findings: list[Finding], path: KeyPath) -> bool:
    """The branch's discriminator (a `const` on a direct child, or the value) does not match."""
    return any(f.code == "schema-const" and len(f.path) <= len(path) + 1 for f in findings)


def _no_kind(results: list[list[Finding]], path: KeyPath, severity: str) -> Finding:
    consts = [f for findings in results for f in findings if f.code == "schema-const"]
    where = consts[0].path if consts else path
    allowed = ", ".join(dict.fromkeys(f.message.removeprefix("must be ") for f in consts))
    return Finding(severity, "schema-enum", f"must be one of {allowed}", where)


def _no_branch(
    value: Any, branches: list[Schema], base: str, path: KeyPath, severity: str
) -> Finding:
    kinds: list[str] = []
    for branch in branches:
        if "$ref" in branch:
            branch = resolve(branch["$ref"], base)[0]
        kind = branch.get("type")
        for name in [kind] if isinstance(kind, str) else kind or ():
            if name not in kinds:
                kinds.append(name)
    expected = " or ".join(kinds) if kinds else "one of the allowed forms"
    return Finding(severity, "schema-type", f"expected {expected}, got {type_name(value)}", path)
