"""Every location plugman reads or writes, in one object.

`PLUGMAN_HOME` relocates all user-level files (config, data, cache, state) under one folder and
`PLUGMAN_MANAGED_DIR` relocates the managed (enterprise) folder, so tests and the demo never
touch the real home. Claude Code's own managed folder (its `managed-settings.json`,
`managed-settings.d/` and `managed-mcp.json`, which plugman obeys too) is fixed per platform, as
Claude Code 2.1.328 reads it (it has no override); `PLUGMAN_CLAUDE_MANAGED_DIR` relocates it for
plugman alone (tests). Otherwise platformdirs gives each platform's standard locations. The
project is the one named, or the nearest folder from the working directory upward with a
plugman.toml, .mcp.json or .git (the working directory when there is none).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

APP = "plugman"
PROJECT_MARKERS = ("plugman.toml", ".mcp.json", ".git")  # what makes a folder a project


def find_project(start: Path) -> Path:
    """The nearest folder from `start` upward that has a project marker (as git, uv and npm
    look for theirs); `start` itself when no folder up to the root has one."""
    start = start.absolute()
    for folder in (start, *start.parents):
        if project_marker(folder) is not None:
            return folder
    return start


def project_marker(folder: Path) -> str | None:
    """The first project marker `folder` has, if any."""
    return next((m for m in PROJECT_MARKERS if (folder / m).exists()), None)


class Paths(NamedTuple):
    config_dir: Path
    data_dir: Path
    cache_dir: Path
    state_dir: Path
    managed_dir: Path
    project_dir: Path
    claude_managed_dir: Path

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, project: Path | None = None) -> Paths:
        env = os.environ if env is None else env
        project_dir = project.absolute() if project else find_project(Path.cwd())
        home = env.get("PLUGMAN_HOME")
        if home:
            base = Path(home).expanduser().absolute()
            user = (base / "config", base / "data", base / "cache", base / "state")
        else:
            user = _platform_dirs()
        managed = env.get("PLUGMAN_MANAGED_DIR")
        managed_dir = Path(managed).expanduser().absolute() if managed else _site_config()
        claude = env.get("PLUGMAN_CLAUDE_MANAGED_DIR")
        claude_dir = Path(claude).expanduser().absolute() if claude else claude_managed_default()
        return cls(*user, managed_dir, project_dir, claude_dir)

    # user scope
    @property
    def user_config(self) -> Path:
        return self.config_dir / "plugman.toml"

    # managed scope
    @property
    def managed_settings(self) -> Path:
        return self.managed_dir / "managed-settings.toml"

    @property
    def managed_mcp(self) -> Path:
        return self.managed_dir / "managed-mcp.json"

    # Claude Code's managed settings (docs/claude-format.md#organization-policy)
    @property
    def claude_managed_settings(self) -> Path:
        return self.claude_managed_dir / "managed-settings.json"

    @property
    def claude_managed_dropins(self) -> Path:
        return self.claude_managed_dir / "managed-settings.d"

    @property
    def claude_managed_mcp(self) -> Path:
        return self.claude_managed_dir / "managed-mcp.json"

    def managed_mcp_files(self) -> tuple[Path, ...]:
        """The managed-mcp.json files present: plugman's own, then Claude Code's."""
        return tuple(f for f in (self.managed_mcp, self.claude_managed_mcp) if f.is_file())

    # project and local scopes
    @property
    def project_config(self) -> Path:
        return self.project_dir / "plugman.toml"

    @property
    def project_lock(self) -> Path:
        return self.project_dir / "plugman.lock"

    @property
    def project_mcp(self) -> Path:
        return self.project_dir / ".mcp.json"

    @property
    def local_config(self) -> Path:
        return self.project_dir / ".plugman" / "local.toml"

    # state
    @property
    def store_dir(self) -> Path:
        return self.data_dir / "store"

    @property
    def marketplaces_dir(self) -> Path:
        return self.cache_dir / "marketplaces"

    @property
    def journal_dir(self) -> Path:
        return self.state_dir / "journal"

    def plugin_data(self, plugin_id: str) -> Path:
        """A plugin's ${CLAUDE_PLUGIN_DATA}: its id with characters outside [A-Za-z0-9_-] as '-'."""
        safe = "".join(c if c.isalnum() or c in "_-" else "-" for c in plugin_id)
        return self.data_dir / "plugins" / safe

    def private(self, path: Path) -> bool:
        """Whether a new file at `path` can hold secrets, so plugman creates it 0600: every
        file under plugman's own user folders (the user plugman.toml and its `[mcp_servers]`,
        the install records, exports.json, trust.json, the connectors and marketplaces state)
        and the local scope's `.plugman/local.toml`."""
        mine = (self.config_dir, self.data_dir, self.cache_dir, self.state_dir)
        return path == self.local_config or any(path.is_relative_to(d) for d in mine)

    def as_dict(self) -> dict[str, str]:
        names = (
            "config_dir",
            "data_dir",
            "cache_dir",
            "state_dir",
            "managed_dir",
            "project_dir",
            "claude_managed_dir",
            "user_config",
            "managed_settings",
            "managed_mcp",
            "project_config",
            "project_lock",
            "project_mcp",
            "local_config",
            "store_dir",
            "marketplaces_dir",
            "journal_dir",
        )
        return {name: str(getattr(self, name)) for name in names}


def _platform_dirs() -> tuple[Path, Path, Path, Path]:
    import platformdirs  # lazy: only when PLUGMAN_HOME is not set

    dirs = platformdirs.PlatformDirs(APP, appauthor=False)
    return (
        Path(dirs.user_config_dir),
        Path(dirs.user_data_dir),
        Path(dirs.user_cache_dir),
        Path(dirs.user_state_dir),
    )


def _site_config() -> Path:
    import platformdirs  # lazy: platformdirs is not loaded by `plugman list` (+2 ms)

    return Path(platformdirs.site_config_dir(APP, appauthor=False))


# Claude Code's managed folder per platform (its qS(): macOS, Windows, else Linux and WSL)
CLAUDE_MANAGED = {
    "darwin": "/Library/Application Support/ClaudeCode",
    "win32": "C:\\Program Files\\ClaudeCode",
}


def claude_managed_default(platform: str | None = None) -> Path:
    """Where Claude Code reads its managed settings on this platform."""
    return Path(CLAUDE_MANAGED.get(platform or sys.platform, "/etc/claude-code"))
