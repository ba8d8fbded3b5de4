"""A damaged or hostile committed file: plugman.lock, plugman.toml, .claude/settings.json.

The attacker (or a bad merge) controls these files in the clone. Invariant attacked: a
committed file is input, checked once against its schema before anything acts on it; every
command that reads it (`sync`, `sync --frozen`, `sync --locked`, `lock`, `audit`, `lock
export`) refuses it with a located error (`FILE:LINE`, the key path) and exit 2, no traceback,
and nothing changes. Each case is paired with the same project, its file restored, working.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.attacks.lockcase import market, plugman, project
from tests.integration.helpers import snapshot

Mutation = Callable[[str], str]
LOCK_COMMANDS = (
    ("sync",),
    ("sync", "--frozen"),
    ("sync", "--locked"),
    ("lock",),
    ("audit",),
    ("lock", "export"),
)
SYNC_COMMANDS = (("sync",), ("sync", "--frozen"), ("sync", "--locked"), ("lock",))


def drop(key: str) -> Mutation:
    return lambda text: re.sub(rf"(?m)^{key} = .*\n", "", text, count=1)


def put(key: str, value: str) -> Mutation:
    return lambda text: re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text, count=1)


def add(line: str) -> Mutation:
    return lambda text: re.sub(r"(?m)^(id = .*)$", rf"\1\n{line}", text, count=1)


def conflict(key: str) -> Mutation:
    def mutate(text: str) -> str:
        found = re.search(rf"(?m)^{key}.*$", text)
        assert found, text
        line = found.group(0)
        block = f"<<<<<<< HEAD\n{line}\n=======\n{line}\n>>>>>>> theirs"
        return text.replace(line, block, 1)

    return mutate


# (case id, mutation, the key path the error names)
LOCK_CASES: list[tuple[str, Mutation, str]] = [
    *[
        (f"missing-{k}", drop(k), f"missing required key '{k}'")
        for k in ("id", "name", "marketplace", "version", "content_hash", "source")
    ],
    (
        "missing-source-type",
        lambda t: re.sub(r'type = "path",? ?|, type = "path"', "", t),
        r"plugins\[0\]\.source",
    ),
    ("version-not-a-string", put("version", "1"), r"plugins\[0\]\.version"),
    ("hash-not-a-string", put("content_hash", "5"), r"plugins\[0\]\.content_hash"),
    ("hash-not-a-hash", put("content_hash", '"sha256:evil"'), r"plugins\[0\]\.content_hash"),
    ("source-a-string", put("source", '"./plugins/fmt"'), r"plugins\[0\]\.source"),
    ("hidden-text-true", add("hidden_text = true"), r"plugins\[0\]\.hidden_text"),
    ("signer-a-number", add("signer = 7"), r"plugins\[0\]\.signer"),
    ("format-a-string", put("format", '"1"'), "format"),
    ("extra-consented", add("consented = true"), r"plugins\[0\]\.consented"),
    ("extra-forced", add("forced = true"), r"plugins\[0\]\.forced"),
    (
        "extra-source-key",
        lambda t: t.replace("source = {", 'source = {url = "x", ', 1),
        r"plugins\[0\]\.source",
    ),
    ("extra-top-level", lambda t: t.replace("format = 1", "format = 1\ntrusted = true"), "trusted"),
    ("id-not-name-at-market", put("id", '"evil@acme"'), r"plugins\[0\]\.id"),
    ("conflict-markers", conflict("content_hash"), "merge conflict"),
    ("not-toml", lambda t: t.replace("[[plugins]]", "[[plugins]", 1), "not valid TOML"),
]


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    return project(tmp_path, market(tmp_path / "acme", "acme", {"fmt": "Format.\n"}))


def refused_everywhere(
    folder: Path, home: Path, file: str, said: str, commands: tuple[tuple[str, ...], ...]
) -> None:
    before = snapshot(folder, home / "state", home / "store")
    for argv in commands:
        done = plugman(folder, *argv)
        shown = f"plugman {' '.join(argv)}: {done}"
        # audit reports what it could not check as located findings (its documented exit 1)
        assert done.code == (1 if argv == ("audit",) else 2), shown
        said_all = done.stderr + (done.stdout if argv == ("audit",) else "")
        assert re.search(rf"{re.escape(file)}:\d+", said_all), shown  # FILE:LINE
        assert re.search(said, said_all), shown
    assert snapshot(folder, home / "state", home / "store") == before  # nothing changed


@pytest.mark.parametrize(("case", "mutate", "said"), LOCK_CASES, ids=[c[0] for c in LOCK_CASES])
def test_a_damaged_lock_is_a_located_error_and_the_good_one_works(
    synced: Path, isolated_home: Path, case: str, mutate: Mutation, said: str
) -> None:
    """Attack: a committed plugman.lock missing a key, with a wrong type, a key plugman never
    writes (`consented`, `forced`), an id that is not its name@marketplace, or a merge left in
    it. Invariant: the lock is parsed once against its schema; located error, exit 2."""
    lock = synced / "plugman.lock"
    good = lock.read_text()
    bad = mutate(good)
    assert bad != good, case
    lock.write_text(bad)
    refused_everywhere(synced, isolated_home, "plugman.lock", said, LOCK_COMMANDS)
    lock.write_text(good)  # the committed lock, restored: it works
    assert plugman(synced, "sync", "--frozen").code == 0
    assert plugman(synced, "sync", "--locked").code == 0
    assert plugman(synced, "lock", "export").code == 0


def test_a_lock_with_two_entries_for_one_plugin_is_refused(
    synced: Path, isolated_home: Path
) -> None:
    """Attack: a second entry for the same plugin, after the reviewed one (mix-and-match).
    Invariant: one pin per plugin, or a located error."""
    lock = synced / "plugman.lock"
    good = lock.read_text()
    entry = good[good.index("[[plugins]]") :]
    lock.write_text(good + "\n" + entry.replace("Format", "Evil"))
    refused_everywhere(synced, isolated_home, "plugman.lock", "locked twice", SYNC_COMMANDS)
    lock.write_text(good)
    assert plugman(synced, "sync", "--frozen").code == 0


TOML_CASES: list[tuple[str, Mutation, str]] = [
    (
        "version-a-number",
        lambda t: t.replace('"fmt@acme" = "*"', '"fmt@acme" = 1'),
        r'plugins\["fmt@acme"\]',
    ),
    (
        "version-in-table-a-bool",
        lambda t: t.replace('"*"', "{ version = true }"),
        r'plugins\["fmt@acme"\]\.version',
    ),
    (
        "extra-plugin-key",
        lambda t: t.replace('"*"', '{ version = "*", sha = "x" }'),
        r'plugins\["fmt@acme"\]\.sha',
    ),
    (
        "marketplace-without-source",
        lambda t: re.sub(r"acme = \{ source = .*\}", 'acme = { ref = "main" }', t),
        "missing required key 'source'",
    ),
    (
        "marketplace-source-a-number",
        lambda t: re.sub(r"acme = \{ source = .*\}", "acme = { source = 5 }", t),
        r"marketplaces\.acme\.source",
    ),
    (
        "plugins-an-array",
        lambda t: t.replace('[plugins]\n"fmt@acme" = "*"', 'plugins = ["x"]'),
        "plugins",
    ),
    ("conflict-markers", conflict('"fmt@acme"'), "merge conflict"),
]


@pytest.mark.parametrize(("case", "mutate", "said"), TOML_CASES, ids=[c[0] for c in TOML_CASES])
def test_a_damaged_plugman_toml_is_a_located_error_and_the_good_one_works(
    synced: Path, isolated_home: Path, case: str, mutate: Mutation, said: str
) -> None:
    """Attack: plugman.toml with a version that is not a string, a key sync does not know, a
    marketplace without a source, or a merge left in it. Invariant: what sync acts on is
    checked against the schema first: located error, exit 2, nothing changed."""
    toml = synced / "plugman.toml"
    good = toml.read_text()
    bad = mutate(good)
    assert bad != good, case
    toml.write_text(bad)
    refused_everywhere(synced, isolated_home, "plugman.toml", said, SYNC_COMMANDS)
    toml.write_text(good)
    assert plugman(synced, "sync").code == 0


SETTINGS_CASES: list[tuple[str, str, str]] = [
    ("enabled-plugins-an-array", '{"enabledPlugins": ["fmt@acme"]}', "enabledPlugins"),
    (
        "enabled-value-a-string",
        '{"enabledPlugins": {"fmt@acme": "yes"}}',
        r'enabledPlugins\["fmt@acme"\]',
    ),
    (
        "marketplace-source-a-string",
        '{"extraKnownMarketplaces": {"other": {"source": "acme/x"}}}',
        r"extraKnownMarketplaces\.other\.source",
    ),
    (
        "marketplace-source-without-kind",
        '{"extraKnownMarketplaces": {"other": {"source": {"repo": "a/b"}}}}',
        r"extraKnownMarketplaces\.other\.source\.source",
    ),
    ("not-json", '{"enabledPlugins": {"fmt@acme": true,}', "not valid JSON"),
    ("not-an-object", '["enabledPlugins"]', "must be a JSON object"),
    (
        "conflict-markers",
        '{\n<<<<<<< HEAD\n  "enabledPlugins": {"fmt@acme": true}\n=======\n'
        '  "enabledPlugins": {}\n>>>>>>> theirs\n}\n',
        "merge conflict",
    ),
]


@pytest.mark.parametrize(
    ("case", "text", "said"), SETTINGS_CASES, ids=[c[0] for c in SETTINGS_CASES]
)
def test_a_damaged_claude_settings_is_a_located_error_and_the_good_one_works(
    synced: Path, isolated_home: Path, case: str, text: str, said: str
) -> None:
    """Attack: the project's committed .claude/settings.json with a wrong type where sync
    reads it, not JSON, or a merge left in it. Invariant: located error, exit 2, nothing
    changed; settings Claude Code has and sync does not read (extra keys) are no error."""
    settings = synced / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text)
    refused_everywhere(synced, isolated_home, ".claude/settings.json", said, SYNC_COMMANDS)
    good = {"enabledPlugins": {"fmt@acme": True}, "permissions": {"allow": []}, "model": "x"}
    settings.write_text(json.dumps(good))
    assert plugman(synced, "sync").code == 0
