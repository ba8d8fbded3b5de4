"""The digest of what a gateway replica serves, so a replica whose config differs from its
peers' shows (plugman.runtime.gateway.run logs it at the start, over HTTP).

It is computed from this project's resolved config with `${VAR}` references kept, not
expanded (plugman.config.resolution.resolve with `references`): every served MCP server's
entry, by name, and every hook, in order. Two replicas started from the same plugman.toml and
plugman.lock (`plugman mcp serve --frozen`) on the same image have the same digest (this
machine's own folders, PLUGMAN_HOME's, count by their role, not their path); a server
added, removed or changed, a plugin at another version (its files are in the store under its
content hash), or a hook changed gives another. Secrets are not in its input: a stored
variable or an environment variable that a server's entry references counts by its name only,
so rotating a Redis password or a token does not change the digest, and the digest says
nothing about them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from plugman.core.paths import Paths

PREFIX = "sha256:"
LENGTH = 16  # hex digits shown: enough to tell replicas apart, short enough for a log line


def config_digest(paths: Paths, env: Mapping[str, str]) -> str:
    """`sha256:` and the first LENGTH hex digits of the canonical JSON of what is served."""
    # lazy: config.resolution takes ~13 ms to import, only the HTTP path needs a digest
    from plugman.config.resolution import resolve

    resolved = resolve(paths, env, references=True)
    served = {
        "servers": {name: resolved.servers[name].entry for name in sorted(resolved.servers)},
        "hooks": [repr(hook) for hook in resolved.hooks],
    }
    canonical = json.dumps(served, sort_keys=True, separators=(",", ":"), default=repr)
    for folder, name in _folders(paths):  # the same content under another PLUGMAN_HOME
        canonical = canonical.replace(json.dumps(str(folder))[1:-1], name)
    return PREFIX + hashlib.sha256(canonical.encode()).hexdigest()[:LENGTH]


def _folders(paths: Paths) -> list[tuple[Path, str]]:
    """This machine's user folders (a plugin's root is in the store, under its content hash),
    deepest first, each with the name that stands for it in the digest's input."""
    found = [
        (paths.store_dir, "${STORE}"),
        (paths.data_dir, "${DATA}"),
        (paths.state_dir, "${STATE}"),
        (paths.cache_dir, "${CACHE}"),
        (paths.config_dir, "${CONFIG}"),
    ]
    return [(folder, name) for folder, name in found if str(folder) not in ("", "/", ".")]
