from __future__ import annotations

from pathlib import Path

from plugman.core.paths import Paths


def test_plugman_home_relocates_every_user_level_path(tmp_path: Path) -> None:
    paths = Paths.from_env(
        {"PLUGMAN_HOME": str(tmp_path), "PLUGMAN_MANAGED_DIR": "/m"}, project=tmp_path / "proj"
    )
    user_level = [
        paths.config_dir,
        paths.data_dir,
        paths.cache_dir,
        paths.state_dir,
        paths.user_config,
        paths.store_dir,
        paths.marketplaces_dir,
        paths.journal_dir,
    ]
    assert all(tmp_path in p.parents for p in user_level)
    assert paths.managed_mcp == Path("/m/managed-mcp.json")
    assert paths.managed_settings == Path("/m/managed-settings.toml")
    assert paths.project_config == tmp_path / "proj" / "plugman.toml"
    assert paths.local_config == tmp_path / "proj" / ".plugman" / "local.toml"


def test_without_overrides_platform_dirs_are_used(tmp_path: Path) -> None:
    paths = Paths.from_env(
        {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c")}, project=tmp_path
    )
    assert paths.config_dir.name == "plugman"
    assert paths.managed_dir.name == "plugman"
    assert paths.project_dir == tmp_path
