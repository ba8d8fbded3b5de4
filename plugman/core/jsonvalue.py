"""Names for the JSON objects plugman hands on as another program's format spells them.

These are not plugman's own records (those are typed: `InstalledPlugin`, `Resolution`, ...).
They are values whose keys belong to someone else's format and which plugman keeps as written
and passes through the layers to where they leave: an MCP server entry as `.mcp.json` spells it
(each agent's renderer writes it in its own form), a hook handler as a `hooks.json` group holds
it, the payload an agent sends a hook or an MCP tool call carries, an MCP wire object (a tool's
input schema, its annotations, a resource or prompt listing), a plugin's own manifest fields.
Naming them says which is which; the type stays a plain JSON object because plugman must give
back every key it was given, known to it or not.
"""

from __future__ import annotations

from typing import Any

JSONObject = dict[str, Any]  # any JSON object handed on as written

ServerEntry = JSONObject  # an MCP server entry in `.mcp.json` form: command/args/env or type/url
HookEntry = JSONObject  # a hook handler as a hooks.json matcher group holds it (type, command...)
Payload = JSONObject  # what an agent sends a hook, or an MCP tool call's arguments
PluginFields = JSONObject  # a plugin's manifest fields (plugin.json, or its marketplace entry)
