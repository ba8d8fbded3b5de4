#!/usr/bin/env python3
"""UserPromptSubmit hook: reject prompts that contain a private key or an AWS access key.

Blocking uses the JSON decision form ({"decision": "block", "reason": ...}) on stdout with
exit 0; anything else is let through silently.
"""

import json
import re
import sys

SECRET_PATTERNS = {
    "a private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "an AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
}


def main() -> int:
    try:
        payload = json.load(sys.stdin)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return 0
    prompt = payload.get("prompt") if isinstance(payload, dict) else None
    if not isinstance(prompt, str):
        return 0
    for label, pattern in SECRET_PATTERNS.items():
        if pattern.search(prompt):
            reason = f"guardrails: the prompt appears to contain {label}; remove it and retry."
            print(json.dumps({"decision": "block", "reason": reason}))
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
