"""The broken fixtures in sample-plugins/invalid/: each triggers its rule, and together they
cover every rule code plugman can emit.

Each fixture folder holds an `expected.json`:
`{"description", "target", "strict", "exit", "issues": [{"severity", "code", "path", "line"?}]}`.
The CLI runs in-process (`plugman validate TARGET --format json [--strict]`); every expected
issue must be among the reported diagnostics, and the exit code must match.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from plugman.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "sample-plugins" / "invalid"
SOURCE = REPO_ROOT / "plugman"
SCHEMAS = SOURCE / "manifest" / "schemas"

# How plugman emits a rule code: `sink.error("code", …)` / `sink.warning("code", …)` (also
# split over lines), `Problem(SEVERITY, "code", …)`, `Finding(severity, "code", …)` and
# `sink.add(ERROR, "code", …)`.
CODE_PATTERNS = (
    re.compile(r'\.(?:error|warning)\(\s*"([a-z][a-z0-9-]*)"'),
    re.compile(r'\b(?:Problem|Finding)\(\s*[\w.]+,\s*"([a-z][a-z0-9-]*)"'),
    re.compile(r'\.add\(\s*(?:ERROR|WARNING|severity|problem\.severity),\s*"([a-z][a-z0-9-]*)"'),
)

# Codes that no file on disk can produce through `plugman validate`.
UNREACHABLE = {
    # reader.read_text: needs an OSError while reading an existing regular file (permissions,
    # a file removed mid-run). Git cannot store an unreadable file, root reads anything, and
    # directories, dangling links and missing paths are filtered out (is_file / exists) or
    # reported as missing-file / a usage error before the file is read.
    "unreadable",
    # reader.read_text: needs a file over MAX_FILE_BYTES (8 MiB); too large to commit.
    "file-too-large",
    # plugin.load: validate only loads a folder as a plugin when it has a manifest or a
    # component folder (or through a marketplace entry, which skips this check); any other
    # folder is a usage error (exit 2) before plugin.load runs, and a plugin.json passed
    # directly is its own manifest.
    "not-a-plugin",
    # schema._check_value: every `const` in the schemas is the discriminator of a oneOf
    # branch, and schema._best_branch reports a failed discriminator as schema-enum
    # (see test_unreachable_schema_codes_stay_unreachable).
    "schema-const",
    # schema._check_array: no schema used by validate has minItems/maxItems or uniqueItems
    # (checked by test_unreachable_schema_codes_stay_unreachable).
    "schema-items",
    "schema-unique",
    # manifest.tomlloc.refused: the located errors of plugman.lock, plugman.toml and the
    # project's .claude/settings.json where sync and lock read them, files validate never
    # reads (tests/attacks/test_lock_files.py covers each).
    "invalid-input",
}


def _fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if (p / "expected.json").is_file())


def _expected(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return data


def _run(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    expected = _expected(folder)
    args = ["validate", str(folder / expected["target"]), "--format", "json"]
    if expected["strict"]:
        args.append("--strict")
    code = main(args)
    out = capsys.readouterr().out
    diagnostics: list[dict[str, Any]] = json.loads(out)["diagnostics"]
    return code, diagnostics


def _matches(issue: dict[str, Any], diagnostic: dict[str, Any]) -> bool:
    keys = ["severity", "code", "path"] + (["line"] if "line" in issue else [])
    return all(diagnostic[key] == issue[key] for key in keys)


@pytest.mark.parametrize("folder", _fixtures(), ids=lambda p: p.name)
def test_fixture(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _expected(folder)
    assert expected["description"].strip()
    assert expected["issues"], "a fixture must expect at least one issue"
    code, diagnostics = _run(folder, capsys)
    missing = [i for i in expected["issues"] if not any(_matches(i, d) for d in diagnostics)]
    reported = [
        {k: d[k] for k in ("severity", "code", "path", "line", "file", "message")}
        for d in diagnostics
    ]
    assert not missing, f"not reported: {missing}\nreported: {json.dumps(reported, indent=1)}"
    assert code == expected["exit"], f"reported: {json.dumps(reported, indent=1)}"


# The modules `plugman validate` runs (other commands report through the same sinks, but their
# codes are not validation rules).
VALIDATION = ("manifest/*.py",)  # validate, schema, jsonloc and diagnostics live there too


def _emitted_codes() -> set[str]:
    codes: set[str] = set()
    for file in (path for pattern in VALIDATION for path in SOURCE.glob(pattern)):
        text = file.read_text(encoding="utf-8")
        for pattern in CODE_PATTERNS:
            codes.update(pattern.findall(text))
    return codes


def test_fixtures_cover_every_rule() -> None:
    emitted = _emitted_codes()
    # Guard the patterns themselves: one code from each kind of call site.
    assert {"json-syntax", "json-comment", "schema-type", "unknown-key", "path-escape"} <= emitted
    assert emitted >= UNREACHABLE, f"stale allow-list entries: {UNREACHABLE - emitted}"
    covered = {issue["code"] for f in _fixtures() for issue in _expected(f)["issues"]}
    uncovered = emitted - UNREACHABLE - covered
    assert not uncovered, f"rule codes with no fixture in {FIXTURES}: {sorted(uncovered)}"
    unknown = covered - emitted
    assert not unknown, f"fixtures expect codes plugman never emits: {sorted(unknown)}"


def _validated_schemas() -> dict[str, dict[str, Any]]:
    """The schema files validate uses (those named in the manifest loaders), by file name."""
    names: set[str] = set()
    for file in (SOURCE / "manifest").glob("*.py"):
        names.update(re.findall(r'"([\w-]+\.schema\.json)', file.read_text(encoding="utf-8")))
    assert names
    return {name: json.loads((SCHEMAS / name).read_text(encoding="utf-8")) for name in names}


_NOT_SCHEMAS = ("const", "enum", "examples", "default")


def _refs(file: str, node: Any, branch: bool, out: dict[tuple[str, str], list[bool]]) -> None:
    """For each `$defs` entry, whether each `$ref` to it is written as a oneOf/anyOf branch."""
    if isinstance(node, list):
        for item in node:
            _refs(file, item, False, out)
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and "#/$defs/" in ref:
        target, _, name = ref.partition("#/$defs/")
        out.setdefault((target or file, name), []).append(branch)
    for key, value in node.items():
        if key in ("oneOf", "anyOf") and isinstance(value, list):
            for item in value:
                _refs(file, item, True, out)
        elif key not in _NOT_SCHEMAS:
            _refs(file, value, False, out)


def _loose_consts(
    file: str,
    node: Any,
    where: str,
    is_branch: bool,
    const_ok: bool,
    refs: dict[tuple[str, str], list[bool]],
) -> list[str]:
    """Where a failing `const` would be reported as schema-const (not a branch discriminator)."""
    if isinstance(node, list):
        return [p for item in node for p in _loose_consts(file, item, where, False, False, refs)]
    if not isinstance(node, dict):
        return []
    found = [where] if "const" in node and not const_ok else []
    for key, value in node.items():
        here = f"{where}/{key}"
        if key in ("oneOf", "anyOf") and isinstance(value, list):
            for i, item in enumerate(value):
                found += _loose_consts(file, item, f"{here}/{i}", True, True, refs)
        elif key in ("properties", "$defs") and isinstance(value, dict):
            for name, sub in value.items():
                # a direct property of a branch is its discriminator; a $defs entry is a
                # branch when every $ref to it is one
                branch = all(refs.get((file, name), [])) if key == "$defs" else False
                ok = branch if key == "$defs" else is_branch
                found += _loose_consts(file, sub, f"{here}/{name}", branch, ok, refs)
        elif key not in _NOT_SCHEMAS:
            found += _loose_consts(file, value, here, False, False, refs)
    return found


def test_unreachable_schema_codes_stay_unreachable() -> None:
    schemas = _validated_schemas()
    text = json.dumps(schemas)
    for keyword in ("minItems", "maxItems", "uniqueItems"):
        assert f'"{keyword}"' not in text, (
            f"a schema now uses {keyword}: add a fixture and drop its code from UNREACHABLE"
        )
    refs: dict[tuple[str, str], list[bool]] = {}
    for file, schema in schemas.items():
        _refs(file, schema, False, refs)
    loose = [p for f, s in schemas.items() for p in _loose_consts(f, s, f, False, False, refs)]
    assert not loose, f"consts outside oneOf discriminators can emit schema-const: {loose}"


# The README's tables, checked against the fixtures and the real validator rather than kept by
# hand: `| [`folder`](folder/) (target `t`) | `code` | severity | description |`.
README = FIXTURES / "README.md"
ROW = re.compile(
    r"^\| \[`(?P<folder>[\w-]+)`\]\((?P=folder)/\)(?: \(target `(?P<target>[^`]+)`\))? "
    r"\| `(?P<code>[a-z0-9-]+)` \| (?P<severity>error|warning) \| (?P<what>.+) \|$"
)


def _readme_rows() -> dict[str, re.Match[str]]:
    rows: dict[str, re.Match[str]] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        if (row := ROW.match(line)) is not None:
            assert row["folder"] not in rows, f"{row['folder']} is in the README table twice"
            rows[row["folder"]] = row
    return rows


def test_readme_table_lists_every_fixture() -> None:
    listed = set(_readme_rows())
    folders = {f.name for f in _fixtures()}
    assert folders, FIXTURES
    assert not folders - listed, f"fixtures missing from {README.name}'s table: {folders - listed}"
    assert not listed - folders, (
        f"{README.name} lists fixtures that do not exist: {listed - folders}"
    )


@pytest.mark.parametrize("folder", _fixtures(), ids=lambda p: p.name)
def test_readme_row_is_what_validate_reports(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = _readme_rows().get(folder.name)
    assert row is not None, f"{folder.name} has no row in {README}"
    expected = _expected(folder)
    assert (row["target"] or ".") == expected["target"]
    assert row["what"] == expected["description"]
    # Without --strict, so a warning is reported as one.
    main(["validate", str(folder / expected["target"]), "--format", "json"])
    reported = {
        (d["code"], d["severity"]) for d in json.loads(capsys.readouterr().out)["diagnostics"]
    }
    assert (row["code"], row["severity"]) in reported, f"validate reported {sorted(reported)}"


def test_readme_lists_the_unreachable_codes() -> None:
    text = README.read_text(encoding="utf-8").partition("## Codes without a fixture")[2]
    listed = set(re.findall(r"^\| ((?:`[a-z-]+`(?:, )?)+) \|", text, re.M))
    codes = {code for cell in listed for code in re.findall(r"`([a-z-]+)`", cell)}
    assert codes == UNREACHABLE
