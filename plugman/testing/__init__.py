"""plugman's test kit for extensions: a pytest plugin (entry point `pytest11`, so installing
plugman is enough: no conftest.py to write) with three fixtures.

- `plugman_env` (`PlugmanEnv`): an isolated machine for one test: a temporary HOME (and the
  XDG folders under it), PLUGMAN_HOME, plugman's and Claude Code's managed-settings folders,
  a file secret store instead of the OS keychain, a project folder, no agent or plugman
  variable from the real environment, and HTTP(S) proxies pointing at a closed port so nothing
  reaches the network (servers on 127.0.0.1 still answer).
- `plugman_extension` (`Extensions`): an extension installed for the test's duration: an
  object or module registered with plugman's plugin manager (`register`), or entry points in
  the `plugman` group written into a site folder on the import path, found exactly as an
  installed package's are, by this process and by a plugman subprocess (`entry_points`).
- `plugman_cli` (`Runner`): `plugman ARGS` in that environment, in this process
  (`plugman.cli.main`) or as a subprocess (`python -m plugman`), giving a `Result`: exit code,
  stdout, stderr and the parsed JSON.

See docs/extensions.md, "Testing an extension".
"""

from __future__ import annotations

from plugman.testing.env import PlugmanEnv, isolate
from plugman.testing.installed import Extensions
from plugman.testing.runner import Result, Runner

__all__ = ["Extensions", "PlugmanEnv", "Result", "Runner", "isolate"]
