"""Feeding agents: one target per agent, file editing that owns only its blocks, deployment
(export) and its record."""
