"""Where an agent's user-scope file lives (`in_home`, `in_env_dir`, `in_config_home`) and the
files of an agent with one file (`one_file`), or one more for its hooks (`with_hooks`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plugman.agents.targets.model import Location, Place

UserPath = Callable[[Place], Path]


def one_file(user: UserPath, project: str | None) -> Callable[[Place], dict[str, Location]]:
    """A target with one file: `user(place)` at user scope, `project` in the project folder."""

    def files(place: Place) -> dict[str, Location]:
        if place.scope == "user":
            return {"mcp": Location(user(place))}
        if place.scope == "project" and project is not None:
            return {"mcp": Location(place.project / project)}
        return {}

    return files


def with_hooks(
    user: UserPath, project: str | None, hooks_user: UserPath, hooks_project: str
) -> Callable[[Place], dict[str, Location]]:
    """A target whose hooks have a file of their own (role `hooks`) beside its MCP file."""
    mcp = one_file(user, project)

    def files(place: Place) -> dict[str, Location]:
        found = mcp(place)
        if place.scope == "user":
            found["hooks"] = Location(hooks_user(place))
        elif place.scope == "project":
            found["hooks"] = Location(place.project / hooks_project)
        return found

    return files


def in_home(*parts: str) -> UserPath:
    return lambda place: place.home.joinpath(*parts)


def in_env_dir(var: str, default: str, name: str) -> UserPath:
    """`name` in the folder the `var` variable names, else in `~/default`."""
    return lambda place: Path(place.env.get(var) or place.home / default) / name


def in_config_home(*parts: str) -> UserPath:
    """Under XDG_CONFIG_HOME (default `~/.config`)."""
    return lambda place: Path(place.env.get("XDG_CONFIG_HOME") or place.home / ".config").joinpath(
        *parts
    )
