from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from plugman.cli import runner
from plugman.cli.runner import Result

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample-plugins"
CORPUS = REPO / "tests" / "corpus" / "manifests"  # real manifests: tests/corpus/README.md
SCHEMAS = REPO / "tests" / "corpus" / "schemas"  # published JSON Schemas of the agents' formats

# Secret values planted in every test's environment, under names plugman treats as secret.
# No command output (unless --show-secrets asked for it) and no log may ever contain them.
PLANTED = {
    "GITHUB_TOKEN": "ghp_plantedCanary1234567890abcdefABCDEF",
    "API_KEY": "sk-planted-canary-0000",
    "DOCS_TOKEN": "planted-docs-token-canary",
}


# Sensitive userConfig values tests give plugins (`--config api_key=...`): besides outputs and
# logs, no file under PLUGMAN_HOME but the secret store's own may hold them.
PLANTED_CONFIG = {"api_key": "uc-planted-sensitive-7f3a9c"}
SECRET_STORE_FILES = ("secrets.json",)
PIN_LOOKUPS = pytest.StashKey[dict[str, "Future[str | None]"]]()

# Hypothesis profiles. `make test` runs the default one: every property its own example count
# (hypothesis' 100, or the `examples(n)` a test asks for). `make test-quick` loads "quick"
# (`--hypothesis-profile=quick`): the inner loop runs each property on a few examples, enough to
# catch a broken property, not to search; the full lane and CI do the searching.
QUICK_EXAMPLES = 20
settings.register_profile("quick", max_examples=QUICK_EXAMPLES)


def examples(full: int) -> int:
    """A property's example count: `full` in the full lane, the quick profile's few in the quick
    lane (an explicit `max_examples` would otherwise override the profile)."""
    return min(full, QUICK_EXAMPLES) if settings.get_current_profile_name() == "quick" else full


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test runs with its own PLUGMAN_HOME and managed folders (plugman's and Claude
    Code's): nothing real is touched."""
    home = tmp_path_factory.mktemp("plugman-home")
    monkeypatch.setenv("PLUGMAN_HOME", str(home))
    monkeypatch.setenv("PLUGMAN_MANAGED_DIR", str(home / "managed"))
    monkeypatch.setenv("PLUGMAN_CLAUDE_MANAGED_DIR", str(home / "claude-managed"))
    return home


@pytest.fixture(autouse=True)
def secret_scan(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[list[str]]:
    """Plant secrets in the environment; afterwards, scan every CLI output of the test (those
    of subprocesses the test appends to the list this yields too) and every log under its
    PLUGMAN_HOME for them, and every file there but the secret store for planted sensitive
    userConfig values."""
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    outputs: list[str] = []
    invoke = runner.invoke

    def scanned(args: list[str], *more: Any, **given: Any) -> Result:
        result = invoke(args, *more, **given)
        if "--show-secrets" not in args:
            outputs.append(result.output)
        return result

    monkeypatch.setattr(runner, "invoke", scanned)
    yield outputs
    logs = [p for p in isolated_home.rglob("*.log") if p.is_file()]
    texts = outputs + [p.read_text(errors="replace") for p in logs]
    planted = {**PLANTED, **PLANTED_CONFIG}
    leaks = [name for name, value in planted.items() for text in texts if value in text]
    assert not leaks, f"planted secrets {sorted(set(leaks))} appear in an output or a log"
    files = [
        p for p in isolated_home.rglob("*") if p.is_file() and p.name not in SECRET_STORE_FILES
    ]
    kept = [
        str(p)
        for p in files
        for value in PLANTED_CONFIG.values()
        if value.encode() in p.read_bytes()
    ]
    assert not kept, f"a planted sensitive userConfig value is stored in {kept}"
    request.node.user_properties.append(("secret_scan", (len(outputs), len(logs))))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start asking npm for the newest agents (tests.agent_pins), once, in the main process."""
    if not hasattr(session.config, "workerinput") and not os.environ.get("PLUGMAN_NO_PIN_CHECK"):
        from tests import agent_pins

        session.config.stash[PIN_LOOKUPS] = agent_pins.start()


def _pin_warnings(terminalreporter: pytest.TerminalReporter) -> None:
    futures = terminalreporter.config.stash.get(PIN_LOOKUPS, None)
    if futures is None:
        return
    from tests import agent_pins

    behind, unknown = agent_pins.finish(futures)
    for line in behind:
        terminalreporter.write_line(f"WARNING: agent pin behind: {line}", yellow=True)
    if unknown:
        terminalreporter.write_line(
            f"agent pins not checked (npm unreachable): {', '.join(unknown)}"
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the figures tests record with `record_property("summary", text)` (also under xdist),
    how many outputs and logs the secret scan read, and any agent pinned older than npm's newest."""
    _pin_warnings(terminalreporter)
    outputs = logs = 0
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "summary" and getattr(report, "when", "") == "call":
                    terminalreporter.write_line(str(value))
                if name == "secret_scan" and getattr(report, "when", "") == "teardown":
                    outputs, logs = outputs + value[0], logs + value[1]
    if outputs or logs:
        terminalreporter.write_line(
            f"secret scan: {outputs} command outputs and {logs} logs, no planted secret found"
        )
