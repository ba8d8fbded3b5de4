"""`plugman audit`: an offline gate for CI. It checks that what a project runs is what it pins,
and says each finding with the command that fixes it; it never fetches, installs or writes.

The checks are data: one `Check` row each in `CHECKS` (its id, which is the SARIF rule id, what
it checks, and the function that does it, which takes the `Given` and returns `Finding`s;
`audit.model`), each in the module of what it reads (`records`, `agents`, `servers`):

- `store`: every plugin an install record or plugman.lock pins is in the store, and its tree
  still hashes to the pinned content hash (a tree altered or deleted on disk, a lock pin not
  installed or installed with other content);
- `drift`: the agent files plugman deployed (servers and hooks written into agents' files,
  `agents.export_record`; skills, commands, subagents and Claude Code plugin links,
  `agents.artifacts`) are as plugman wrote them, told by the same detectors `plugman doctor`
  uses (`doctor.differences`, `artifacts.drift`), one finding per file; a file a deployment
  left to the user where it deploys one is drift too (`audit.agents`);
- `signature`: every signed plugin's signature, kept at install, still verifies (offline) over
  the manifest it installed, by the signer its install record and plugman.lock pin
  (`plugins.signing.recheck`);
- `hidden-text`: no installed plugin or lock entry was let in with hidden text
  (`hidden_text = "allowed"`, from `install --allow-hidden-text`);
- `unpinned-server`: every MCP server, a plugin's or the user's own, as `config resolve` reads
  them, launches a downloaded package at one exact version (`audit.servers`).

Every finding is an error (the command exits 1): a CI gate that lets a finding through unless
someone reads the log gates nothing. A check that cannot read a file it needs (a broken state
file) says so as a finding of its own check, with the file.
"""

from __future__ import annotations

from collections.abc import Mapping

from plugman.core.errors import PlugmanError, UsageError
from plugman.core.paths import Paths
from plugman.core.state import SCOPES, Scope
from plugman.doctor.audit.agents import drift
from plugman.doctor.audit.model import Audit, Check, Finding, Given
from plugman.doctor.audit.records import hidden_text, signatures, store
from plugman.doctor.audit.servers import unpinned_servers

__all__ = ["Audit", "Finding", "audit"]  # its face: what the rest of plugman uses

PROJECT_FILES = ("plugman.toml", "plugman.lock", ".mcp.json")  # what makes a project to audit


def audit(paths: Paths, env: Mapping[str, str], scope: Scope | None = None) -> Audit:
    """Every check over `scope` (every scope when None); a usage error without a project
    (unless only the user scope is asked for)."""
    if scope != "user" and not any((paths.project_dir / f).exists() for f in PROJECT_FILES):
        raise UsageError(
            f"no project to audit in {paths.project_dir}: it has no plugman.toml, plugman.lock "
            "or .mcp.json",
            hint="run it in the project's folder or pass --project PATH (to audit only your "
            "user scope: plugman audit --scope user)",
        )
    given = Given(paths, env, (scope,) if scope else SCOPES)
    found: list[Finding] = []
    for check in CHECKS:
        try:
            found += check.run(given)
        except PlugmanError as exc:  # a broken file the check needs: the check did not run
            where = exc.where or str(paths.state_dir)
            fix = exc.hint or "fix or move away the file, then run plugman audit again"
            found.append(Finding(check.id, f"could not check: {exc.message}", fix, where))
    return Audit(paths.project_dir, given.scopes, CHECKS, found)


# The checks, in the order they run and are reported.
CHECKS: tuple[Check, ...] = (
    Check("store", "the store holds every pinned plugin tree, unchanged", store),
    Check("signature", "signed plugins verify by the signers their pins name", signatures),
    Check("drift", "the agent files plugman deployed are as it wrote them", drift),
    Check("hidden-text", "no plugin was let in with hidden text", hidden_text),
    Check("unpinned-server", "MCP servers launch pinned package versions", unpinned_servers),
)
