"""`plugman policy explain SERVER --tool TOOL --group G...` (or `SERVER__TOOL`): the gateway's
access verdict (managed gatewayAccess), the rule and file that decided, in text and JSON; the
existing questions (plugin, server, marketplace) answer as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

from plugman.cli import invoke

RULES = """
gatewayAccess = [
  { groups = ["eng"], servers = ["notes"] },
  { groups = ["support"], servers = ["notes"], tools = ["get_*"] },
  { groups = ["*"], servers = ["time"] },
]
deniedMcpServers = [{ serverName = "leaky" }]
"""
SERVERS = """
[mcp_servers.notes]
command = "notes"
[mcp_servers.time]
command = "time"
[mcp_servers.leaky]
command = "leaky"
"""


def managed(home: Path, text: str = RULES) -> Path:
    file = Path(os.environ["PLUGMAN_MANAGED_DIR"]) / "managed-settings.toml"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "plugman.toml").write_text(SERVERS)
    return file


def explained(*args: str) -> tuple[int, dict[str, object]]:
    done = invoke(["policy", "explain", *args, "--json"])
    return done.exit_code, json.loads(done.stdout)


def test_a_tool_refused_and_allowed_by_group_with_the_rule_and_file(isolated_home: Path) -> None:
    file = managed(isolated_home)
    done = invoke(["policy", "explain", "notes", "--tool", "delete_note", "--group", "support"])
    assert done.exit_code == 1
    assert done.output.splitlines()[:4] == [
        "gateway notes, tool delete_note: refused",
        "  groups support",
        "  rule   no gatewayAccess rule grants groups ['support'] tool 'delete_note' of server "
        "'notes'",
        f"  where  {file}: gatewayAccess",
    ]
    code, found = explained(
        "notes", "--tool", "delete_note", "--group", "support", "--group", "eng"
    )
    assert code == 0
    assert (found["kind"], found["server"], found["tool"], found["verdict"]) == (
        "gateway", "notes", "delete_note", "allowed",
    )  # fmt: skip
    assert found["groups"] == ["support", "eng"]
    assert found["where"] == f"{file}: gatewayAccess[0]"
    assert (
        found["rule"] == "allowed by gatewayAccess groups=['eng'], servers=['notes'], tools=['*']"
    )


def test_the_gateways_listed_name_names_server_and_tool(isolated_home: Path) -> None:
    file = managed(isolated_home)
    code, found = explained("notes__get_note", "--group", "support")
    assert code == 0 and (found["server"], found["tool"]) == ("notes", "get_note")
    assert found["where"] == f"{file}: gatewayAccess[1]"
    assert "read as tool 'get_note' of server 'notes'" in str(found["notes"])
    code, found = explained("notes__get_note", "--group", "Support")  # exact, case and all
    assert code == 1 and found["verdict"] == "refused"


def test_a_caller_with_no_groups_gets_only_what_star_rules_give(isolated_home: Path) -> None:
    managed(isolated_home)
    assert explained("time", "--gateway")[0] == 0
    code, found = explained("notes", "--gateway")
    assert code == 1 and found["tool"] is None and found["groups"] == []
    text = invoke(["policy", "explain", "notes", "--gateway"]).output
    assert "  groups none (the shared token's caller has none)" in text


def test_a_server_managed_policy_does_not_serve_is_noted(isolated_home: Path) -> None:
    managed(isolated_home)
    code, found = explained("leaky", "--tool", "x", "--group", "eng")
    assert code == 1 and found["verdict"] == "refused"
    assert found["notes"] == [
        "the gateway does not serve it: denied by deniedMcpServers serverName='leaky'"
    ]


def test_no_rules_every_caller_gets_everything(isolated_home: Path) -> None:
    managed(isolated_home, "")
    code, found = explained("notes", "--tool", "delete_note")
    assert code == 0 and str(found["rule"]).startswith("no gatewayAccess rule is written")
    assert found["where"] is None


def test_a_broken_rule_fails_closed_and_explain_says_so(isolated_home: Path) -> None:
    managed(isolated_home, 'gatewayAccess = [{ groups = "eng", servers = ["notes"] }]\n')
    code, found = explained("notes", "--tool", "echo", "--group", "eng")
    assert code == 1 and found["verdict"] == "refused"


def test_the_servers_own_question_is_unchanged(isolated_home: Path) -> None:
    managed(isolated_home)
    code, found = explained("notes")
    assert code == 0 and (found["kind"], found["rule"]) == (
        "server",
        "no managed rule speaks of it",
    )
    assert "groups" not in found and "tool" not in found
