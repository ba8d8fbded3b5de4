"""Approvals of project-supplied MCP servers and hooks, kept outside the repository.

An approval is keyed to the entry's content hash (plugman.resolve.content_hash), so a changed
command is pending again; nothing inside a project can approve itself.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from plugman import scopes
from plugman.errors import PlugmanError
from plugman.paths import Paths
from plugman.resolve import Layers, content_hash, resolve
from plugman.session import session
from plugman.state import read_state

FORMAT = 1


def trust_path(paths: Paths) -> Path:
    return paths.state_dir / "trust.json"


def approvals(paths: Paths) -> dict[str, dict[str, Any]]:
    data = read_state(trust_path(paths), "move it away; approve the project's entries again")
    found: dict[str, dict[str, Any]] = (data or {}).get("approvals", {})
    return found


def approved(paths: Paths) -> frozenset[str]:
    return frozenset(approvals(paths))


def project_entries(layers: Layers) -> dict[str, tuple[str, str, str]]:
    """content hash -> (kind, name, file) of every project-scope server and hook."""
    found = {
        content_hash(s.name, s.entry): ("server", s.name, s.origin.file)
        for s in layers.servers
        if s.origin.scope == "project"
    }
    for hook in layers.hooks:
        if hook.origin.scope == "project":
            name = f"{hook.event}:{hook.matcher or '*'}"
            found[content_hash(name, hook.handler)] = ("hook", name, hook.origin.file)
    return found


def listing(paths: Paths) -> list[dict[str, Any]]:
    """Every project entry: approved or pending."""
    known = approvals(paths)
    rows = []
    for digest, (kind, name, file) in sorted(
        project_entries(scopes.load(paths).layers).items(), key=lambda item: item[1]
    ):
        state = "approved" if digest in known else "pending"
        rows.append({"kind": kind, "name": name, "file": file, "state": state, "hash": digest})
    return rows


def approve(paths: Paths, names: list[str], everything: bool = False) -> list[dict[str, Any]]:
    """Approve pending project entries (by name, or all of them)."""
    return _change(paths, names, everything, approving=True)


def revoke(paths: Paths, names: list[str], everything: bool = False) -> list[dict[str, Any]]:
    return _change(paths, names, everything, approving=False)


def _change(
    paths: Paths, names: list[str], everything: bool, approving: bool
) -> list[dict[str, Any]]:
    rows = [r for r in listing(paths) if everything or r["name"] in names]
    unknown = sorted(set(names) - {r["name"] for r in rows})
    if unknown:
        raise PlugmanError(
            f"no project server or hook named {', '.join(unknown)}", hint="run: plugman trust list"
        )
    with session(paths) as work:
        known = approvals(paths)
        for row in rows:
            if approving:
                known[row["hash"]] = {
                    "kind": row["kind"],
                    "name": row["name"],
                    "file": row["file"],
                    "project": str(paths.project_dir),
                    "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            else:
                known.pop(row["hash"], None)
        body = {"format": FORMAT, "approvals": dict(sorted(known.items()))}
        data = (json.dumps(body, indent=2) + "\n").encode() if known else None
        work.tx.write(trust_path(paths), data)
    return rows


def resolved_here(
    paths: Paths, env: dict[str, str], references: bool = False, only: str | None = None
) -> tuple[scopes.Scopes, Any]:
    """This project's scopes (or `only` one: see `scopes.load`) and their resolution with the
    stored approvals."""
    found = scopes.load(paths, only)
    return found, resolve(found.layers, found.policy, env, approved(paths), references)
