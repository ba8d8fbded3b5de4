"""Issue 26 point 1 with a real registry on 127.0.0.1 (docker-registry, no referrers API: the
signatures go through the referrers tag): publish signed → install verifies and pins the
signer (lock and record) → a re-publish signed by another key is refused by update, let in by
--allow-signer-change; a policy that requires signatures refuses an unsigned artifact and one
signed by another key; a tampered signature is refused; nothing is installed when refused."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from plugman.core import signatures
from plugman.core.oci import client, referrers
from plugman.core.oci.reference import parse
from plugman.core.paths import Paths
from plugman.core.state import InstallRecord
from plugman.manifest import schema
from plugman.plugins.supply_chain import signing
from tests.integration.helpers import fails, run, snapshot
from tests.integration.oci.registry import Registry


def _plugin(folder: Path, version: str, text: str = "Say hello.") -> Path:
    if not folder.exists():
        run("new", folder.name, "--with", "skill", "--dir", str(folder))
    manifest = folder / ".claude-plugin" / "plugin.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(data | {"version": version}))
    (folder / "skills" / "hello" / "SKILL.md").write_text(
        f"---\nname: hello\ndescription: Greets.\n---\n{text}\n"
    )
    return folder


def _key(tmp_path: Path, name: str) -> dict[str, str]:
    made = run("key", "generate", "--output", str(tmp_path / "keys" / name))
    return {"key": str(tmp_path / "keys" / f"{name}.key"), "fingerprint": made["fingerprint"]}


def _pin(project: Path) -> dict[str, object]:
    (pin,) = tomllib.loads((project / "plugman.lock").read_text())["plugins"]
    return dict(pin)


def _record(project: Path, plugin_id: str = "tool@direct") -> object:
    paths = Paths.from_env(project=project)
    return InstallRecord.load(paths, "project").plugins[plugin_id]


@pytest.fixture
def author(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keys").mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(tmp_path / "author-home"))
    monkeypatch.setenv("PLUGMAN_MANAGED_DIR", str(tmp_path / "managed"))
    return tmp_path


def test_signed_install_pins_the_signer_and_update_refuses_another(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _key(author, "alice"), _key(author, "bob")
    target = registry.ref("team/tool", "stable")
    plugin = _plugin(author / "tool", "1.0.0")
    published = run("publish", str(plugin), target, "--sign", alice["key"])
    assert published["signer"] == alice["fingerprint"]

    project = author / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("install", target, "--scope", "project", project=project)
    assert _pin(project)["signer"] == alice["fingerprint"]
    locked = tomllib.loads((project / "plugman.lock").read_text())
    lock_schema = "plugman-lock.schema.json"
    assert schema.check(locked, schema.load(lock_schema), lock_schema, ()) == []
    entry = _record(project)
    assert entry.signer == alice["fingerprint"]  # type: ignore[attr-defined]
    (listed,) = run("list", project=project)["plugins"]
    assert listed["signer"] == alice["fingerprint"]
    paths = Paths.from_env(project=project)
    assert signing.recheck(paths, entry) is None  # type: ignore[arg-type]

    _plugin(plugin, "1.1.0", "Say hello twice.")
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(plugin), target, "--sign", bob["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    before = snapshot(project, author / "home" / "state")
    shown = fails("update", "tool", project=project)
    assert f"was signed by {alice['fingerprint']}" in shown
    assert f"signed by {bob['fingerprint']}" in shown and "--allow-signer-change" in shown
    assert snapshot(project, author / "home" / "state") == before

    from plugman.cli import invoke

    argv = ["--project", str(project), "update", "tool", "--allow-signer-change"]
    result = invoke(argv)
    assert result.exit_code == 0, result.output
    assert f"signer {alice['fingerprint']} replaced by signer {bob['fingerprint']}" in (
        result.output
    )
    assert _pin(project)["signer"] == bob["fingerprint"]
    assert _pin(project)["version"] == "1.1.0"
    entry = _record(project)
    assert entry.signer == bob["fingerprint"]  # type: ignore[attr-defined]
    assert signing.recheck(paths, entry) is None  # type: ignore[arg-type]
    kept = author / "home" / "data" / "signatures"
    (evidence,) = [p for p in kept.iterdir() if p.stem == entry.source["digest"].replace(":", "-")]  # type: ignore[attr-defined]
    good = evidence.read_bytes()
    data = json.loads(good)
    data["manifest"] = signatures.base64.b64encode(b'{"schemaVersion":2}').decode()
    evidence.write_text(json.dumps(data))
    assert "the kept manifest is not the one installed" in str(signing.recheck(paths, entry))  # type: ignore[arg-type]
    data = json.loads(good)
    data["signatures"][0]["publicKey"] = json.loads(good)["signatures"][0]["publicKey"][:-40]
    evidence.write_text(json.dumps(data))
    assert "does not verify" in str(signing.recheck(paths, entry))  # type: ignore[arg-type]
    evidence.unlink()
    assert "was not kept" in str(signing.recheck(paths, entry))  # type: ignore[arg-type]
    evidence.write_bytes(good)
    assert "pinned to signer" in str(
        signing.recheck(paths, entry._replace(signer=alice["fingerprint"]))  # type: ignore[attr-defined]
    )

    # unsigned now: refused like a change of signer
    _plugin(plugin, "1.2.0", "Say hello thrice.")
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(plugin), target)
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    shown = fails("update", "tool", project=project)
    assert f"was signed by {bob['fingerprint']}" in shown and "is not signed" in shown


def test_a_lock_pins_the_signer_for_sync_and_a_marketplace_entry(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _key(author, "alice"), _key(author, "bob")
    target = registry.ref("team/tool", "1")
    plugin = _plugin(author / "tool", "1.0.0")
    run("publish", str(plugin), target, "--sign", alice["key"])
    market = author / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    entry = {"name": "tool", "source": {"source": "oci", "ref": target.removeprefix("oci://")}}
    catalog = {"name": "acme", "owner": {"name": "Acme"}, "plugins": [entry]}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(catalog))
    project = author / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("marketplace", "add", str(market))
    run("install", "tool@acme", "--scope", "project", project=project)
    assert _pin(project)["signer"] == alice["fingerprint"]
    digest = str(_pin(project)["source"]["digest"])  # type: ignore[index]

    # the same manifest signed by bob too: the lock's signer (alice) stays the one recorded
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("sign", f"oci://{registry.host}/team/tool@{digest}", "--key", bob["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("sync", project=project)
    run("lock", project=project)
    assert _pin(project)["signer"] == alice["fingerprint"]
    assert _record(project, "tool@acme").signer == alice["fingerprint"]  # type: ignore[attr-defined]

    # a new version signed by alice, then bob: update keeps alice, the pinned one
    _plugin(plugin, "1.1.0", "Say hello anew.")
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(plugin), target, "--sign", alice["key"])
    run("sign", target, "--key", bob["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("update", "tool", project=project)
    assert (_pin(project)["version"], _pin(project)["signer"]) == ("1.1.0", alice["fingerprint"])

    # only bob signs the next one: sync against the lock refuses it
    _plugin(plugin, "1.2.0", "Say hello once more.")
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(plugin), target, "--sign", bob["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    before = snapshot(project)
    shown = fails("sync", project=project)
    assert f"was signed by {alice['fingerprint']}" in shown and "plugman.lock pins" in shown
    assert snapshot(project) == before

    # elsewhere, from the lock: the pinned signer is checked again
    elsewhere = author / "elsewhere"
    elsewhere.mkdir()
    for name in ("plugman.toml", "plugman.lock"):
        (elsewhere / name).write_bytes((project / name).read_bytes())
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home-b"))
    run("sync", "--frozen", project=elsewhere)
    assert _record(elsewhere, "tool@acme").signer == alice["fingerprint"]  # type: ignore[attr-defined]
    lock = (elsewhere / "plugman.lock").read_text()
    (elsewhere / "plugman.lock").write_text(
        lock.replace(alice["fingerprint"], "sha256:" + "0" * 64)
    )
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home-c"))
    shown = fails("sync", "--frozen", project=elsewhere)
    assert "was signed by sha256:000" in shown and "plugman.lock pins the signer" in shown
    store = author / "home-c" / "data" / "store"
    assert not store.exists() or not [p for p in store.iterdir() if not p.name.startswith(".")]


def test_policy_refuses_unsigned_and_other_signers_and_fails_closed(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _key(author, "alice"), _key(author, "bob")
    plugin = _plugin(author / "tool", "1.0.0")
    unsigned, by_bob = registry.ref("team/tool", "plain"), registry.ref("team/tool", "bob")
    run("publish", str(plugin), unsigned)
    run("publish", str(_plugin(plugin, "1.0.1")), by_bob, "--sign", bob["key"])
    managed = author / "managed"
    managed.mkdir()
    (managed / "managed-settings.toml").write_text(
        f'[[requiredSignatures]]\nsources = ["{registry.host}/team/*"]\n'
        f'signers = ["../keys/alice.pub"]\n'
    )
    project = author / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    before = snapshot(project)
    shown = fails("install", unsigned, "--scope", "project", project=project)
    assert "requiredSignatures[0]" in shown and "requires a signature" in shown
    assert "it is not signed" in shown and "managed-settings.toml" in shown
    shown = fails("install", by_bob, "--scope", "project", project=project)
    assert f"requires a signature by {alice['fingerprint']}" in shown
    assert f"signed by {bob['fingerprint']}" in shown
    assert snapshot(project) == before
    assert not (author / "home" / "data" / "signatures").exists()  # nothing kept either

    # alice signs: let in
    signed = registry.ref("team/tool", "alice")
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(_plugin(plugin, "1.0.2")), signed, "--sign", alice["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("install", signed, "--scope", "project", project=project)
    assert _pin(project)["signer"] == alice["fingerprint"]

    # a rule plugman cannot read refuses everything, saying so
    (managed / "managed-settings.toml").write_text('[[requiredSignatures]]\nsigners = "x"\n')
    shown = fails("install", unsigned, "--scope", "local", project=project)
    assert "cannot be read (signers must be a list of strings)" in shown


def test_a_tampered_or_misplaced_signature_is_refused(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = _key(author, "alice")
    plugin = _plugin(author / "tool", "1.0.0")
    target = registry.ref("team/tool", "1.0.0")
    run("publish", str(plugin), target, "--sign", alice["key"])
    paths = Paths.from_env()
    ref = parse(target)
    with client.connect(ref, paths) as registry_client:
        digest = client.resolve(registry_client, ref)
        (listed,) = referrers.referrers(registry_client, ref, digest, signatures.BUNDLE)
        found = referrers.raw(registry_client, ref, str(listed["digest"]))
    assert found is not None
    bundle_digest = json.loads(found[0])["layers"][0]["digest"]
    blob = registry.blob_file(bundle_digest)
    original = blob.read_bytes()
    bundle = json.loads(original)
    signature = bytearray(signatures.base64.b64decode(bundle["messageSignature"]["signature"]))
    signature[-1] ^= 0x01
    bundle["messageSignature"]["signature"] = signatures.base64.b64encode(signature).decode()
    blob.write_bytes(json.dumps(bundle).encode())

    project = author / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    before = snapshot(project)
    shown = fails("install", target, "--scope", "project", project=project)
    assert f"the signature of {ref.registry}/team/tool" in shown and "does not verify" in shown
    assert snapshot(project) == before
    assert not (author / "home" / "data" / "signatures").exists()

    # a valid bundle of another artifact's manifest, attached to this one: refused too
    blob.write_bytes(original)
    other = registry.ref("team/other", "1.0.0")
    run("publish", str(_plugin(author / "other", "2.0.0")), other)
    key = signing.read_key(Path(alice["key"]), {})
    with client.connect(ref, paths) as registry_client:
        elsewhere = referrers.raw(
            registry_client, parse(other), client.resolve(registry_client, parse(other))
        )
        assert elsewhere is not None
        wrong = signatures.sign(key, elsewhere[0])
        referrers.attach(
            registry_client,
            ref,
            digest,
            signatures.BUNDLE,
            wrong,
            {signing.PUBLIC_KEY: signatures.public_pem(key.public_key()).decode()},
        )
    shown = fails("install", target, "--scope", "project", project=project)
    assert "message digest is not the artifact's" in shown
    assert snapshot(project) == before


def _json_error(*args: str) -> tuple[int, dict[str, object]]:
    from plugman.cli import invoke

    result = invoke([*args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)["error"]


def test_bad_input_is_said_plainly_with_its_exit_code(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = author / "keys"
    run("key", "generate", "--output", str(keys / "plain"))
    before = snapshot(keys)
    code, error = _json_error("key", "generate", "--output", str(keys / "plain"))
    assert code == 2 and "does not overwrite a key" in str(error["message"])
    assert snapshot(keys) == before
    code, error = _json_error("key", "generate", "--output", str(author / "nope" / "k"))
    assert code == 2 and "does not exist" in str(error["message"])

    monkeypatch.setenv("PLUGMAN_SIGNING_PASSWORD", "correct horse")
    made = run("key", "generate", "--output", str(keys / "locked"))
    assert made["encrypted"] is True
    assert (keys / "locked.key").stat().st_mode & 0o777 == 0o600
    assert (keys / "locked.key").read_text().startswith("-----BEGIN ENCRYPTED PRIVATE KEY")

    plugin = _plugin(author / "tool", "1.0.0")
    target = registry.ref("team/tool", "1.0.0")
    storage = snapshot(registry.storage)
    monkeypatch.setenv("PLUGMAN_SIGNING_PASSWORD", "wrong")
    code, error = _json_error("publish", str(plugin), target, "--sign", str(keys / "locked.key"))
    assert (code, error["message"]) == (2, "wrong password for the signing key")
    monkeypatch.delenv("PLUGMAN_SIGNING_PASSWORD")
    code, error = _json_error("publish", str(plugin), target, "--sign", str(keys / "locked.key"))
    assert code == 2 and "encrypted and no password" in str(error["message"])
    code, error = _json_error("publish", str(plugin), target, "--sign", str(keys / "gone.key"))
    assert code == 2 and "cannot read the signing key" in str(error["message"])
    code, error = _json_error("publish", str(plugin), target, "--sign", str(keys / "plain.pub"))
    assert code == 2 and error["message"] == "not a PEM private key"
    assert snapshot(registry.storage) == storage  # nothing was pushed

    key = str(keys / "plain.key")
    code, error = _json_error("sign", target.removeprefix("oci://"), "--key", key)
    assert code == 2 and "plugman signs plugin artifacts in OCI registries" in str(error["message"])
    code, error = _json_error("sign", "oci://127.0.0.1:9/team/tool:1", "--key", key)
    assert code == 1 and "cannot reach the registry 127.0.0.1:9" in str(error["message"])
    code, error = _json_error("sign", registry.ref("team/none", "1"), "--key", key)
    assert code == 1 and "not found" in str(error["message"])


def test_an_unsigned_plugin_that_becomes_signed_is_updated_and_its_signer_recorded(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = _key(author, "alice")
    target = registry.ref("team/tool", "stable")
    plugin = _plugin(author / "tool", "1.0.0")
    run("publish", str(plugin), target)
    project = author / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("install", target, "--scope", "project", project=project)
    assert "signer" not in _pin(project)
    assert _record(project).signer is None  # type: ignore[attr-defined]

    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(_plugin(plugin, "1.1.0")), target, "--sign", alice["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("update", "tool", project=project)
    assert _pin(project)["signer"] == alice["fingerprint"]
    assert _record(project).signer == alice["fingerprint"]  # type: ignore[attr-defined]


def test_signing_and_verifying_behind_bearer_tokens(
    token_registry: tuple[Registry, object], author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, _tokens = token_registry
    monkeypatch.setenv("DOCKER_CONFIG", str(found.docker_config(author / "docker")))
    alice = _key(author, "alice")
    target = found.ref("team/tool", "1.0.0")
    published = run(
        "publish", str(_plugin(author / "tool", "1.0.0")), target, "--sign", alice["key"]
    )
    assert published["signer"] == alice["fingerprint"]
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("install", target)
    (listed,) = run("list")["plugins"]
    assert listed["signer"] == alice["fingerprint"]


def test_installing_again_keeps_the_pinned_signer(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _key(author, "alice"), _key(author, "bob")
    target = registry.ref("team/tool", "stable")
    plugin = _plugin(author / "tool", "1.0.0")
    run("publish", str(plugin), target, "--sign", alice["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("install", target)
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "author-home"))
    run("publish", str(_plugin(plugin, "2.0.0")), target, "--sign", bob["key"])
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    shown = fails("install", target)
    assert f"was signed by {alice['fingerprint']}" in shown and "uninstall it first" in shown
    (listed,) = run("list")["plugins"]
    assert (listed["version"], listed["signer"]) == ("1.0.0", alice["fingerprint"])


def test_a_users_own_rule_requires_signatures_and_a_projects_is_ignored(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = _key(author, "alice")
    plugin = _plugin(author / "tool", "1.0.0")
    unsigned, signed = registry.ref("team/tool", "plain"), registry.ref("team/tool", "signed")
    run("publish", str(plugin), unsigned)
    run("publish", str(_plugin(plugin, "1.0.1")), signed, "--sign", alice["key"])
    home = author / "home"
    monkeypatch.setenv("PLUGMAN_HOME", str(home))
    project = author / "project"
    project.mkdir()
    rule = f'[[requiredSignatures]]\nsigners = ["{alice["fingerprint"]}"]\n'
    (project / "plugman.toml").write_text(rule)  # a project's plugman.toml holds no policy
    run("install", unsigned, "--scope", "local", project=project)
    user = home / "config" / "plugman.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(rule)
    before = snapshot(home / "state", project)
    shown = fails("install", unsigned, "--scope", "user", project=project)
    assert f"requiredSignatures[0] in {user}" in shown.replace("\n", "")
    assert "it is not signed" in shown
    assert snapshot(home / "state", project) == before
    run("install", signed, "--scope", "user", project=project)
    resolved = run("config", "resolve", project=project)
    ignored = [d["file"] for d in resolved["diagnostics"] if d["code"] == "ignored-key"]
    assert len(ignored) == 1 and "requiredSignatures" in json.dumps(resolved["diagnostics"])
    assert Path(ignored[0]).name == "plugman.toml" and "config" not in Path(ignored[0]).parts


def test_audit_rechecks_the_kept_signatures_offline(
    registry: Registry, author: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plugman audit`'s signature check: clean for a signed install; a kept signature altered
    on disk, or a lock pinning another signer, is a finding (exit 1) until the fix it names."""
    alice = _key(author, "alice")
    target = registry.ref("team/tool", "1.0.0")
    run("publish", str(_plugin(author / "tool", "1.0.0")), target, "--sign", alice["key"])
    project = author / "project"
    project.mkdir()
    monkeypatch.setenv("PLUGMAN_HOME", str(author / "home"))
    run("install", target, "--scope", "project", project=project)
    assert run("audit", project=project)["findings"] == []

    [kept] = (author / "home" / "data" / "signatures").iterdir()
    evidence = json.loads(kept.read_text())
    good = kept.read_bytes()
    bundle = json.loads(evidence["signatures"][0]["bundle"])
    signed = bundle["messageSignature"]["signature"]
    bundle["messageSignature"]["signature"] = ("A" if signed[0] != "A" else "B") + signed[1:]
    evidence["signatures"][0]["bundle"] = json.dumps(bundle)
    kept.write_text(json.dumps(evidence))
    said = fails("audit", "--format", "json", project=project)
    [finding] = json.loads(said)["findings"]
    assert finding["check"] == "signature" and "tool@direct (project scope)" in finding["message"]
    assert "does not verify" in finding["message"]
    assert finding["fix"] == "install what the lock pins, verified again: plugman sync --frozen"
    run("sync", "--frozen", project=project)
    assert kept.read_bytes() == good
    assert run("audit", project=project)["findings"] == []

    lock = project / "plugman.lock"
    lock.write_text(lock.read_text().replace(alice["fingerprint"], "sha256:" + "0" * 64))
    [finding] = json.loads(fails("audit", "--format", "json", project=project))["findings"]
    assert f"plugman.lock pins signer sha256:{'0' * 64}" in finding["message"]
