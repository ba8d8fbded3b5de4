"""plugman's schema engine agrees with the reference implementation (jsonschema).

The schemas in plugman/manifest/schemas/ are the single source of truth; validation runs them
through plugman.manifest.schema for speed. These tests hold the engine to jsonschema's verdicts on
the real corpus and on many mutations of it.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugman.manifest import schema
from plugman.manifest.diagnostics import ERROR
from tests.conftest import CORPUS, examples

KINDS = {
    "plugin.json": "plugin.schema.json",
    "marketplace.json": "marketplace.schema.json",
    "hooks.json": "hooks.schema.json",
    "gemini-extension.json": "gemini-extension.schema.json",
}


@cache
def registry() -> referencing.Registry[Any]:
    resources = []
    for file in schema.SCHEMA_DIR.glob("*.schema.json"):
        contents = json.loads(file.read_text())
        resources.append((contents["$id"], referencing.Resource.from_contents(contents)))
    return referencing.Registry().with_resources(resources)


def reference_errors(value: Any, name: str) -> set[tuple[Any, ...]]:
    """Instance paths jsonschema reports as errors (unknown keys and warning-only parts aside)."""
    root = schema.load(name)
    validator = jsonschema.Draft202012Validator(root, registry=registry())
    found = set()
    for error in validator.iter_errors(value):
        found |= _leaf_paths(error, name)
    return found


def _leaf_paths(error: jsonschema.ValidationError, name: str) -> set[tuple[Any, ...]]:
    if _tolerated(error, name):
        return set()
    return {tuple(error.absolute_path)}


def _tolerated(error: jsonschema.ValidationError, name: str) -> bool:
    """Only a warning for plugman: an unknown key, a warning-only part, or a branch that fits
    but for those (plugman reads `additionalProperties: false` as a warning)."""
    if error.validator == "additionalProperties" or _warning_only(error, name):
        return True
    if error.validator in ("oneOf", "anyOf"):
        branches: dict[Any, list[jsonschema.ValidationError]] = {
            index: [] for index in range(len(error.validator_value))
        }
        for sub in error.context or []:
            branches[sub.relative_schema_path[0]].append(sub)
        return any(all(_tolerated(sub, name) for sub in subs) for subs in branches.values())
    return False


def _warning_only(error: jsonschema.ValidationError, base: str) -> bool:
    """The error lies under an `x-plugman-severity: warning` subschema (following `$ref`s)."""
    node: Any = schema.load(base)
    for step in error.absolute_schema_path:  # jsonschema leaves `$ref` steps out of this path
        while isinstance(node, dict) and step not in node and "$ref" in node:
            node, base = schema.resolve(node["$ref"], base)
        if isinstance(node, dict) and node.get("x-plugman-severity") == "warning":
            return True
        node = node[step]
    return isinstance(node, dict) and node.get("x-plugman-severity") == "warning"


def engine_errors(value: Any, name: str) -> set[tuple[Any, ...]]:
    findings = schema.check(value, schema.load(name), name, ())
    return {tuple(f.path) for f in findings if f.severity == ERROR}


def corpus_documents() -> list[tuple[Path, str]]:
    docs = []
    for folder, _dirs, files in os.walk(CORPUS):
        for file in files:
            if file in KINDS:
                docs.append((Path(folder) / file, KINDS[file]))
    return sorted(docs)


def load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def test_corpus_is_there() -> None:
    assert len(corpus_documents()) > 200, f"the corpus is missing at {CORPUS}"


def test_verdicts_agree_on_the_corpus() -> None:
    compared = 0
    for path, name in corpus_documents():
        value = load_json(path)
        if value is None:
            continue
        ours, theirs = engine_errors(value, name), reference_errors(value, name)
        assert bool(ours) == bool(theirs), (path, ours, theirs)
        compared += 1
    assert compared > 200


@cache
def corpus_values() -> list[tuple[Any, str]]:
    found = [(load_json(path), name) for path, name in corpus_documents()]
    return [(value, name) for value, name in found if isinstance(value, dict)][:150]


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_of(item, (*prefix, index))
    return found


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = new
    return copy


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5000)
    | st.text(max_size=5)
    | st.sampled_from(["stdio", "http", "command", "github", "./x", "", "PreToolUse", "url"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(
            st.sampled_from(["name", "type", "source", "hooks", "command", "url", "x"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=5,
)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_verdicts_agree_on_mutations(data: st.DataObject) -> None:
    value, name = data.draw(st.sampled_from(corpus_values()))
    path = data.draw(st.sampled_from(paths_of(value)))
    mutated = replaced(value, path, data.draw(VALUES))
    ours, theirs = engine_errors(mutated, name), reference_errors(mutated, name)
    assert bool(ours) == bool(theirs), (path, ours, theirs)
    # every error we report lies at or under a location the reference implementation reports
    for found in ours:
        assert any(found[: len(ref)] == ref for ref in theirs), (found, theirs)


@pytest.mark.parametrize("name", sorted(p.name for p in schema.SCHEMA_DIR.glob("*.schema.json")))
def test_every_schema_loads_and_refs_resolve(name: str) -> None:
    assert schema.load(name)["$id"].endswith("/" + name)
