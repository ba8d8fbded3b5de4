"""The cache of a stored plugin's load (plugman.manifest.stored): the same plugin and findings as
loading its files, read back from `<store>/.loaded/<sha256>/` afterwards, and never used when it
is for another content address, another entry, damaged or tampered with."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from plugman.core.store import Store
from plugman.manifest import plugin, stored
from plugman.manifest.reader import Report

A = "a" * 64
B = "b" * 64
ENTRY = {"name": "loose", "strict": False, "mcpServers": {"e": {"command": "from-entry"}}}


def write_plugin(root: Path, command: str = "serve") -> None:
    """A plugin with a server, a hook, a skill, a command, an option and an unknown key (a
    warning: findings are cached too)."""
    (root / ".claude-plugin").mkdir(parents=True)
    manifest = {
        "name": "demo",
        "version": "1.2.3",
        "description": "demo plugin",
        "colour": "blue",
        "userConfig": {"token": {"type": "string", "title": "Token", "sensitive": True}},
        "dependencies": ["base@market"],
    }
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    servers = {"mcpServers": {"srv": {"command": command, "args": ["--stdio"]}}}
    (root / ".mcp.json").write_text(json.dumps(servers))
    (root / "hooks").mkdir()
    hooks = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]
        }
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    (root / "skills" / "tidy").mkdir(parents=True)
    (root / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy up\n---\nBody\n"
    )
    (root / "commands").mkdir()
    (root / "commands" / "go.md").write_text("---\ndescription: Go\n---\nGo.\n")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    found = Store(tmp_path / "store")
    write_plugin(found.path(A))
    write_plugin(found.path(B), command="other")
    return found


def direct(root: Path, fields: dict[str, object] | None = None) -> tuple[object, list[object]]:
    report = Report()
    loaded = plugin.load_as_installed(root, fields, report)
    return loaded, list(report.diagnostics)


def cached(
    store: Store, digest: str, fields: dict[str, object] | None = None
) -> tuple[object, list[object]]:
    report = Report()
    loaded = stored.load(store.path(digest), report, fields, store.loaded(digest))
    return loaded, list(report.diagnostics)


def cache_file(store: Store, digest: str) -> Path:
    [file] = store.loaded(digest).iterdir()
    return file


def test_the_load_is_cached_beside_the_tree_and_read_back_the_same(store: Store) -> None:
    expected = direct(store.path(A))
    assert expected[1], "the plugin must have a finding, so that findings are seen cached"
    assert cached(store, A) == expected  # a miss: loaded from its files, and kept
    file = cache_file(store, A)
    assert file.parent == store.root / ".loaded" / A  # outside the hashed tree
    (store.path(A) / ".mcp.json").unlink()  # a hit does not read the files again
    assert cached(store, A) == expected


def test_a_strict_false_entry_is_part_of_the_key(store: Store) -> None:
    assert cached(store, A) == direct(store.path(A))
    assert cached(store, A, ENTRY) == direct(store.path(A), ENTRY)
    assert len(list(store.loaded(A).iterdir())) == 2
    other = {**ENTRY, "mcpServers": {"e": {"command": "changed"}}}
    assert cached(store, A, other) == direct(store.path(A), other)


def test_a_cache_file_for_another_content_address_is_not_used(store: Store) -> None:
    cached(store, A)
    cached(store, B)
    shutil.copyfile(cache_file(store, A), cache_file(store, B))  # A's load put where B's is
    loaded, _ = cached(store, B)
    assert isinstance(loaded, plugin.Plugin)
    assert [s.entry["command"] for s in loaded.mcp_servers] == ["other"]
    assert cached(store, B) == direct(store.path(B))


def _tamper(file: Path, old: str, new: str, fix_sum: bool) -> None:
    head, _, body = file.read_bytes().partition(b"\n")
    body = body.replace(old.encode(), new.encode())
    header = json.loads(head)
    if fix_sum:
        header["sum"] = stored._sum(body)
    file.write_bytes(json.dumps(header).encode() + b"\n" + body)


def test_a_tampered_cache_file_is_not_used(store: Store) -> None:
    cached(store, A)
    file = cache_file(store, A)
    _tamper(file, '"serve"', '"evil"', fix_sum=False)
    loaded, _ = cached(store, A)
    assert isinstance(loaded, plugin.Plugin)
    assert [s.entry["command"] for s in loaded.mcp_servers] == ["serve"]
    assert b"evil" not in file.read_bytes()  # written again from the stored copy


def test_a_cache_file_naming_another_root_or_loader_is_not_used(store: Store) -> None:
    cached(store, A)
    file = cache_file(store, A)
    for key, value in (("root", str(store.path(B))), ("code", "0" * 64), ("format", 0)):
        head, _, body = file.read_bytes().partition(b"\n")
        header = {**json.loads(head), key: value}
        file.write_bytes(json.dumps(header).encode() + b"\n" + body.replace(b'"serve"', b'"evil"'))
        _tamper(file, '"serve"', '"evil"', fix_sum=True)
        loaded, _ = cached(store, A)
        assert isinstance(loaded, plugin.Plugin)
        assert [s.entry["command"] for s in loaded.mcp_servers] == ["serve"], key


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\n",
        b"not json\n[]",
        b"\xff\xfe\x00garbage",
        b'{"format": 1}\n[1, 2, 3]',
        b"[" * 100000,
    ],
)
def test_a_damaged_cache_file_is_a_miss(store: Store, damage: bytes) -> None:
    cached(store, A)
    cache_file(store, A).write_bytes(damage)
    assert cached(store, A) == direct(store.path(A))


def test_a_well_formed_body_of_the_wrong_shape_is_a_miss(store: Store) -> None:
    cached(store, A)
    file = cache_file(store, A)
    head, _, _ = file.read_bytes().partition(b"\n")
    for body in (b"[null, [[1]], []]", b'[["x"], [], []]', b"[null, [], [3]]", b"{}"):
        header = {**json.loads(head), "sum": stored._sum(body)}
        file.write_bytes(json.dumps(header).encode() + b"\n" + body)
        assert cached(store, A) == direct(store.path(A)), body


def test_a_store_it_cannot_write_still_loads(store: Store) -> None:
    store.loaded(A).parent.write_text("not a folder")  # the cache cannot be written
    assert cached(store, A) == direct(store.path(A))
    assert cached(store, A) == direct(store.path(A))


def test_the_cache_of_a_collected_tree_goes_with_it(store: Store) -> None:
    cached(store, A)
    cached(store, B)
    assert store.collect({f"sha256:{A}"}) == []
    assert store.loaded(A).is_dir() and not store.loaded(B).exists()
    assert not store.path(B).exists()
    assert store.hashes() == {f"sha256:{A}"}
