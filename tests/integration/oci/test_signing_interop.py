"""Interoperability of plugman's signatures with the peer tool, sigstore-js, run by node
offline against a real registry on 127.0.0.1 (no referrers API: the referrers tag):
`@sigstore/verify` verifies the bundle plugman attached over the artifact's manifest with the
signer's public key, and a bundle made with node's crypto and attached by `@sigstore/oci`'s
`attachArtifactToImage` is accepted by plugman's install, which pins its signer.

The npm packages are installed once, pinned, under `.tools/sigstore-js` (as the agents are);
PLUGMAN_SIGSTORE_JS names another prefix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from bench.claude_code import DEFAULT_TOOLS_DIR, installed_npm_version
from tests.integration.agents import _install_lock
from tests.integration.helpers import run
from tests.integration.oci.registry import Registry
from tests.integration.oci.test_signing import _key, _plugin

PACKAGES = {"@sigstore/verify": "4.1.3", "@sigstore/bundle": "5.0.1", "@sigstore/oci": "0.7.2"}
SCRIPTS = Path(__file__).parent / "sigstore_js"


def _sigstore_js() -> Path:
    """The npm prefix holding the pinned sigstore-js packages, installed if needed."""
    prefix = Path(os.environ.get("PLUGMAN_SIGSTORE_JS") or DEFAULT_TOOLS_DIR / "sigstore-js")
    with _install_lock(prefix.parent, prefix.name):
        if all(installed_npm_version(prefix, p) == v for p, v in PACKAGES.items()):
            return prefix
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not on PATH: install Node.js to run the sigstore-js interop test")
        specs = [f"{p}@{v}" for p, v in PACKAGES.items()]
        cmd = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *specs]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
    return prefix


def _node(prefix: Path, script: str, *args: str) -> dict[str, object]:
    env = {**os.environ, "NODE_PATH": str(prefix / "node_modules")}
    done = subprocess.run(
        ["node", str(SCRIPTS / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_sigstore_js_verifies_plugmans_signature_and_plugman_accepts_sigstore_js(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = _sigstore_js()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keys").mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "author-home"))
    monkeypatch.setenv("PLUGMAN_MANAGED_DIR", str(tmp_path / "managed"))
    alice = _key(tmp_path, "alice")
    plugin = _plugin(tmp_path / "tool", "1.0.0")
    published = run(
        "publish", str(plugin), registry.ref("team/tool", "1.0.0"), "--sign", alice["key"]
    )

    verified = _node(prefix, "verify.js", registry.host, "team/tool", "1.0.0")
    assert verified["digest"] == published["digest"]
    assert verified["signatures"] == [
        {"verified": True, "hint": alice["fingerprint"], "fingerprint": alice["fingerprint"]}
    ]

    # the other way: signed and attached by sigstore-js, installed by plugman
    run("publish", str(_plugin(plugin, "2.0.0")), registry.ref("team/tool", "2.0.0"))
    attached = _node(prefix, "attach.js", registry.host, "team/tool", "2.0.0")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "home"))
    run("install", registry.ref("team/tool", "2.0.0"), "--scope", "project", project=project)
    (pin,) = tomllib.loads((project / "plugman.lock").read_text())["plugins"]
    assert pin["source"]["digest"] == attached["digest"]
    assert pin["signer"] == attached["fingerprint"]
