"""A literal credential never goes into a file the project commits (issue 33, "secrets stay
secret").

Attack: the README tells a team to commit `.mcp.json` and the agents' project files; a server
added with its password, token or key written in (`PGPASSWORD=…`, `postgres://u:p@h/db`,
`--api-key VALUE`, `Authorization: Bearer …`) would be pushed with the repository. Invariant
(config.server_entries.refuse_literal_secrets, on what config.redact.keep_out finds): `mcp add
--scope project` refuses it (exit 2, nothing written, the literal in no output) and its hint
gives the exact commands that keep the value out: `plugman mcp vars set VAR` and the same
`mcp add` with `${VAR}`. Paired: running exactly those commands works, the committed file holds
only the reference, and the resolved config (what `mcp run` starts) has the value back. The
same entry at user scope (not committed) is taken as given. Export into a project file leaves
such an entry out with a note naming the `mcp vars` way.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.integration.helpers import git, snapshot

SECRET = "lit-planted-credential-3b8f"


class Case(NamedTuple):
    id: str
    add: tuple[str, ...]  # after `plugman mcp add NAME --scope project`
    field: str  # what the error names


CASES = [
    Case("pgpassword-env", ("--env", f"PGPASSWORD={SECRET}", "--", "psql-mcp"), "env.PGPASSWORD"),
    Case("aws-secret-env", ("--env", f"AWS_SECRET_ACCESS_KEY={SECRET}", "--", "aws-mcp"),
         "env.AWS_SECRET_ACCESS_KEY"),
    Case("url-password-arg", ("--", "pg-mcp", f"postgres://app:{SECRET}@db.internal/app"),
         "args[0]"),
    Case("url-password-env", ("--env", f"DATABASE_URL=postgres://app:{SECRET}@db/app", "--",
                              "pg-mcp"), "env.DATABASE_URL"),
    Case("api-key-option", ("--", "search-mcp", "--api-key", SECRET), "args[1]"),
    Case("token-equals-option", ("--", "gh-mcp", f"--token={SECRET}"), "args[0]"),
    Case("password-option", ("--", "db-mcp", "--password", SECRET, "--verbose"), "args[1]"),
    Case("bearer-header", ("--transport", "http", "https://mcp.example.com/mcp",
                           "--header", f"Authorization: Bearer {SECRET}"),
         "headers.Authorization"),
    Case("url-query-key", ("--transport", "http", f"https://mcp.example.com/mcp?api_key={SECRET}"),
         "url"),
]  # fmt: skip


class Machine:
    def __init__(self, tmp: Path, plugman_home: Path, seen: list[str]) -> None:
        self.seen = seen
        self.project = tmp / "project"
        self.project.mkdir()
        git(self.project, "init", "-q")
        self.vars = {**os.environ, "PLUGMAN_HOME": str(plugman_home), "PLUGMAN_SECRETS": "file"}
        self.vars.pop("DBUS_SESSION_BUS_ADDRESS", None)

    def run(self, *args: str, code: int = 0, stdin: str = "") -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "plugman", "--project", str(self.project), *args],
            env=self.vars, cwd=self.project, input=stdin, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        self.seen += [done.stdout, done.stderr]
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done


@pytest.fixture
def machine(tmp_path: Path, isolated_home: Path, secret_scan: list[str]) -> Machine:
    return Machine(tmp_path, isolated_home, secret_scan)


def steps(hint: str) -> list[list[str]]:
    """The commands the hint gives, as argv lists (without the leading `plugman`)."""
    body = hint.split("keep the value out of it: ", 1)[1].split(" (mcp vars keeps", 1)[0]
    found = [shlex.split(step) for step in body.split("; then ")]
    assert all(words[0] == "plugman" for words in found), found
    return [words[1:] for words in found]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_literal_credential_into_project_file_is_refused(machine: Machine, case: Case) -> None:
    """Attack: `mcp add --scope project` with a literal credential bound for the committed
    `.mcp.json`. Invariant: refused (exit 2), nothing written, the field named and the value
    shown nowhere; the hint's own commands (`mcp vars set`, `mcp add … ${VAR}`) then work: the
    file holds the reference and the resolved config the value."""
    before = snapshot(machine.project)
    done = machine.run("mcp", "add", "srv", "--scope", "project", *case.add, code=2)
    assert f"{case.field} holds a literal credential" in done.stderr, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(machine.project) == before
    for argv in steps(done.stderr):
        stdin = SECRET + "\n" if argv[:2] == ["mcp", "vars"] else ""
        machine.run(*argv, stdin=stdin)
    written = (machine.project / ".mcp.json").read_text()
    assert SECRET not in written and "${" in written
    machine.run("trust", "approve", "--all")
    resolved = machine.run("config", "resolve", "--json", "--show-secrets").stdout
    assert SECRET in json.dumps(json.loads(resolved)["mcpServers"]["srv"])


def test_same_entry_at_user_scope_is_kept_as_given(machine: Machine) -> None:
    """The legitimate variant: the user's own scope is not committed, so a literal there is
    the user's choice and is taken (and masked in what plugman shows)."""
    machine.run("mcp", "add", "db", "--scope", "user", "--env", f"PGPASSWORD={SECRET}", "--", "x")
    shown = machine.run("mcp", "get", "db", "--json").stdout
    assert SECRET not in shown and "PGPASSWORD" in shown


def value_of(word: str) -> str:
    """What `mcp add` writes of one word: an `--env` pair's value, a header's, else itself."""
    if "=" in word and "://" not in word:
        return word.partition("=")[2]
    return word.partition(": ")[2] or word


@pytest.mark.parametrize(
    "add",
    [
        ("--env", "PGPASSWORD=${PGPASSWORD}", "--env", "PGHOST=db.internal", "--", "psql-mcp"),
        ("--", "search-mcp", "--api-key", "${SEARCH_KEY}", "--key-file", "/etc/ssl/key.pem"),
        ("--", "pg-mcp", "postgres://app@db.internal/app", "--token-url", "https://x/t"),
        ("--transport", "http", "https://mcp.example.com/mcp", "--header",
         "Authorization: Bearer ${API_TOKEN}"),
    ],
    ids=["env-reference", "option-reference-and-path", "url-without-password", "header-ref"],
)  # fmt: skip
def test_references_and_non_secrets_go_into_the_project_file(
    machine: Machine, add: tuple[str, ...]
) -> None:
    """No false positive: references, paths, a URL without a password and options that are
    not credentials (`--key-file`, `--token-url`) are written into `.mcp.json` as given."""
    machine.run("mcp", "add", "srv", "--scope", "project", *add)
    written = json.loads((machine.project / ".mcp.json").read_text())["mcpServers"]["srv"]
    text = json.dumps(written)
    given = [w for w in add if not w.startswith("--") or w in ("--key-file", "--token-url")]
    for word in given:  # an env pair's or header's value, an argument, the URL: all kept
        assert value_of(word) in text, (word, written)


def test_export_into_project_file_names_the_mcp_vars_way(machine: Machine) -> None:
    """Attack: a project's plugman.toml server with a literal `--api-key VALUE` (args were not
    looked at before) exported into Cursor's committed project file. Invariant
    (agents.export_entries.refused): left out with a note giving `plugman mcp vars set`; the
    reference variant beside it is exported."""
    (machine.project / "plugman.toml").write_text(
        "[mcp_servers.leaky]\n"
        f'command = "search-mcp"\nargs = ["--api-key", "{SECRET}"]\n\n'
        "[mcp_servers.clean]\n"
        'command = "search-mcp"\nargs = ["--api-key", "${SEARCH_KEY}"]\n'
    )
    machine.run("trust", "approve", "--all")
    done = machine.run("export", "--target", "cursor", "--scope", "project", "--write")
    written = (machine.project / ".cursor" / "mcp.json").read_text()
    assert SECRET not in written
    assert set(json.loads(written)["mcpServers"]) == {"clean"}
    assert "leaky: not exported: args[1] holds a literal secret" in done.stderr
    assert "plugman mcp vars set LEAKY_API_KEY" in done.stderr
