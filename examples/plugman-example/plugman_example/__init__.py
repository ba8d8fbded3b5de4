"""An example plugman extension: `target` adds an agent, `source` a kind of plugin source."""
