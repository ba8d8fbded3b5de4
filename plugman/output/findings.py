"""Validation results: text, JSON, SARIF 2.1.0 and GitHub workflow annotations."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from plugman import __version__
from plugman.output.common import display_path, envelope

if TYPE_CHECKING:
    from plugman.manifest.diagnostics import Diagnostic
    from plugman.manifest.validate import Validation

FORMATS = ("text", "json", "sarif", "github")


def validation(result: Validation, fmt: str) -> str:
    return {"text": _text, "json": _json, "sarif": _sarif, "github": _github}[fmt](result)


def _where(d: Diagnostic) -> str:
    location = display_path(d.file)
    if d.line is not None:
        location += f":{d.line}:{d.column or 1}"
    return location


def _text(result: Validation) -> str:
    lines = []
    for d in result.diagnostics:
        at = f" {d.path}:" if d.path else ""
        lines.append(f"{_where(d)}: {d.severity} [{d.code}]{at} {d.message}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    files = len(result.files)
    summary = f"{files} file{'s' * (files != 1)} checked: "
    summary += f"{result.errors} error{'s' * (result.errors != 1)}, "
    summary += f"{result.warnings} warning{'s' * (result.warnings != 1)}"
    lines.append(summary)
    return "\n".join(lines)


def _as_dict(d: Diagnostic) -> dict[str, Any]:
    return {**d._asdict(), "file": display_path(d.file)}


def _json(result: Validation) -> str:
    return envelope(
        "validate",
        ok=result.errors == 0,
        summary={"files": len(result.files), "errors": result.errors, "warnings": result.warnings},
        files=[display_path(f) for f in result.files],
        diagnostics=[_as_dict(d) for d in result.diagnostics],
    )


def _sarif(result: Validation) -> str:
    rules = sorted({d.code for d in result.diagnostics})
    results = []
    for d in result.diagnostics:
        region = {"startLine": d.line, "startColumn": d.column or 1} if d.line else {}
        text = f"{d.path}: {d.message}" if d.path else d.message
        location: dict[str, Any] = {"artifactLocation": {"uri": display_path(d.file)}}
        if region:
            location["region"] = region
        results.append(
            {
                "ruleId": d.code,
                "level": d.severity,
                "message": {"text": text + (f" ({d.hint})" if d.hint else "")},
                "locations": [{"physicalLocation": location}],
            }
        )
    driver = {
        "name": "plugman",
        "version": __version__,
        "informationUri": "https://plugman.dev",
        "rules": [{"id": rule} for rule in rules],
    }
    return json.dumps(
        {
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": results}],
        },
        indent=2,
    )


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _github(result: Validation) -> str:
    lines = []
    for d in result.diagnostics:
        props = [f"file={_escape(display_path(d.file), prop=True)}"]
        if d.line:
            props += [f"line={d.line}", f"col={d.column or 1}"]
        props.append(f"title={_escape('plugman ' + d.code, prop=True)}")
        text = f"{d.path}: {d.message}" if d.path else d.message
        if d.hint:
            text += f" (hint: {d.hint})"
        lines.append(f"::{d.severity} {','.join(props)}::{_escape(text)}")
    lines.append(
        f"plugman: {result.errors} error(s), {result.warnings} warning(s) in "
        f"{len(result.files)} file(s)"
    )
    return "\n".join(lines)
