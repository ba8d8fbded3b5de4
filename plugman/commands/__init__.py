"""The commands that change state and then bring the linked agents up to date: `trust
approve|revoke`, `mcp add|remove`, `mcp vars set|unset`, install, uninstall, sync and update.

Each opens one session (plugman.core.session), runs the domain steps below it (plugman.config,
plugman.plugins) and redeploys (plugman.agents.deploy) in the same transaction, so a change
and the agents' files that follow it commit together or not at all. This layer sits above
`plugins` and below `doctor`, `output` and `cli`; nothing below imports it."""
