#!/usr/bin/env python3
"""PreToolUse hook for Bash: block `rm -rf /` and close variants.

Reads the hook input JSON from stdin. Exit 2 (with the reason on stderr) blocks the tool
call; exit 0 lets it through. Malformed input is let through: this hook must never break
a session.
"""

import json
import re
import sys

# `rm` with both -r/-R and -f (in any order or as separate flags), aimed at / or /* .
# `rm -rf /tmp/x` is *not* matched; `rm -rf /`, `rm -fr /*`, `rm -r -f /` are.
DANGEROUS = re.compile(
    r"""
    \brm\s+
    (?=(?:-\S+\s+)*-\S*[rR])        # some flag contains r/R
    (?=(?:-\S+\s+)*-\S*f)           # some flag contains f
    (?:-\S+\s+)*                    # the flags (including --no-preserve-root)
    /\*?                            # the target: / or /*
    (?=$|[\s;&|)"'`])              # ... and nothing after it (quotes: `sh -c "rm -rf /"`)
    """,
    re.VERBOSE,
)


def main() -> int:
    try:
        payload = json.load(sys.stdin)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return 0
    if not isinstance(payload, dict):
        return 0
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return 0
    if DANGEROUS.search(command):
        print(
            f"guardrails: blocked `rm -rf /` (recursive forced delete of the filesystem root): "
            f"{command!r}",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
