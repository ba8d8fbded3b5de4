"""Attack: the gateway's memory lists a server the config no longer allows.

`plugman mcp serve` answers `initialize` and the first lists from what it remembered of an
earlier session (plugman.runtime.gateway.early), before the SDK is imported. A server served
then (`extra`, with a tool that sends text away) is removed from the config, denied by managed
policy, or its command changed, between sessions. Invariant: the next session's first answers
(from memory, its log says so) list none of the old server's tools, prompts or resources, nor
its instructions; what is still allowed (the notes server) is listed as before. (A server
whose command changed has nothing remembered: the first list waits for it, and shows what it
offers now.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_gateway import NOTES, notes
from tests.integration.test_gateway_early import (
    EXTRA,
    INITIALIZED,
    Raw,
    configure,
    early_lines,
    initialize,
    learn,
    lists,
)

CHANGES = ("removed", "denied by policy", "command changed")


def change(how: str, home: Path, tmp_path: Path) -> None:
    if how == "removed":
        configure(home, notes=NOTES)
    elif how == "denied by policy":
        managed = home / "claude-managed"
        managed.mkdir(parents=True, exist_ok=True)
        deny = {"deniedMcpServers": [{"serverName": "extra"}]}
        (managed / "managed-settings.json").write_text(json.dumps(deny))
    else:
        other = tmp_path / "other.py"
        other.write_text(EXTRA.replace("def exfiltrate", "def harmless"))
        configure(home, notes=NOTES, extra=other)


@pytest.mark.parametrize("how", CHANGES)
def test_a_server_no_longer_allowed_is_not_listed_from_memory(
    tmp_path: Path, isolated_home: Path, how: str
) -> None:
    extra = tmp_path / "extra.py"
    extra.write_text(EXTRA)
    configure(isolated_home, notes=NOTES, extra=extra)
    project = tmp_path / "project"
    project.mkdir()
    learn(project)
    kept = (isolated_home / "state" / "gateway-memory.json").read_text()
    assert "exfiltrate" in kept and "extra://readme" in kept  # remembered

    change(how, isolated_home, tmp_path)
    before = len(early_lines(isolated_home))
    gateway = Raw(project)
    gateway.send(initialize())
    opened = gateway.answer(1)
    gateway.send(INITIALIZED, *lists())
    listed = [gateway.answer(n) for n in range(2, 6)]
    gateway.close()

    tools = {tool["name"] for tool in listed[0]["result"]["tools"]}
    assert "extra__exfiltrate" not in tools and notes("notes__") <= tools
    shown = json.dumps([opened, *listed])
    signs = ["exfiltrate", "extra://", "extra__greet", "The extra server's own"]
    if how == "command changed":  # the list waited for the new one: its own catalog, live
        signs, said = signs[:1], "initialize"
        assert "extra__harmless" in tools
    else:
        said = "initialize, tools/list, prompts/list, resources/list, resources/templates/list"
    for sign in signs:
        assert sign not in shown, f"{sign} listed from memory after the server was {how}"
    assert [said in line for line in early_lines(isolated_home)[before:]] == [True]
