"""Bringing Claude Code's own plugin installs under plugman (`import claude`), and
retiring Claude's copies once plugman holds them.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "claude",
    "retire",
]
