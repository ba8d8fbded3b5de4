"""What hooks mean at run time: which hooks an event reaches (matchers, `if` rules), what
their exit codes and output decide, and running them for agents with no hook system.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "match",
    "outcome",
    "run",
]
