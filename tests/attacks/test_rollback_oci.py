"""Rollback attacks through an OCI registry (issue 33 point 6; TUF's rollback attack), against a
real docker-registry on 127.0.0.1 and real signatures (`plugman key generate`, `publish --sign`).

The attacker controls the registry (or the tag): it cannot sign, but it can re-point the tag a
victim follows at any manifest the publisher once signed. Invariant attacked: `update` never
takes an installed plugin back to an older release (a lower version, or an older signed
manifest of the same version) unless the user passes `--allow-downgrade`; `outdated` shows it
as a downgrade; `publish` never silently re-points a tag at other content (`--force`).
Each refusal is paired with the same case done with the user's consent.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from plugman.cli import invoke
from plugman.cli.runner import Result
from plugman.core.oci.client import CREATED, MANIFEST
from plugman.core.paths import Paths
from plugman.core.state import InstalledPlugin, InstallRecord
from tests.integration.helpers import fails, run, snapshot
from tests.integration.oci.registry import Registry, start

T1, T2 = "1700000000", "1710000000"  # SOURCE_DATE_EPOCH of the first and second publish


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """One docker-registry for the module; each test uses its own repository."""
    yield from start(tmp_path_factory.mktemp("registry"), auth=False)


class World(NamedTuple):
    root: Path
    project: Path
    key: str  # the publisher's private key
    home: Path  # the victim's PLUGMAN_HOME


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keys").mkdir()
    run("key", "generate", "--output", str(tmp_path / "keys" / "publisher"))
    project = tmp_path / "project"
    project.mkdir()
    return World(tmp_path, project, str(tmp_path / "keys" / "publisher.key"), isolated_home)


def plugin(folder: Path, version: str, text: str) -> Path:
    """The plugin `tool` at `version`, its skill saying `text`."""
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (folder / "skills" / "hello").mkdir(parents=True, exist_ok=True)
    manifest = {"name": "tool", "version": version, "description": "A tool."}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "skills" / "hello" / "SKILL.md").write_text(
        f"---\nname: hello\ndescription: Greets.\n---\n{text}\n"
    )
    return folder


def publish(
    world: World,
    target: str,
    version: str,
    text: str,
    epoch: str,
    *extra: str,
    sign: bool = True,
) -> str:
    """Publish `tool` at `version` to `target` at time `epoch`; its manifest digest."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", epoch)
        folder = plugin(world.root / "src" / "tool", version, text)
        signing = ("--sign", world.key) if sign else ()
        done = run("publish", str(folder), target, *signing, *extra)
    return str(done["digest"])


def repoint(registry: Registry, target: str, digest: str) -> None:
    """The attacker's move: the tag of `target` made to name the manifest `digest` again (a
    manifest PUT of the old, validly signed bytes)."""
    repository, _, tag = target.removeprefix(f"oci://{registry.host}/").rpartition(":")
    connection = http.client.HTTPConnection(registry.host, timeout=10)
    try:
        connection.request(
            "GET", f"/v2/{repository}/manifests/{digest}", headers={"Accept": MANIFEST}
        )
        answer = connection.getresponse()
        body = answer.read()
        assert answer.status == 200, body
        connection.request(
            "PUT",
            f"/v2/{repository}/manifests/{tag}",
            body=body,
            headers={"Content-Type": MANIFEST},
        )
        put = connection.getresponse()
        assert put.status == 201, put.read()
        put.read()
    finally:
        connection.close()


def record(world: World) -> InstalledPlugin:
    paths = Paths.from_env(project=world.project)
    return InstallRecord.load(paths, "project").plugins["tool@direct"]


class Rollback(NamedTuple):
    first: tuple[str, str]  # version, epoch of the release the attacker replays
    second: tuple[str, str]  # version, epoch of the release the victim has
    signed: bool
    refusal: str  # what the refusal says


ROLLBACKS = {
    "older-signed-version": Rollback(
        ("1.0.0", T1), ("1.1.0", T2), True, "version 1.0.0 is older than the installed 1.1.0"
    ),
    "same-version-older-signed-manifest": Rollback(
        ("1.0.0", T1),
        ("1.0.0", T2),
        True,
        "its signed manifest was published 2023-11-14T22:13:20Z, before the installed one "
        "(2024-03-09T16:00:00Z), under the same version 1.0.0",
    ),
    "older-unsigned-version": Rollback(
        ("2.0.0", T1), ("2.0.1", T2), False, "version 2.0.0 is older than the installed 2.0.1"
    ),
    "older-prerelease-of-the-same-version": Rollback(
        ("3.0.0-rc.1", T1), ("3.0.0", T2), True, "version 3.0.0-rc.1 is older than"
    ),
}


@pytest.mark.parametrize("case", ROLLBACKS.values(), ids=list(ROLLBACKS))
def test_a_tag_repointed_at_an_older_release_is_refused_by_update(
    registry: Registry, world: World, case: Rollback, request: pytest.FixtureRequest
) -> None:
    """Attack: the followed tag is re-pointed at an older release the publisher once signed
    (or, unsigned, once pushed). Invariant: update refuses it, naming installed, offered and
    where, and changes nothing; outdated shows a downgrade, not an update; with
    --allow-downgrade (the user's consent) update takes it and records it."""
    target = registry.ref(f"rollback/{request.node.callspec.id}", "stable")
    old = publish(world, target, case.first[0], "Old text.", case.first[1], sign=case.signed)
    run("install", target, "--scope", "project", project=world.project)
    force = ("--force",) if case.first[0] == case.second[0] else ()
    new = publish(
        world, target, case.second[0], "New text.", case.second[1], *force, sign=case.signed
    )
    moved = run("update", "tool", project=world.project)["changes"]  # the legitimate update
    assert [(c["version"], c["pin"]) for c in moved] == [(case.second[0], new)]
    assert record(world).released == (
        "2024-03-09T16:00:00Z" if case.signed else None
    )  # the signed manifest's time, recorded

    repoint(registry, target, old)
    (row,) = run("outdated", project=world.project)["plugins"]
    assert (row["version"], row["available"], row["available_pin"]) == (
        case.second[0],
        case.first[0],
        old,
    )
    assert case.refusal in row["downgrade"]
    shown = cli("outdated", project=world.project)
    assert shown.exit_code == 0 and shown.stdout.startswith("tool@direct (project): DOWNGRADE")
    assert "--allow-downgrade" in shown.stdout

    watched = (world.project, world.home / "state")
    before = snapshot(*watched)
    refused = fails("update", "tool", project=world.project)
    assert "tool@direct (project) would go back to an older release" in refused
    assert case.refusal in refused and f"OCI artifact {target.removeprefix('oci://')}" in refused
    assert "plugman update --allow-downgrade tool@direct" in refused
    assert snapshot(*watched) == before
    assert record(world).source["digest"] == new

    done = cli("update", "tool", "--allow-downgrade", project=world.project)
    assert done.exit_code == 0, done.output
    assert "goes back" in done.stderr and case.first[0] in done.stdout
    assert record(world).source["digest"] == old
    assert record(world).version == case.first[0]
    assert record(world).released == ("2023-11-14T22:13:20Z" if case.signed else None)
    assert run("outdated", project=world.project)["plugins"] == []  # what it follows: current


class Forward(NamedTuple):
    second: tuple[str, str]  # version, epoch of the release the publisher makes next
    force: bool  # publish needs --force (same version, other content)


FORWARDS = {
    "newer-version": Forward(("1.1.0", T2), False),
    "same-version-newer-signed-manifest": Forward(("1.0.0", T2), True),
    "same-version-republished-at-the-same-time": Forward(("1.0.0", T1), True),
}


@pytest.mark.parametrize("case", FORWARDS.values(), ids=list(FORWARDS))
def test_a_newer_release_on_the_tag_updates_without_asking(
    registry: Registry, world: World, case: Forward, request: pytest.FixtureRequest
) -> None:
    """The legitimate variant: the publisher moves the tag forward (a newer version, or a
    republished fix of the same version signed later, or at a time that cannot tell them
    apart). Invariant: update takes it with no flag, and outdated shows an update."""
    target = registry.ref(f"forward/{request.node.callspec.id}", "stable")
    publish(world, target, "1.0.0", "Old text.", T1)
    run("install", target, "--scope", "project", project=world.project)
    force = ("--force",) if case.force else ()
    new = publish(world, target, case.second[0], "New text.", case.second[1], *force)
    (row,) = run("outdated", project=world.project)["plugins"]
    assert row["downgrade"] is None and row["available_pin"] == new
    assert "DOWNGRADE" not in cli("outdated", project=world.project).stdout
    moved = run("update", "tool", project=world.project)["changes"]
    assert [(c["version"], c["pin"]) for c in moved] == [(case.second[0], new)]


class Overwrite(NamedTuple):
    first: str  # the version the tag holds
    second: str  # the version published over it
    held: str  # what the refusal says the tag holds


OVERWRITES = {
    "same-version-other-content": Overwrite("1.0.0", "1.0.0", "tool 1.0.0"),
    "older-version-over-a-newer-one": Overwrite("2.0.0", "1.0.0", "tool 2.0.0"),
}


@pytest.mark.parametrize("case", OVERWRITES.values(), ids=list(OVERWRITES))
def test_publish_over_a_tag_holding_other_content_is_refused(
    registry: Registry, world: World, case: Overwrite, request: pytest.FixtureRequest
) -> None:
    """Attack (or accident): `publish` to a tag that already names another release, which
    re-points it for everyone following it. Invariant: refused, saying what the tag holds, and
    the tag is untouched; with --force (the publisher's consent) it is overwritten."""
    target = registry.ref(f"overwrite/{request.node.callspec.id}", case.first)
    first = publish(world, target, case.first, "First text.", T1)
    folder = plugin(world.root / "src" / "tool", case.second, "Other text.")
    before = snapshot(registry.storage)
    refused = fails("publish", str(folder), target, "--sign", world.key)
    assert f"{target} already holds {case.held}, published 2023-11-14T22:13:20Z" in refused
    assert f"(manifest {first})" in refused and "nothing was pushed" in refused
    assert "--force" in refused
    assert snapshot(registry.storage) == before  # nothing pushed, nothing signed
    done = run("publish", str(folder), target, "--sign", world.key, "--force")
    assert done["digest"] != first and done["version"] == case.second
    installed = run("install", target, "--scope", "project", project=world.project)
    assert installed["changes"][0]["version"] == case.second


def test_publishing_the_same_content_again_keeps_the_tag_as_it_is(
    registry: Registry, world: World
) -> None:
    """The legitimate variant of an overwrite: the same plugin published again (a retried CI
    job, a second signature). Invariant: no --force needed, and the manifest is the same one
    (same digest, its creation time kept), so followers see nothing new."""
    from plugman.plugins.authoring import publish as publishing

    target = registry.ref("overwrite/same-content", "1.0.0")
    first = publish(world, target, "1.0.0", "Text.", T1)
    with pytest.MonkeyPatch.context() as later:  # published again a year on (same bytes)
        later.setattr(publishing, "_now", lambda _env: "2024-11-14T22:13:20Z")
        again = publish(world, target, "1.0.0", "Text.", T1)
    assert again == first
    run("install", target, "--scope", "project", project=world.project)
    assert record(world).released == "2023-11-14T22:13:20Z"


def test_publish_over_a_tag_holding_a_foreign_artifact_is_refused(
    registry: Registry, world: World
) -> None:
    """Attack: a tag that holds something else (not a plugman plugin) is overwritten by a
    publish that did not look. Invariant: refused, saying so; --force overwrites it."""
    from tests.integration.oci.registry import plugin_tgz

    target = registry.ref("overwrite/foreign", "1.0.0")
    _push_foreign(registry, "overwrite/foreign", "1.0.0", plugin_tgz())
    folder = plugin(world.root / "src" / "tool", "1.0.0", "Text.")
    refused = fails("publish", str(folder), target)
    assert "holds something that is not a plugman plugin artifact" in refused
    assert run("publish", str(folder), target, "--force")["version"] == "1.0.0"


def _push_foreign(registry: Registry, repository: str, tag: str, data: bytes) -> None:
    """An image manifest of another artifact type under `tag`."""
    from plugman.core.oci.client import EMPTY, EMPTY_DATA, digest_of

    connection = http.client.HTTPConnection(registry.host, timeout=10)
    try:
        for blob in (EMPTY_DATA, data):
            connection.request("POST", f"/v2/{repository}/blobs/uploads/")
            started = connection.getresponse()
            started.read()
            location = started.getheader("Location", "")
            where = location.split(registry.host, 1)[-1]
            joiner = "&" if "?" in where else "?"
            connection.request("PUT", f"{where}{joiner}digest={digest_of(blob)}", body=blob)
            done = connection.getresponse()
            done.read()
            assert done.status == 201
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "artifactType": "application/vnd.example.other",
            "config": {"mediaType": EMPTY, "digest": digest_of(EMPTY_DATA), "size": 2},
            "layers": [
                {
                    "mediaType": "application/octet-stream",
                    "digest": digest_of(data),
                    "size": len(data),
                }
            ],
            "annotations": {CREATED: "2020-01-01T00:00:00Z"},
        }
        body = json.dumps(manifest).encode()
        connection.request(
            "PUT",
            f"/v2/{repository}/manifests/{tag}",
            body=body,
            headers={"Content-Type": MANIFEST},
        )
        put = connection.getresponse()
        put.read()
        assert put.status == 201
    finally:
        connection.close()


def cli(*args: str, project: Path) -> Result:
    """Run plugman in-process; the result whatever its exit code."""
    return invoke(["--project", str(project), *args])
