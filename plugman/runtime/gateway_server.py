"""The low-level MCP server in front of plugman.runtime.gateway's Gateway: its handlers, and
`listChanged` advertised for tools, prompts and resources on every transport."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plugman import __version__

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from plugman.runtime.gateway import Gateway

NAME = "plugman-gateway"


def mcp_server(gateway: Gateway) -> Server[Any]:
    """The low-level MCP server, advertising `listChanged` on every transport."""
    from mcp import types
    from mcp.server.lowlevel.server import NotificationOptions, Server
    from mcp.server.subscriptions import ListenHandler

    class GatewayServer(Server[Any]):
        def create_initialization_options(self, *args: Any, **kwargs: Any) -> Any:
            options = args[0] if args else kwargs.pop("notification_options", None)
            changed = options or NotificationOptions(True, True, True)
            return super().create_initialization_options(changed, *args[1:], **kwargs)

    server = GatewayServer(
        NAME,
        version=__version__,
        instructions=gateway.instructions(),
        on_list_tools=gateway.list_tools,
        on_call_tool=gateway.call,
        on_list_resources=gateway.list_resources,
        on_list_resource_templates=gateway.list_templates,
        on_read_resource=gateway.read,
        on_list_prompts=gateway.list_prompts,
        on_get_prompt=gateway.prompt,
        on_subscriptions_listen=ListenHandler(gateway.bus),
    )
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, gateway.joined
    )
    return server
