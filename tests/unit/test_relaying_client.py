"""The gateway's MCP client (plugman.runtime.gateway.backends.relay_results) relays a tool's result
unchecked, where the SDK's own client checks it against the tool's output schema: the client
the gateway relays it to checks it against the same (relayed) schema. An SDK server in this
process answers with structured content its schema does not allow."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client, types
from mcp.server.lowlevel.server import Server

from plugman.runtime.gateway.backends import relay_results

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    tool = types.Tool(name="count", input_schema={"type": "object"}, output_schema=SCHEMA)
    return types.ListToolsResult(tools=[tool])


async def _call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    text = types.TextContent(type="text", text="many")
    return types.CallToolResult(content=[text], structured_content={"n": "many"})


def _call(relayed: bool) -> types.CallToolResult | str:
    server = Server("counter", on_list_tools=_list_tools, on_call_tool=_call_tool)

    async def call() -> types.CallToolResult | str:
        async with Client(server) as client:
            if relayed:
                relay_results(client)
            await client.list_tools()
            try:
                return await client.call_tool("count", {})
            except RuntimeError as exc:
                return str(exc)

    return anyio.run(call)


def test_the_gateway_relays_a_result_its_schema_does_not_allow() -> None:
    checked = _call(relayed=False)
    assert isinstance(checked, str) and "Invalid structured content" in checked
    relayed = _call(relayed=True)
    assert isinstance(relayed, types.CallToolResult)
    assert relayed.structured_content == {"n": "many"} and not relayed.is_error
