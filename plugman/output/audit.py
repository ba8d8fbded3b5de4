"""`plugman audit` results: text, JSON, SARIF 2.1.0 and GitHub Actions workflow commands.

Each finding says what is wrong and what fixes it. SARIF gives every check a rule (its id and
what it checks) and every finding a result at level `error`, located in the file it is about:
relative to the project root (`uriBaseId` PROJECTROOT, which the run's `originalUriBaseIds`
sets) when the file is in the project, else an absolute `file:` URI. GitHub's lines are
`::error file=…,line=…,title=…::message`, closed by one `::notice` with the count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugman import __version__
from plugman.output.common import display_path, envelope
from plugman.output.findings import FORMATS, _escape

if TYPE_CHECKING:
    from plugman.doctor.audit import Audit, Finding

__all__ = ["FORMATS", "audited"]  # the formats are validate's
ROOT = "PROJECTROOT"


def audited(result: Audit, fmt: str) -> str:
    """The audit in `fmt` (one of FORMATS)."""
    return {"text": _text, "json": _json, "sarif": _sarif, "github": _github}[fmt](result)


def _in_project(result: Audit, file: str) -> str | None:
    """`file` relative to the project root (POSIX), or None when it is outside."""
    try:
        return Path(file).relative_to(result.project).as_posix()
    except ValueError:
        return None


def _summary(result: Audit) -> str:
    scopes = ", ".join(result.scopes)
    if not result.findings:
        checks = ", ".join(c.id for c in result.checks)
        return f"audit: clean ({checks}; {scopes} scope{'s' * (len(result.scopes) > 1)})"
    counts = {c.id: sum(f.check == c.id for f in result.findings) for c in result.checks}
    each = ", ".join(f"{check} {n}" for check, n in counts.items() if n)
    total = len(result.findings)
    return f"audit: {total} finding{'s' * (total != 1)} ({each}); exit 1"


def _text(result: Audit) -> str:
    lines = []
    for f in result.findings:
        where = (_in_project(result, f.file) or display_path(f.file)) + (
            f":{f.line}" if f.line else ""
        )
        lines += [f"{where}: error [{f.check}] {f.message}", f"  fix: {f.fix}"]
    return "\n".join([*lines, _summary(result)])


def _as_dict(result: Audit, f: Finding) -> dict[str, Any]:
    return {
        "check": f.check,
        "level": "error",
        "message": f.message,
        "fix": f.fix,
        "file": _in_project(result, f.file) or f.file,
        "line": f.line,
    }


def _json(result: Audit) -> str:
    return envelope(
        "audit",
        ok=not result.findings,
        project=str(result.project),
        scopes=list(result.scopes),
        checks=[{"id": c.id, "title": c.title} for c in result.checks],
        summary={c.id: sum(f.check == c.id for f in result.findings) for c in result.checks},
        findings=[_as_dict(result, f) for f in result.findings],
    )


def _location(result: Audit, f: Finding) -> dict[str, Any]:
    inside = _in_project(result, f.file)
    artifact = (
        {"uri": inside, "uriBaseId": ROOT}
        if inside is not None
        else {"uri": Path(f.file).absolute().as_uri()}
    )
    location: dict[str, Any] = {"artifactLocation": artifact}
    if f.line:
        location["region"] = {"startLine": f.line}
    return {"physicalLocation": location}


def _sarif(result: Audit) -> str:
    index = {c.id: n for n, c in enumerate(result.checks)}
    results = [
        {
            "ruleId": f.check,
            "ruleIndex": index[f.check],
            "level": "error",
            "message": {"text": f"{f.message}. To fix: {f.fix}"},
            "locations": [_location(result, f)],
        }
        for f in result.findings
    ]
    driver = {
        "name": "plugman",
        "version": __version__,
        "informationUri": "https://plugman.dev",
        "rules": [
            {
                "id": c.id,
                "shortDescription": {"text": c.title},
                "defaultConfiguration": {"level": "error"},
            }
            for c in result.checks
        ],
    }
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {ROOT: {"uri": result.project.as_uri() + "/"}},
        "results": results,
    }
    return json.dumps(
        {
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [run],
        },
        indent=2,
    )


def _github(result: Audit) -> str:
    lines = []
    for f in result.findings:
        props = [f"file={_escape(_in_project(result, f.file) or f.file, prop=True)}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape('plugman audit ' + f.check, prop=True)}")
        lines.append(f"::error {','.join(props)}::{_escape(f'{f.message} (fix: {f.fix})')}")
    title = _escape("plugman audit", prop=True)
    lines.append(f"::notice title={title}::{_escape(_summary(result))}")
    return "\n".join(lines)
