"""Installing, updating, syncing and uninstalling plugins: planning (which version, from
where), the install record, options, rollback, blocked plugins, `search`/`info` lookups.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "configure",
    "install",
    "installed",
    "lookup",
    "planner",
    "sync",
    "uninstall",
    "updates",
]
