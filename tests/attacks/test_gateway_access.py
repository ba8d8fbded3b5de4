"""Attacks on gatewayAccess, end to end over real HTTP (`plugman mcp serve --transport http
--auth token` with stdio backends; the caller set by tests.integration.gateway_caller's layer,
standing in for the OIDC gate), and on where the rules may be written.

- A clone's project plugman.toml, or the user's own, writing `gatewayAccess` grants nothing:
  only managed-settings.toml holds the rules (the key is ignored elsewhere, with a warning).
- A tool whose own name only looks like an allowed one once the gateway normalizes it (`.`,
  case, a Cyrillic letter) is neither listed nor callable under a pattern it does not fit, by
  any spelling of its name.
- `__` splitting: a server `a` whose tool `b__get_x` takes the gateway name `a__b__get_x` that
  server `a__b`'s `get_x` would have: a caller allowed only `a__b` is refused it (the decision
  is on the route's server and the tool's own name, never on the name as the caller spelled
  it).
- A hidden server's resources (listed and by template) and prompts are answered as unknown,
  and its instructions are not in the gateway's.
- A groups claim handed on as one string is not a list of groups: it admits nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from plugman.config.resolution import resolve
from plugman.core.paths import Paths
from tests.integration.gateway_caller import VAULT, caller, names, serving, write
from tests.integration.test_gateway import configure, text

TRICKY = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("tricky")


def fine() -> str:
    return "fine"


def secret() -> str:
    return "the-tricky-secret"


server.add_tool(fine, name="get_ok")
server.add_tool(fine, name="read")
server.add_tool(secret, name="get.secret")  # listed as tricky__get_secret
server.add_tool(secret, name="GET_secret")
server.add_tool(secret, name="re\u0430d")  # a Cyrillic a: listed as tricky__re_d
server.run()
"""
ONE_TOOL = """
from mcp.server.mcpserver import MCPServer

server = MCPServer({name!r})
server.add_tool(lambda: {answer!r}, name={tool!r})
server.run()
"""
RULES = """
gatewayAccess = [
  { groups = ["admin"], servers = ["*"] },
  { groups = ["support"], servers = ["tricky"], tools = ["get_*", "read"] },
  { groups = ["split"], servers = ["a__b"], tools = ["get_*"] },
]
"""
GRANT_ALL = 'gatewayAccess = [{ groups = ["*"], servers = ["*"] }]\n'


def granting_user_config(home: Path) -> None:
    """The user's plugman.toml also tries to grant every caller everything (top-level keys
    come before its tables)."""
    user = home / "config" / "plugman.toml"
    user.write_text(GRANT_ALL + user.read_text())


async def refused_read(client: Any, uri: str) -> tuple[int, str]:
    from mcp import MCPError

    with pytest.raises(MCPError) as raised:
        await client.read_resource(uri)
    return raised.value.code, raised.value.message


@pytest.mark.slow
def test_no_spelling_config_or_claim_gets_past_the_managed_rules(
    tmp_path: Path, isolated_home: Path
) -> None:
    scripts = {
        "vault": write(tmp_path / "vault.py", VAULT),
        "tricky": write(tmp_path / "tricky.py", TRICKY),
        "a": write(
            tmp_path / "a.py", ONE_TOOL.format(name="a", answer="a-secret", tool="b__get_x")
        ),
        "a__b": write(tmp_path / "ab.py", ONE_TOOL.format(name="ab", answer="ab", tool="get_x")),
    }
    configure(isolated_home, None, {}, scripts)
    granting_user_config(isolated_home)
    write(tmp_path / "project" / "plugman.toml", GRANT_ALL)
    write(isolated_home / "managed" / "managed-settings.toml", RULES)
    with serving(tmp_path, isolated_home) as (url, token):

        async def run() -> None:
            with anyio.fail_after(240):
                async with caller(url, token, "admin") as admin:
                    everything = await names(admin)
                    assert {"tricky__get_secret", "tricky__GET_secret", "a__b__get_x"} < everything
                # the clone's and the user's `groups = ["*"]` rules count for nothing
                for groups in (None, "", "eng"):
                    async with caller(url, token, groups) as stranger:
                        assert await names(stranger) == set()
                        assert await names(stranger, "prompts") == set()
                async with caller(url, token, "support") as support:
                    assert "vault" not in (support.instructions or "")
                    await spelled(support)
                    await hidden_server(support)
                async with caller(url, token, "split") as split:
                    await split_names(split, everything)
                for raw in ("admin", "superadmins"):  # one string, not a list: no group
                    async with caller(url, token, raw, raw=True) as sloppy:
                        assert await names(sloppy) == set()
                        done = await sloppy.call_tool("notes__echo", {"text": "x"})
                        assert text(done) == "Unknown tool: notes__echo"

        anyio.run(run)
    log = (isolated_home / "state" / "logs" / "gateway.log").read_text()
    assert "gatewayAccess refused resource 'vault://key'" in log
    assert "gatewayAccess refused prompt 'vault__confess'" in log


async def spelled(support: Any) -> None:
    """Only `get_ok` and `read` fit `get_*` and `read` by their own names."""
    assert await names(support) == {"tricky__get_ok", "tricky__read"}
    for name in (
        "tricky__get_secret",  # get.secret's listed name
        "tricky__get.secret",
        "tricky__GET_secret",
        "tricky__re_d",  # the Cyrillic read's listed name
        "tricky__re\u0430d",
        "tricky__get_ok ",
        "TRICKY__get_ok",
        "get.secret",
    ):
        done = await support.call_tool(name, {})
        assert done.is_error and text(done) == f"Unknown tool: {name}", name
    done = await support.call_tool("tricky__get_ok", {})
    assert not done.is_error and text(done) == "fine"


async def hidden_server(support: Any) -> None:
    """The vault's resources, template and prompt, as if they did not exist."""
    from mcp import MCPError

    assert await names(support, "resources") == set()
    assert await names(support, "templates") == set()
    nowhere = await refused_read(support, "nowhere://x")
    assert nowhere == (-32002, "Resource not found: nowhere://x")
    for uri in ("vault://key", "vault://item/x"):
        assert await refused_read(support, uri) == (-32002, f"Resource not found: {uri}")
    for prompt in ("vault__confess", "vault__nothing"):
        with pytest.raises(MCPError) as raised:
            await support.get_prompt(prompt)
        assert raised.value.message == f"Unknown prompt: {prompt}"


async def split_names(split: Any, everything: set[str]) -> None:
    """`a__b__get_x` is server a's `b__get_x`; a__b's `get_x` is listed salted."""
    listed = await names(split)
    assert len(listed) == 1 and listed < everything and listed != {"a__b__get_x"}
    done = await split.call_tool("a__b__get_x", {})
    assert text(done) == "Unknown tool: a__b__get_x"
    done = await split.call_tool(listed.pop(), {})
    assert not done.is_error and text(done) == "ab"


def test_a_project_or_user_config_never_writes_gateway_rules(
    tmp_path: Path, isolated_home: Path
) -> None:
    project = tmp_path / "project"
    configure(isolated_home, None, {})
    granting_user_config(isolated_home)
    write(project / "plugman.toml", 'gatewayAccess = [{ groups = ["x"], servers = ["y"] }]\n')
    paths = Paths.from_env(project=project)
    found = resolve(paths, {"PLUGMAN_HOME": str(isolated_home)})
    assert found.policy.gateway_access is None  # no managed rule: nothing written counts
    ignored = [(d.file, d.code) for d in found.diagnostics if d.path == "gatewayAccess"]
    assert sorted(ignored) == sorted(
        [(str(paths.user_config), "ignored-key"), (str(project / "plugman.toml"), "ignored-key")]
    )
    write(paths.managed_settings, RULES)
    rules = resolve(paths, {"PLUGMAN_HOME": str(isolated_home)}).policy.gateway_access
    assert rules is not None and {r.origin.rpartition(": ")[0] for r in rules} == {
        str(paths.managed_settings)
    }
