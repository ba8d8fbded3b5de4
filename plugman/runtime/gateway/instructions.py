"""The gateway's `instructions`: a line about itself, then every backend server's own, as Claude
Code puts each server's instructions into its system prompt.

A client reads them once, in the initialize result, and the gateway answers initialize at once,
before its slow backends are up (MCP has no notification for changed instructions). So a backend
not up yet contributes what it said last time (plugman.runtime.gateway.memory), and one whose entry
changed since contributes nothing until it is up.
"""

from __future__ import annotations

from collections.abc import Iterable

from plugman.runtime.gateway.naming import gateway_prefix

HEADLINE = "Every MCP server plugman resolved for this project, behind one server."
LIMIT = 2048  # characters of one server's instructions (Claude Code's cap)


def compose(sections: Iterable[tuple[str, str | None]]) -> str:
    """HEADLINE, then for each (server name, its instructions) with text, in order:

        ## <server name> (tools <server name>__*)
        <its instructions, cut at LIMIT characters>

    separated by blank lines. The name is the resolved one (`plugin:<plugin>:<server>` for a
    plugin's), as `mcp probe` shows it; the tools are named as the gateway lists them
    (plugman.runtime.gateway.naming.gateway_prefix)."""
    parts = [HEADLINE]
    for name, said in sections:
        text = (said or "").strip()
        if len(text) > LIMIT:
            text = text[:LIMIT] + "… [cut by plugman]"
        if text:
            parts.append(f"## {name} (tools {gateway_prefix(name)}*)\n{text}")
    return "\n\n".join(parts)
