"""What plugman created in the files it shares with the user: the `owned` table of an install
record (plugman.core.state), one entry per file, so a removal gives back exactly what was there.

- a declaration file (plugman.toml, local.toml): whether plugman created the file, and each
  table it created with the file's ending before it (plugman.config.declarations);
- the project's `.mcp.json`: whether plugman created the file, and each server's inserted blocks
  of text (plugman.config.servers.mcp_json);
- `.mcp.json` under a record from before blocks: the file's text before, and the servers added.

Read once with the record (`Owned.parse`: a malformed entry is a PlugmanError naming the
record's file) and written back under the keys it always had (`to_json`).
"""

from __future__ import annotations

from typing import NamedTuple, TypeGuard

from plugman.core.errors import PlugmanError

# One inserted block as plugman.manifest.edit.Block holds it: the text before, the text after,
# and the container path it created (None: none). Kept as a plain triple here, below manifest.
OwnedBlock = tuple[str, str, tuple[str, ...] | None]


class TomlOwned(NamedTuple):
    """A declaration file: `file`, plugman created it; `tables`, table -> the file's ending
    before plugman added that table (restored when the table goes)."""

    file: bool
    tables: dict[str, str]


class McpOwned(NamedTuple):
    """`.mcp.json`: `created`, plugman created it; `blocks`, server -> the blocks inserted."""

    created: bool
    blocks: dict[str, list[OwnedBlock]]


class McpBefore(NamedTuple):
    """`.mcp.json` under a record from before blocks: its text before (None: absent) and the
    servers plugman added since."""

    before: str | None
    added: list[str]


OwnedFile = TomlOwned | McpOwned | McpBefore


class Owned:
    """file path -> what plugman created there; edited in place by the declaration and
    `.mcp.json` writers."""

    __slots__ = ("files", "where")

    def __init__(self, files: dict[str, OwnedFile], where: str) -> None:
        self.files = files
        self.where = where  # the record's file, named by an error

    def __bool__(self) -> bool:
        return bool(self.files)

    def get(self, path: str) -> OwnedFile | None:
        return self.files.get(path)

    def drop(self, path: str) -> None:
        self.files.pop(path, None)

    def toml(self, path: str, created: bool) -> TomlOwned:
        """The entry of declaration file `path`, made (with `created`) when there is none."""
        found = self.files.setdefault(path, TomlOwned(created, {}))
        if not isinstance(found, TomlOwned):
            raise _bad(self.where, f"the owned entry of {path} is not a declaration file's")
        return found

    def mcp(self, path: str, created: bool) -> McpOwned | McpBefore:
        """The entry of `.mcp.json` file `path`, made (with `created`) when there is none."""
        found = self.files.setdefault(path, McpOwned(created, {}))
        if isinstance(found, TomlOwned):
            raise _bad(self.where, f"the owned entry of {path} is not an .mcp.json file's")
        return found

    @classmethod
    def parse(cls, data: object, where: str) -> Owned:
        if not isinstance(data, dict):
            raise _bad(where, "'owned' is not a JSON object")
        return cls({str(path): _entry(value, path, where) for path, value in data.items()}, where)

    def to_json(self) -> dict[str, object]:
        return {path: _json(entry) for path, entry in self.files.items()}


def _entry(value: object, path: str, where: str) -> OwnedFile:
    bad = _bad(where, f"the owned entry of {path} has the wrong type")
    if not isinstance(value, dict):
        raise bad
    if "tables" in value:
        file, tables = value.get("file"), value["tables"]
        if not isinstance(file, bool) or not _str_map(tables):
            raise bad
        return TomlOwned(file, dict(tables))
    if "blocks" in value:
        created, blocks = value.get("created"), value["blocks"]
        if not isinstance(created, bool) or not isinstance(blocks, dict):
            raise bad
        return McpOwned(created, {str(k): _blocks(v, bad) for k, v in blocks.items()})
    before, added = value.get("before"), value.get("added")
    if not isinstance(before, str | None) or not _str_list(added):
        raise bad
    return McpBefore(before, list(added))


def _blocks(value: object, bad: PlugmanError) -> list[OwnedBlock]:
    if not isinstance(value, list):
        raise bad
    found: list[OwnedBlock] = []
    for block in value:
        if not isinstance(block, list) or len(block) != 3:
            raise bad
        before, after, created = block
        if not isinstance(before, str) or not isinstance(after, str):
            raise bad
        if created is not None and not _str_list(created):
            raise bad
        found.append((before, after, None if created is None else tuple(created)))
    return found


def _json(entry: OwnedFile) -> dict[str, object]:
    if isinstance(entry, TomlOwned):
        return {"file": entry.file, "tables": dict(entry.tables)}
    if isinstance(entry, McpOwned):
        blocks = {
            name: [[b, a, None if c is None else list(c)] for b, a, c in found]
            for name, found in entry.blocks.items()
        }
        return {"created": entry.created, "blocks": blocks}
    return {"before": entry.before, "added": list(entry.added)}


def _str_map(value: object) -> TypeGuard[dict[str, str]]:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _str_list(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _bad(where: str, message: str) -> PlugmanError:
    return PlugmanError(
        f"not a plugman state file: {message}",
        hint="run 'plugman doctor', or move the file away and reinstall",
        where=where,
    )
