"""What agents' files name and run: the hook launcher (`hooks exec`) and its direct form
(`plugman-hook`), the server launcher (`mcp run`), the stdio bridge to a remote server and the
update notice (`hooks notify`).

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "agent_facts",
    "hook",
    "notices",
    "planfile",
    "plans",
    "server",
    "server_plans",
    "server_start",
    "shplan",
]
