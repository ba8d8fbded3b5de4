from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample-plugins"
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test runs with its own PLUGMAN_HOME and managed folder: nothing real is touched."""
    home = tmp_path_factory.mktemp("plugman-home")
    monkeypatch.setenv("PLUGMAN_HOME", str(home))
    monkeypatch.setenv("PLUGMAN_MANAGED_DIR", str(home / "managed"))
    return home


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the figures tests record with `record_property("summary", text)` (also under xdist)."""
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "summary" and getattr(report, "when", "") == "call":
                    terminalreporter.write_line(str(value))
