"""Which server launches `plugman audit` calls unpinned (plugman.doctor.audit.servers, over the
launch-command parser `plugman lock export` uses, plugman.plugins.supply_chain.sbom_servers): every
launcher it knows, pinned and not, as `command` + `args` and as one command line."""

from __future__ import annotations

import pytest

from plugman.doctor.audit.servers import unpinned

UNPINNED = [
    # (command, args, the package as written, how a pinned one is spelled)
    ("npx", ["-y", "some-server"], "some-server", "some-server@VERSION"),
    ("npx", ["some-server"], "some-server", "some-server@VERSION"),
    ("npx", ["--yes", "some-server@latest"], "some-server@latest", "some-server@VERSION"),
    ("npx", ["-y", "some-server@^1.2.0"], "some-server@^1.2.0", "some-server@VERSION"),
    ("npx", ["-y", "some-server@1"], "some-server@1", "some-server@VERSION"),
    ("npx", ["-y", "@scope/server", "--port", "3"], "@scope/server", "@scope/server@VERSION"),
    ("npx", ["-y", "@scope/server@next"], "@scope/server@next", "@scope/server@VERSION"),
    ("npx", ["-p", "tool", "tool-bin"], "tool", "tool@VERSION"),
    ("npx", ["--package=tool", "tool-bin"], "tool", "tool@VERSION"),
    ("/usr/local/bin/npx", ["-y", "srv"], "srv", "srv@VERSION"),
    ("npx.cmd", ["-y", "srv"], "srv", "srv@VERSION"),
    ("npm", ["exec", "--yes", "--", "srv"], "srv", "srv@VERSION"),
    ("pnpm", ["dlx", "srv"], "srv", "srv@VERSION"),
    ("pnpx", ["srv@latest"], "srv@latest", "srv@VERSION"),
    ("bunx", ["srv"], "srv", "srv@VERSION"),
    ("bun", ["x", "srv"], "srv", "srv@VERSION"),
    ("yarn", ["dlx", "srv"], "srv", "srv@VERSION"),
    ("uvx", ["mcp-server-time"], "mcp-server-time", "mcp-server-time==VERSION"),
    ("uvx", ["mcp-server-time@latest"], "mcp-server-time@latest", "mcp-server-time==VERSION"),
    ("uvx", ["--python", "3.12", "srv>=1.0"], "srv>=1.0", "srv==VERSION"),
    ("uvx", ["--from", "srv~=1.2", "srv-bin"], "srv~=1.2", "srv==VERSION"),
    ("uv", ["tool", "run", "srv"], "srv", "srv==VERSION"),
    ("pipx", ["run", "srv"], "srv", "srv==VERSION"),
    ("pipx", ["run", "srv==1.*"], "srv==1.*", "srv==VERSION"),
    ("pipx", ["run", "--spec", "srv", "srv-bin"], "srv", "srv==VERSION"),
    ("npx -y some-server", [], "some-server", "some-server@VERSION"),  # one command line
    ("uvx mcp-server-fetch", [], "mcp-server-fetch", "mcp-server-fetch==VERSION"),
    ("cmd", ["/c", "npx", "-y", "srv"], "srv", "srv@VERSION"),  # Windows
    (
        "docker",
        ["run", "-i", "--rm", "ghcr.io/o/srv:1.0"],
        "ghcr.io/o/srv:1.0",
        "ghcr.io/o/srv@sha256:DIGEST",
    ),  # a tag can be pushed again: an image pins by digest
]

PINNED = [
    ("npx", ["-y", "some-server@1.2.3"]),
    ("npx", ["-y", "@scope/server@1.2.3-beta.1", "--port", "3"]),
    ("npx", ["-p", "tool@2.0.0", "tool-bin"]),
    ("pnpm", ["dlx", "srv@0.1.0"]),
    ("bunx", ["srv@3.0.0"]),
    ("uvx", ["mcp-server-time==2026.10.19"]),
    ("uvx", ["mcp-server-time@2026.10.19"]),
    ("uvx", ["--from", "srv[cli]==1.2", "srv-bin"]),
    ("uv", ["tool", "run", "srv==1.0.0"]),
    ("pipx", ["run", "srv==1.0"]),
    ("pipx", ["run", "--spec", "srv==1.0", "srv-bin"]),
    ("npx -y some-server@1.2.3", []),
    # not a registry package: nothing to pin
    ("npx", ["-y", "./local-server"]),
    ("npx", ["-y", "github:owner/server"]),
    ("uvx", ["--from", "git+https://example.com/srv", "srv"]),
    ("uvx", ["/opt/srv"]),
    # not a downloader at all
    ("node", ["server.js"]),
    ("python", ["-m", "server"]),
    ("uv", ["run", "server.py"]),
    ("npm", ["start"]),
    ("docker", ["run", "-i", "ghcr.io/o/srv@sha256:" + "a" * 64]),
    ("npx", ["-y", "${SERVER_PACKAGE}"]),  # known only when the agent starts it
]


@pytest.mark.parametrize(("command", "args", "package", "pin"), UNPINNED)
def test_an_unpinned_launch_is_found_with_how_to_pin_it(
    command: str, args: list[str], package: str, pin: str
) -> None:
    found = unpinned("srv", {"command": command, "args": args})
    assert found is not None
    assert found.package == package
    assert found.pin == pin
    assert package in found.launch


@pytest.mark.parametrize(("command", "args"), PINNED)
def test_a_pinned_or_local_launch_passes(command: str, args: list[str]) -> None:
    assert unpinned("srv", {"command": command, "args": args}) is None


def test_entries_without_a_command_pass() -> None:
    assert unpinned("srv", {"url": "https://example.com/mcp"}) is None
    assert unpinned("srv", {"command": "", "args": ["-y", "x"]}) is None
    assert unpinned("srv", {"command": "npx"}) is None  # nothing to run
