"""What a connected MCP server offers: its identity, tools, resources and prompts.

Only what the server advertises is listed. A failing `tools/list` fails the probe; a failing
`resources/list` or `prompts/list` only adds a warning. Each list follows at most MAX_PAGES
cursors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plugman.core.errors import PlugmanError
from plugman.core.jsonvalue import JSONObject

if TYPE_CHECKING:
    from mcp import Client

MAX_PAGES = 100


@dataclass
class ToolInfo:
    name: str
    description: str
    annotations: JSONObject  # wire (camelCase) names: readOnlyHint, destructiveHint, ...
    input_schema: JSONObject
    title: str | None = None


@dataclass
class Listing:
    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    resources: list[JSONObject] = field(default_factory=list)
    prompts: list[JSONObject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


async def describe(client: Client) -> Listing:
    from mcp import MCPError  # lazy: mcp takes ~722 ms to import, only this path needs it

    found = Listing(protocol_version=client.protocol_version)
    info = client.server_info
    if info is not None:
        found.server_name, found.server_version = info.name, info.version
    capabilities = client.server_capabilities
    if capabilities.tools is not None:
        try:
            found.tools = [_tool(t) for t in await _pages(client.list_tools, "tools")]
        except MCPError as exc:
            raise PlugmanError(f"tools/list failed: {exc.message}") from exc
    if capabilities.resources is not None:
        await _optional(found, "resources/list", _resources(client, found))
    if capabilities.prompts is not None:
        await _optional(found, "prompts/list", _prompts(client, found))
    return found


async def _optional(found: Listing, method: str, listing: Awaitable[None]) -> None:
    from mcp import MCPError  # lazy: mcp takes ~722 ms to import, only this path needs it

    try:
        await listing
    except MCPError as exc:
        found.warnings.append(f"{method} failed: {exc.message}")


async def _pages(method: Callable[..., Awaitable[Any]], attribute: str) -> list[Any]:
    items: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await method(cursor=cursor)
        items += getattr(page, attribute)
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _tool(tool: Any) -> ToolInfo:
    annotations = tool.annotations
    hints = annotations.model_dump(by_alias=True, exclude_none=True) if annotations else {}
    return ToolInfo(tool.name, tool.description or "", hints, dict(tool.input_schema), tool.title)


async def _resources(client: Client, found: Listing) -> None:
    for item in await _pages(client.list_resources, "resources"):
        found.resources.append(_resource(item, uri=str(item.uri)))
    for item in await _pages(client.list_resource_templates, "resource_templates"):
        found.resources.append(_resource(item, uri_template=item.uri_template))


def _resource(item: Any, **where: str) -> dict[str, Any]:
    return {**where, "name": item.name, "description": item.description, "mime": item.mime_type}


async def _prompts(client: Client, found: Listing) -> None:
    for prompt in await _pages(client.list_prompts, "prompts"):
        arguments = [a.name for a in prompt.arguments or []]
        found.prompts.append(
            {"name": prompt.name, "description": prompt.description, "arguments": arguments}
        )
