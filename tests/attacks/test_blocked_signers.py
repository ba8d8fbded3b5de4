"""Attack on `requiredSignatures`, with a real OCI registry (docker-registry on 127.0.0.1) and
real keys (`plugman key generate`, `publish --sign`): a rule requiring signer K for
`oci://REGISTRY/team/*` is walked around by spelling the registry or the repository another
way, in the rule or in the reference (docs/claude-format.md#organization-policy).

Invariant (`plugman.config.signers._matches` through `plugman.core.identity.oci`): sources are
compared as the registry reads them: the registry host as the URL standard parses it (case, a
trailing dot, IPv4 written short or as one number), the repository with `//`, `.` and `..`
segments resolved and without case, a reference by tag or by digest. Whatever the spelling, an
unsigned artifact and one signed by another key are refused (nothing installed) and the one
signed by K installs (the pair). `localhost` and `127.0.0.1` are two names for one machine
only through name resolution, which no canonical form sees: a rule names the registry the
way clients reach it (docs/claude-format.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.integration.helpers import fails, run, snapshot
from tests.integration.oci.registry import Registry, start


class Published(NamedTuple):
    registry: Registry
    port: str
    trusted: str  # K's fingerprint
    digests: dict[str, str]  # repository -> the digest published


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Published]:
    """One registry for the module: `team/signed:1` signed by K, `team/unsigned:1` unsigned,
    `team/other:1` signed by another key M (published by the author's own plugman home)."""
    root = tmp_path_factory.mktemp("signers")
    for registry in start(root / "registry", auth=False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("PLUGMAN_HOME", str(root / "author"))
            patch.setenv("PLUGMAN_MANAGED_DIR", str(root / "author" / "managed"))
            patch.chdir(root)
            (root / "keys").mkdir()
            keys = {
                name: run("key", "generate", "--output", str(root / "keys" / name))
                for name in ("k", "m")
            }
            digests = {}
            for repo, key in (("signed", "k"), ("unsigned", None), ("other", "m")):
                folder = root / repo
                run("new", repo, "--with", "skill", "--dir", str(folder))
                signing = ["--sign", str(root / "keys" / f"{key}.key")] if key else []
                done = run("publish", str(folder), registry.ref(f"team/{repo}", "1"), *signing)
                digests[repo] = str(done["digest"])
        port = registry.host.rpartition(":")[2]
        yield Published(registry, port, keys["k"]["fingerprint"], digests)


# (case, the rule's `sources` pattern, the host the references use); {port}: the registry's
SPELLINGS = [
    ("as-written", "oci://127.0.0.1:{port}/team/*", "127.0.0.1"),
    ("ipv4-short", "oci://127.1:{port}/team/*", "127.0.0.1"),
    ("ipv4-integer", "oci://2130706433:{port}/team/*", "127.0.0.1"),
    ("ipv4-hex", "0x7f.0.0.1:{port}/team/*", "127.0.0.1"),
    ("host-case", "oci://LOCALHOST:{port}/team/*", "localhost"),
    ("host-trailing-dot", "oci://localhost.:{port}/team/*", "localhost"),
    ("doubled-slash", "oci://127.0.0.1:{port}/team//*", "127.0.0.1"),
    ("dot-segment", "oci://127.0.0.1:{port}/./team/*", "127.0.0.1"),
    ("dot-dot-segment", "oci://127.0.0.1:{port}/x/../team/*", "127.0.0.1"),
    ("repository-case", "oci://127.0.0.1:{port}/TEAM/*", "127.0.0.1"),
    ("scheme-case", "OCI://127.0.0.1:{port}/team/*", "127.0.0.1"),
]


def _files(*roots: Path) -> dict[str, tuple[str, bytes]]:
    """Every file under `roots` but the lock a mutating command holds (and empty folders)."""
    found = snapshot(*roots).items()
    return {k: v for k, v in found if v[0] != "dir" and not k.endswith("/state/lock")}


def _require(pattern: str, fingerprint: str) -> None:
    managed = Path(os.environ["PLUGMAN_MANAGED_DIR"])
    managed.mkdir(parents=True, exist_ok=True)
    (managed / "managed-settings.toml").write_text(
        f"[[requiredSignatures]]\nsources = [{json.dumps(pattern)}]\n"
        f"signers = [{json.dumps(fingerprint)}]\n"
    )


@pytest.mark.parametrize(("case", "pattern", "host"), SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_required_signer_holds_for_a_respelled_source(
    published: Published, tmp_path: Path, case: str, pattern: str, host: str
) -> None:
    """Attack: the rule names the registry or the repository another way than the reference
    does (host case, trailing dot, IPv4 forms, `//`, `.`/`..`, repository case). Invariant:
    the unsigned artifact and the one signed by another key are refused, nothing installed;
    the one signed by K installs."""
    _require(pattern.format(port=published.port), published.trusted)
    project = tmp_path / "project"
    project.mkdir()
    base = f"oci://{host}:{published.port}/team"
    home = Path(os.environ["PLUGMAN_HOME"])
    before = _files(project, home)
    for rogue in ("unsigned", "other"):
        shown = fails("install", f"{base}/{rogue}:1", "--scope", "project", project=project)
        assert "requiredSignatures[0]" in shown and "refused by policy" in shown, shown
    assert _files(project, home) == before
    done = run("install", f"{base}/signed:1", "--scope", "project", project=project)
    assert [c["id"] for c in done["changes"]] == ["signed@direct"], done


def test_required_signer_holds_for_a_reference_by_digest(
    published: Published, tmp_path: Path
) -> None:
    """Attack: the rule names `team/*`; the reference pins a digest (`team/unsigned@sha256:…`)
    instead of a tag, on a re-spelled repository pattern. Invariant: matched without its
    digest, so still refused unsigned or signed by another key; K's by digest installs."""
    _require(f"oci://127.1:{published.port}/team//*", published.trusted)
    project = tmp_path / "project"
    project.mkdir()
    base = f"oci://127.0.0.1:{published.port}/team"
    for rogue in ("unsigned", "other"):
        ref = f"{base}/{rogue}@{published.digests[rogue]}"
        shown = fails("install", ref, "--scope", "project", project=project)
        assert "requiredSignatures[0]" in shown and "refused by policy" in shown, shown
    ref = f"{base}/signed@{published.digests['signed']}"
    done = run("install", ref, "--scope", "project", project=project)
    assert [c["id"] for c in done["changes"]] == ["signed@direct"], done
