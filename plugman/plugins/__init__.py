"""Plugins: marketplaces, sources, planning, install/uninstall/update/sync and the lock file."""
