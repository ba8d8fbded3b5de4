"""What the editors share: the parts plugman adds, the blocks it inserted, its error."""

from __future__ import annotations

from typing import Any, NamedTuple

from plugman.core.errors import PlugmanError

Path_ = tuple[str, ...]


class Part(NamedTuple):
    """Entries plugman puts in one container: a map `{id: value}`, or a list when `listed`."""

    container: Path_
    entries: dict[str, Any]
    listed: bool = False


class Block(NamedTuple):
    """One insertion: the file held `before` where it now holds `after`."""

    before: str
    after: str
    created: Path_ | None = None  # the container path this block created, if any


class Edited(NamedTuple):
    text: str
    blocks: list[Block]
    present: list[str]  # ids left out: the file already holds an entry by that id
    differ: list[str]  # those of them whose value there is not the one wanted


class EditError(PlugmanError):
    pass
