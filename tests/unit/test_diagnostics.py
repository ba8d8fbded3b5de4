from __future__ import annotations

import pytest

from plugman.manifest.diagnostics import Sink, format_path


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ((), ""),
        (("hooks", "PreToolUse", 0, "hooks", 1, "command"), "hooks.PreToolUse[0].hooks[1].command"),
        (("mcpServers", "google calendar"), 'mcpServers["google calendar"]'),
        (("mcpServers", "Synapse.org", "url"), 'mcpServers["Synapse.org"].url'),
        ((0, "name"), "[0].name"),
        (("a", 'q"uote'), 'a["q\\"uote"]'),
    ],
)
def test_format_path(path: tuple[str | int, ...], text: str) -> None:
    assert format_path(path) == text


def test_child_sink_shares_findings_and_prefixes_paths() -> None:
    sink = Sink("f.json", lambda path: (len(path), 1))
    sink.child(("plugins", 2)).error("x", "broken", ("name",), "fix it")
    [finding] = sink.items
    assert (finding.path, finding.line, finding.hint) == ("plugins[2].name", 3, "fix it")
    assert sink.has_errors
    assert finding.escalated().severity == "error"
