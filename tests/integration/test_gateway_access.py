"""gatewayAccess over real HTTP: `plugman mcp serve --transport http --auth token --stateless`
as a subprocess with the sample notes server and a vault server as stdio backends, the managed
rules in managed-settings.toml, SDK clients calling as different groups (the caller set by the
test's ASGI layer, tests.integration.gateway_caller, standing in for the OIDC gate).

- A group allowed one server lists only its tools, prompts and resources, calls them, and is
  refused the other server's: the refusal is the unknown tool's answer, word for word, and the
  gateway logs it. The instructions, the same for every caller, carry only the servers every
  caller may use.
- A group allowed some tools of a server lists and calls only those.
- A request behind `--auth` that carries no caller (the shared token's, until its gate names
  one) is a caller with no groups: only the `*` rule admits it.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.integration.gateway_caller import VAULT, caller, names, serving, write
from tests.integration.test_gateway import configure, notes, text

RULES = """
gatewayAccess = [
  { groups = ["admin"], servers = ["*"] },
  { groups = ["eng"], servers = ["notes"] },
  { groups = ["support"], servers = ["notes"], tools = ["get_*", "list_notes"] },
  { groups = ["*"], servers = ["notes"], tools = ["echo"] },
]
"""
VAULT_TOOLS = {"vault__echo", "vault__unseal"}


@pytest.mark.slow
def test_each_group_lists_and_calls_only_what_its_rules_grant(
    tmp_path: Path, isolated_home: Path
) -> None:
    configure(isolated_home, None, {}, {"vault": write(tmp_path / "vault.py", VAULT)})
    write(isolated_home / "managed" / "managed-settings.toml", RULES)
    with serving(tmp_path, isolated_home) as (url, token):

        async def run() -> None:
            with anyio.fail_after(180):
                async with caller(url, token, "admin") as admin:
                    assert await names(admin) == notes("notes__") | VAULT_TOOLS
                    assert await names(admin, "resources") == {"notes://index", "vault://key"}
                async with caller(url, token, "eng,unknown-group") as eng:
                    assert await names(eng) == notes("notes__")
                    said = eng.instructions or ""  # the same for every caller: no vault
                    assert "## notes" in said and "vault" not in said
                    assert await names(eng, "prompts") == {"notes__summarize_notes"}
                    assert await names(eng, "resources") == {"notes://index"}
                    assert await names(eng, "templates") == {"notes://note/{title}"}
                    done = await eng.call_tool("notes__echo", {"text": "hi"})
                    assert not done.is_error and text(done) == "hi"
                    hidden = await eng.call_tool("vault__echo", {"text": "hi"})
                    unknown = await eng.call_tool("vault__nothing", {"text": "hi"})
                    assert hidden.is_error and text(hidden) == "Unknown tool: vault__echo"
                    assert text(unknown) == "Unknown tool: vault__nothing"
                async with caller(url, token, "support") as support:
                    assert await names(support) == {
                        "notes__get_note", "notes__list_notes", "notes__echo",
                    }  # fmt: skip
                    listed = await support.call_tool("notes__list_notes", {})
                    assert not listed.is_error
                    refused = await support.call_tool("notes__delete_note", {"title": "x"})
                    assert text(refused) == "Unknown tool: notes__delete_note"
                    assert await names(support, "prompts") == {"notes__summarize_notes"}
                async with caller(url, token, None) as nobody:  # the token, but no caller
                    assert await names(nobody) == {"notes__echo"}  # the `*` rule's
                    assert await names(nobody, "resources") == {"notes://index"}
                    done = await nobody.call_tool("notes__echo", {"text": "hi"})
                    assert not done.is_error and text(done) == "hi"
                    refused = await nobody.call_tool("notes__add", {"a": 1, "b": 2})
                    assert text(refused) == "Unknown tool: notes__add"

        anyio.run(run)
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert "gatewayAccess refused tool 'vault__echo' to ('alice', 'https://idp.test'" in log
    assert "gatewayAccess refused tool 'notes__delete_note'" in log
    assert "vault__nothing" not in log  # an unknown name is not a refusal
