"""plugman's published JSON Schemas (`plugman/manifest/schemas/`, draft 2020-12 with `$id`):
loading a schema file once, and following a `$ref` within or across files."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).parent / "schemas"
Schema = dict[str, Any]


@cache
def load(name: str) -> Schema:
    """One schema file, by file name (`plugin.schema.json`)."""
    with (SCHEMA_DIR / name).open(encoding="utf-8") as handle:
        loaded: Schema = json.load(handle)
    return loaded


@cache
def resolve(ref: str, base: str) -> tuple[Schema, str]:
    """Follow a `$ref` (`#/$defs/x` or `other.schema.json#/$defs/x`) from file `base` (once:
    the schema files do not change while plugman runs)."""
    file, _, pointer = ref.partition("#")
    file = file or base
    node: Any = load(file)
    for part in filter(None, pointer.split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node, file
