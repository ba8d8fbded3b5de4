"""The emoji and symbols real plugins write raise no hidden-text finding (the scan's classes,
plugman.manifest.hidden, kept clean over real text: tests/corpus/symbols)."""

from __future__ import annotations

from pathlib import Path

from plugman.extensions import source_locations
from plugman.manifest.hidden import scan
from plugman.manifest.validate import validate

SYMBOLS = Path(__file__).resolve().parents[1] / "corpus" / "symbols"
FILES = sorted(p for p in SYMBOLS.rglob("*") if p.is_file() and p.name != "README.md")


def test_the_copy_is_there() -> None:
    assert len(FILES) > 150
    text = "".join(p.read_text(encoding="utf-8") for p in FILES)
    assert "\ufe0f" in text  # emoji with their presentation selector, as real skills write them


def test_no_finding_in_real_text() -> None:
    found = {
        str(p.relative_to(SYMBOLS)): scan(p.read_text(encoding="utf-8"), p.suffix == ".json")
        for p in FILES
    }
    assert {name: f for name, f in found.items() if f} == {}


def test_validate_reports_no_hidden_text() -> None:
    known = [p for p in FILES if p.name in ("SKILL.md", "plugin.json", "marketplace.json")]
    assert len(known) > 100
    result = validate(known, source_keys=source_locations)
    codes = {d.code for d in result.diagnostics}
    assert not codes & {"hidden-text", "invisible-text"}
