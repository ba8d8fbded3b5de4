"""`plugman new` and `plugman pack`, through the real CLI, on real folders in tmp_path."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from plugman.cli import invoke, main
from plugman.cli.runner import Result
from plugman.plugins.authoring.pack import Packed, pack
from plugman.plugins.sources.extract import extract
from tests.integration.helpers import snapshot

COMPONENTS = ("skill", "command", "agent", "hook", "mcp")
EVERY_COMBINATION = [
    combo
    for size in range(len(COMPONENTS) + 1)
    for combo in itertools.combinations(COMPONENTS, size)
]


def cli(*args: str) -> Result:
    return invoke(list(args))


def strict_ok(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--strict", str(folder)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("0 errors, 0 warnings"), out


def new_plugin(tmp_path: Path, name: str = "demo", *parts: str) -> Path:
    folder = tmp_path / name
    args = ["new", name, "--dir", str(folder)] + (["--with", ",".join(parts)] if parts else [])
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return folder


# --- plugman new ---------------------------------------------------------------------------


@pytest.mark.parametrize("parts", EVERY_COMBINATION, ids=lambda p: "+".join(p) or "bare")
def test_new_plugin_passes_validate_strict(
    tmp_path: Path, parts: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = new_plugin(tmp_path, "my-plugin", *parts)
    strict_ok(folder, capsys)
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    assert (manifest["name"], manifest["version"]) == ("my-plugin", "0.1.0")
    expected = {
        "skill": "skills/hello/SKILL.md",
        "command": "commands/greet.md",
        "agent": "agents/helper.md",
        "hook": "hooks/session-start.sh",
        "mcp": ".mcp.json",
    }
    for part, file in expected.items():
        assert (folder / file).is_file() == (part in parts), part
    if "hook" in parts:
        assert os.access(folder / "hooks" / "session-start.sh", os.X_OK)
        done = subprocess.run([folder / "hooks" / "session-start.sh"], capture_output=True)
        assert b"my-plugin" in done.stdout


def test_new_defaults_to_a_folder_named_after_the_plugin_and_says_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("new", "tools", "--with", "skills", "--with", "hook", "--author", "Ann", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["command"] == "new"
    assert doc["root"] == str(tmp_path / "tools")
    assert "skills/hello/SKILL.md" in doc["files"] and "hooks/hooks.json" in doc["files"]
    manifest = json.loads((tmp_path / "tools" / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["author"] == {"name": "Ann"}


def test_new_marketplace_then_plugins_then_build_passes_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    market = tmp_path / "acme"
    assert cli("new", "--marketplace", "acme", "--dir", str(market)).exit_code == 0
    assert (market / ".claude-plugin" / "marketplace.json").is_file()
    assert (market / "plugins").is_dir()
    assert main(["validate", str(market)]) == 0  # an empty catalog is a warning, no error
    assert "empty-marketplace" in capsys.readouterr().out
    new_plugin(market / "plugins", "one", "skill", "mcp")
    new_plugin(market / "plugins", "two", "hook")
    assert cli("marketplace", "build", str(market)).exit_code == 0
    strict_ok(market, capsys)


def test_new_refuses_a_folder_that_is_there_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    result = cli("new", "taken", "--dir", str(folder), "--with", "skill")
    assert result.exit_code == 1 + 1  # a usage error
    assert "already exists and is not empty" in result.stderr
    assert "hint:" in result.stderr
    assert snapshot(tmp_path) == before


def test_new_fills_an_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    strict_ok(new_plugin(tmp_path, "empty", "command"), capsys)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new", "Not_Kebab"], "is not kebab-case"),
        (["new", "claude-helper"], "reserved for Anthropic"),
        (["new", "../escape"], "contains a path separator"),
        (["new", "ok", "--with", "skill,widget"], "unknown component 'widget'"),
        (["new", "ok", "--marketplace", "--with", "skill"], "not to a marketplace"),
        (["new", "official-claude-market", "--marketplace"], "impersonates"),
    ],
)
def test_new_bad_input_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "hint:" in result.stderr
    assert list(tmp_path.iterdir()) == []


# --- plugman pack --------------------------------------------------------------------------


def packed_via_cli(folder: Path, out: Path, *extra: str) -> dict[str, object]:
    result = cli("pack", str(folder), "-o", str(out), "--json", *extra)
    assert result.exit_code == 0, result.output
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_pack_twice_gives_the_same_bytes_and_reports_sha256_and_size(tmp_path: Path) -> None:
    folder = new_plugin(tmp_path, "demo", *COMPONENTS)
    first = packed_via_cli(folder, tmp_path / "a.tgz")
    second = packed_via_cli(folder, tmp_path / "b.tgz")
    data = (tmp_path / "a.tgz").read_bytes()
    assert data == (tmp_path / "b.tgz").read_bytes()
    assert first["sha256"] == second["sha256"] == hashlib.sha256(data).hexdigest()
    assert first["size"] == len(data)
    assert (first["name"], first["version"]) == ("demo", "0.1.0")
    text = cli("pack", str(folder), "-o", str(tmp_path / "c.tgz"))
    assert text.exit_code == 0
    assert f"sha256  {first['sha256']}" in text.stdout
    assert f"size    {len(data)} bytes" in text.stdout


RUN_MAIN = "from plugman.cli import main; sys.exit(main(sys.argv[1:]))"


def _scramble(folder: Path, mtime: int, file_mode: int, exec_mode: int, dir_mode: int) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_dir():
            path.chmod(dir_mode)
        else:
            path.chmod(exec_mode if path.name.endswith(".sh") else file_mode)
        os.utime(path, (mtime, mtime))


def test_pack_is_the_same_across_copies_with_other_times_modes_umask_and_junk(
    tmp_path: Path,
) -> None:
    original = new_plugin(tmp_path, "demo", *COMPONENTS)
    copy = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(original, copy)
    _scramble(original, 1_000_000_000, 0o644, 0o755, 0o755)
    _scramble(copy, 1_700_000_000, 0o600, 0o700, 0o700)
    (copy / ".git").mkdir()
    (copy / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (copy / "skills" / "__pycache__").mkdir()
    (copy / "skills" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (copy / ".DS_Store").write_bytes(b"\0")
    runs = []
    for folder, umask in ((original, "022"), (copy, "077")):
        out = tmp_path / f"{folder.name}.tgz"
        code = f"import os, sys; os.umask(0o{umask}); {RUN_MAIN}"
        done = subprocess.run(
            [sys.executable, "-c", code, "pack", str(folder), "-o", str(out)],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"},
        )
        assert done.returncode == 0, done.stderr
        runs.append(out.read_bytes())
    assert runs[0] == runs[1]


def test_the_archive_is_normalised(tmp_path: Path) -> None:
    folder = new_plugin(tmp_path, "demo", *COMPONENTS)
    (folder / "hooks" / "session-start.sh").chmod(0o750)
    (folder / "README.md").chmod(0o600)
    data = pack(folder).data
    assert data[:4] == b"\x1f\x8b\x08\x00"  # gzip, deflate, no flags: no file name
    assert data[4:8] == b"\0\0\0\0"  # gzip mtime 0
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names[0] == ".claude-plugin"
    assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in members)
    assert all(m.uname == "" and m.gname == "" for m in members)
    modes = {m.name: m.mode for m in members}
    assert modes["hooks/session-start.sh"] == 0o755
    assert modes["README.md"] == 0o644
    assert modes["skills"] == 0o755
    assert [m.name for m in members if m.isfile()] == sorted(m.name for m in members if m.isfile())


def test_source_date_epoch_sets_every_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = new_plugin(tmp_path, "demo", "skill")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    with tarfile.open(fileobj=io.BytesIO(pack(folder).data)) as tar:
        assert {m.mtime for m in tar.getmembers()} == {1700000000}
    assert gzip.decompress(pack(folder).data)  # still one gzip member
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    result = cli("pack", str(folder), "-o", str(tmp_path / "x.tgz"))
    assert result.exit_code == 2
    assert "SOURCE_DATE_EPOCH" in result.stderr
    assert not (tmp_path / "x.tgz").exists()


def test_pack_api_returns_a_typed_value(tmp_path: Path) -> None:
    folder = new_plugin(tmp_path, "demo", "skill")
    packed = pack(folder)
    assert isinstance(packed, Packed)
    assert (packed.name, packed.version) == ("demo", "0.1.0")
    assert packed.description == "The demo plugin (describe what it does in one line)."
    assert packed.sha256 == hashlib.sha256(packed.data).hexdigest()
    assert packed.filename == "demo-0.1.0.tgz"
    assert packed.files == (".claude-plugin/plugin.json", "README.md", "skills/hello/SKILL.md")


def test_what_pack_writes_install_extracts(tmp_path: Path) -> None:
    folder = new_plugin(tmp_path, "demo", *COMPONENTS)
    (folder / "shared.md").write_text("shared\n")
    (folder / "skills" / "hello" / "shared.md").symlink_to("../../shared.md")
    archive = tmp_path / "demo.tgz"
    archive.write_bytes(pack(folder).data)
    dest = tmp_path / "extracted"
    extract(archive, dest)
    assert (dest / "skills" / "hello" / "shared.md").read_text() == "shared\n"
    assert not (dest / "skills" / "hello" / "shared.md").is_symlink()
    for path in folder.rglob("*"):
        twin = dest / path.relative_to(folder)
        assert twin.exists(), twin
        if path.is_file():
            assert twin.read_bytes() == path.read_bytes()


def test_default_output_in_the_plugin_folder_is_never_packed_into_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = new_plugin(tmp_path, "demo", "skill")
    monkeypatch.chdir(folder)
    first = cli("pack", "--json")
    assert first.exit_code == 0, first.output
    data = (folder / "demo-0.1.0.tgz").read_bytes()
    second = cli("pack", "--json")
    assert json.loads(second.stdout)["sha256"] == json.loads(first.stdout)["sha256"]
    assert (folder / "demo-0.1.0.tgz").read_bytes() == data
    assert "demo-0.1.0.tgz" not in json.loads(second.stdout)["files"]


BROKEN = '{\n  "name": "demo",\n  "keywords": "not-a-list",\n  "skills": ["./../escape"]\n}\n'


def test_pack_refuses_an_invalid_plugin_with_every_finding(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(BROKEN)
    out = tmp_path / "demo.tgz"
    result = cli("pack", str(folder), "-o", str(out))
    assert result.exit_code == 1
    assert "the plugin is not valid (2 errors)" in result.stderr
    assert "plugin.json:3:3: error [schema-type] keywords" in result.stderr
    assert "plugin.json:4:14: error [path-escape] skills[0]" in result.stderr
    assert "hint: fix what is listed" in result.stderr
    assert not out.exists()
    as_json = cli("pack", str(folder), "-o", str(out), "--json")
    error = json.loads(as_json.stdout)["error"]
    assert {d["code"] for d in error["diagnostics"]} == {"schema-type", "path-escape"}
    assert not out.exists()


def test_pack_strict_refuses_warnings_that_plain_pack_reports(tmp_path: Path) -> None:
    folder = new_plugin(tmp_path, "demo", "skill")
    manifest = folder / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"name"', '"nmae": 1,\n  "name"'))
    plain = cli("pack", str(folder), "-o", str(tmp_path / "a.tgz"))
    assert plain.exit_code == 0, plain.output
    assert "warning [unknown-key] nmae" in plain.stderr
    strict = cli("pack", str(folder), "-o", str(tmp_path / "b.tgz"), "--strict")
    assert strict.exit_code == 1
    assert "error [unknown-key] nmae" in strict.stderr
    assert not (tmp_path / "b.tgz").exists()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("../../outside.txt", "leads outside it"),
        ("..", "loops back"),
        ("gone.md", "does not exist"),
    ],
)
def test_pack_refuses_links_that_leave_the_plugin_loop_or_dangle(
    tmp_path: Path, target: str, message: str
) -> None:
    (tmp_path / "outside.txt").write_text("secret\n")
    folder = new_plugin(tmp_path / "work", "demo", "skill")
    (folder / "skills" / "link").symlink_to(target)
    result = cli("pack", str(folder), "-o", str(tmp_path / "x.tgz"))
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert "hint:" in result.stderr
    assert not (tmp_path / "x.tgz").exists()


def test_pack_bad_folders_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for folder, message in [
        (tmp_path / "missing", "is not a folder"),
        (tmp_path / "empty", "is not a plugin folder"),
    ]:
        result = cli("pack", str(folder))
        assert result.exit_code == 2, result.output
        assert message in result.stderr
    market = tmp_path / "market"
    assert cli("new", "market", "--marketplace", "--dir", str(market)).exit_code == 0
    result = cli("pack", str(market))
    assert result.exit_code == 2
    assert "this is a marketplace: pass one of its plugin folders" in result.stderr


@pytest.mark.parametrize(
    ("args", "fault"),
    [
        (["new", "demo", "--with", "skill,hook,mcp", "--dir", "deep/er/demo"], "enospc:3"),
        (["new", "other", "--marketplace"], "enospc:2"),
        (["pack", "plugin", "-o", "out/plugin.tgz"], "enospc:1"),
        (["marketplace", "build", "market"], "eacces:1"),
    ],
    ids=["new", "new-marketplace", "pack", "marketplace-build"],
)
def test_a_failed_write_leaves_every_file_as_it_was(
    tmp_path: Path, args: list[str], fault: str
) -> None:
    new_plugin(tmp_path, "plugin", "skill")
    assert cli("new", "market", "--marketplace", "--dir", str(tmp_path / "market")).exit_code == 0
    new_plugin(tmp_path / "market" / "plugins", "one")  # not listed yet: build would write
    before = snapshot(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "plugman", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PLUGMAN_FAULT": fault},
    )
    assert done.returncode == 1, done.stderr
    assert "nothing was changed" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(tmp_path) == before
