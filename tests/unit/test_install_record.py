"""The install record as a typed value: every shape a state file holds today reads, and what
plugman writes back keeps the same keys (so no state file needs migrating); the userConfig
tables (`config`, `secrets`) are as `plugman install --config` writes them.

The two project files below are what plugman wrote before the record was typed (copied from
real runs of `plugman install kit@shelf --scope project` and of `plugman sync` in a clone of
that project); the older shape lacks the keys plugman added later."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugman.core.errors import PlugmanError
from plugman.core.owned import McpBefore, McpOwned, TomlOwned
from plugman.core.paths import Paths
from plugman.core.state import InstalledPlugin, InstallRecord, installed_ids, record_path

HASH = "sha256:9ba570f98e5c8201510ab2042f8241f41f69043cd209a76babcde275652ad4e9"
COMPONENTS = {
    "agents": [],
    "commands": ["greet"],
    "hooks": [],
    "mcpServers": [],
    "skills": ["hello"],
}
# written by `plugman install`: it sets `consented`
INSTALLED: dict[str, Any] = {
    "components": COMPONENTS,
    "consented": True,
    "content_hash": HASH,
    "declared": "*",
    "enabled": True,
    "entry": None,
    "explicit": True,
    "installed_at": "2026-11-25T21:50:17Z",
    "marketplace": "shelf",
    "name": "kit",
    "required_by": [],
    "source": {"path": "./plugins/kit", "type": "path"},
    "version": "1.2.0",
}
# written by `plugman sync`: content nobody on this machine chose, no `consented`
SYNCED = {k: v for k, v in INSTALLED.items() if k != "consented"}
# before entries, components, dependencies and declarations were recorded
OLDER: dict[str, Any] = {
    k: INSTALLED[k] for k in ("content_hash", "marketplace", "name", "source", "version")
}


def _file(paths: Paths, plugins: dict[str, Any], **more: Any) -> Path:
    path = record_path(paths, "project")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": 1, "owned": {}, "plugins": plugins, "scope": "project", **more}
    data["project"] = str(paths.project_dir)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return Paths.from_env({"PLUGMAN_HOME": str(tmp_path / "home")}, project=tmp_path / "proj")


@pytest.mark.parametrize("entry", [INSTALLED, SYNCED], ids=["install", "sync"])
def test_a_file_as_plugman_wrote_it_reads_and_is_written_back_byte_for_byte(
    paths: Paths, entry: dict[str, Any]
) -> None:
    tables = {"config": {"kit@shelf": {"region": "eu"}}, "secrets": {"kit@shelf": ["api_key"]}}
    path = _file(paths, {"kit@shelf": entry}, declared_marketplaces=["shelf"], **tables)
    before = path.read_bytes()
    record = InstallRecord.load(paths, "project")
    kit = record.plugins["kit@shelf"]
    assert (kit.name, kit.marketplace, kit.version, kit.content_hash) == (
        "kit",
        "shelf",
        "1.2.0",
        HASH,
    )
    assert kit.consented is ("consented" in entry)
    assert (kit.enabled, kit.explicit, kit.required_by, kit.declared) == (True, True, (), "*")
    assert kit.components["skills"] == ["hello"]
    assert (record.config, record.secrets) == (tables["config"], tables["secrets"])
    assert record.declared_marketplaces == ["shelf"]
    assert record.to_bytes() == before


def test_the_older_shape_reads_with_the_defaults_it_meant(paths: Paths) -> None:
    _file(paths, {"kit@shelf": OLDER})
    kit = InstallRecord.load(paths, "project").plugins["kit@shelf"]
    assert kit == InstalledPlugin("kit", "shelf", "1.2.0", OLDER["source"], HASH)
    assert (kit.enabled, kit.explicit, kit.consented, kit.declared) == (True, False, False, None)
    assert installed_ids(paths) == {"kit@shelf"}
    written = json.loads(InstallRecord.load(paths, "project").to_bytes() or b"")
    assert "consented" not in written["plugins"]["kit@shelf"]  # still waits for approval
    assert "declared" not in written["plugins"]["kit@shelf"]  # uninstall keeps plugman.toml


def test_a_declaration_table_is_kept_as_it_was(paths: Paths) -> None:
    table = {"version": ">=1", "enabled": False}
    _file(paths, {"kit@shelf": {**INSTALLED, "declared": table}})
    record = InstallRecord.load(paths, "project")
    assert record.plugins["kit@shelf"].declared == table
    assert json.loads(record.to_bytes() or b"")["plugins"]["kit@shelf"]["declared"] == table


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"enabled": "yes"}, "'enabled'"),
        ({"required_by": "a@b"}, "'required_by'"),
        ({"content_hash": None}, "'content_hash'"),
        ({"components": {"skills": "hello"}}, "'components'"),
        ({"name": ...}, "lacks one of"),
    ],
)
def test_a_damaged_entry_is_a_located_error(
    paths: Paths, change: dict[str, Any], said: str
) -> None:
    entry = {k: v for k, v in {**INSTALLED, **change}.items() if v is not ...}
    path = _file(paths, {"kit@shelf": entry})
    with pytest.raises(PlugmanError) as caught:
        InstallRecord.load(paths, "project")
    assert said in caught.value.message
    assert caught.value.where == str(path)
    assert "plugman doctor" in (caught.value.hint or "")


def test_a_damaged_table_of_the_record_is_a_located_error(paths: Paths) -> None:
    path = _file(paths, {"kit@shelf": INSTALLED}, secrets={"kit@shelf": "api_key"})
    with pytest.raises(PlugmanError) as caught:
        InstallRecord.load(paths, "project")
    assert "'secrets'" in caught.value.message
    assert caught.value.where == str(path)


# the `owned` table as plugman writes it: a plugman.toml it created with a table, the project's
# .mcp.json with a server's inserted block, and an .mcp.json under a record from before blocks
OWNED: dict[str, Any] = {
    "/p/.plugman/local.toml": {"file": True, "tables": {"mcp_servers": ""}},
    "/p/plugman.toml": {"file": False, "tables": {"plugins": "\n"}},
    "/p/.mcp.json": {
        "blocks": {"db": [["{}", '{"mcpServers": {"db": {}}}', ["mcpServers"]], ["a", "b", None]]},
        "created": True,
    },
    "/q/.mcp.json": {"added": ["db"], "before": None},
}


def test_the_owned_table_reads_typed_and_is_written_back_byte_for_byte(paths: Paths) -> None:
    path = _file(paths, {"kit@shelf": INSTALLED}, owned=OWNED)
    before = path.read_bytes()
    record = InstallRecord.load(paths, "project")
    assert record.owned.toml("/p/plugman.toml", True) == TomlOwned(False, {"plugins": "\n"})
    mcp = record.owned.mcp("/p/.mcp.json", False)
    assert isinstance(mcp, McpOwned) and mcp.blocks["db"][0][2] == ("mcpServers",)
    assert record.owned.get("/q/.mcp.json") == McpBefore(None, ["db"])
    assert record.to_bytes() == before


@pytest.mark.parametrize(
    "entry",
    [
        "yes",
        {"file": "yes", "tables": {}},
        {"file": True, "tables": {"plugins": 1}},
        {"created": True, "blocks": {"db": [["a", "b"]]}},
        {"created": True, "blocks": {"db": [["a", "b", "mcpServers"]]}},
        {"before": None, "added": "db"},
    ],
)
def test_a_damaged_owned_entry_is_a_located_error(paths: Paths, entry: object) -> None:
    path = _file(paths, {"kit@shelf": INSTALLED}, owned={"/p/plugman.toml": entry})
    with pytest.raises(PlugmanError) as caught:
        InstallRecord.load(paths, "project")
    assert "owned" in caught.value.message
    assert caught.value.where == str(path)


def test_an_owned_entry_of_the_other_kind_is_refused_not_a_traceback(paths: Paths) -> None:
    _file(paths, {"kit@shelf": INSTALLED}, owned={"/p/plugman.toml": OWNED["/q/.mcp.json"]})
    owned = InstallRecord.load(paths, "project").owned
    with pytest.raises(PlugmanError, match="not a declaration file's"):
        owned.toml("/p/plugman.toml", False)
