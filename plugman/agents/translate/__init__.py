"""Claude-format commands and subagents in another agent's own form: the common reading
and writing (front matter, TOML strings), subagents, commands.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "commands",
    "common",
    "subagents",
]
