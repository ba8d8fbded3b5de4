"""The variable a shell sets when it asks typer for completions (the command then has no
arguments of its own): plugman.cli answers no help then, and sends it to typer."""

COMPLETION = "_PLUGMAN_COMPLETE"
