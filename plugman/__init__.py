"""plugman: a package manager and marketplace CLI for agent plugins."""

__version__ = "0.1.0"
