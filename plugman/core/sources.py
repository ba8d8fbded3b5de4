"""`LockedSource`: where an installed (or offered) plugin comes from, typed: its source kind and
that kind's own fields, as plugman.lock, the install records and `--json` outputs write it
(`{"type": "github", "repo": "o/r", "commit": "…", "ref": "main"}`).

The fields belong to the kind (plugman.plugins.sources.kind.SourceKind: a built-in's or an
extension's), so the set of keys is open and each value is text (or None: a catalog's source
not fetched yet has no pin); the kind reads them through `get`. JSON and TOML enter and leave
only through `parse` and `table`, which keep the keys in the order read, so a file written
again is byte for byte the one read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from plugman.core.errors import PlugmanError

KIND = "type"  # the key naming the kind in the written table


class LockedSource(Mapping[str, str | None]):
    """A source kind (`kind`) and its fields (`fields`), read-only; as a mapping it is the
    written table, `type` included, so `source.get("commit")` reads a field."""

    __slots__ = ("_table",)

    def __init__(self, kind: str, fields: Mapping[str, str | None] | None = None) -> None:
        table: dict[str, str | None] = {KIND: kind}
        for key, value in (fields or {}).items():
            if key != KIND:  # a value an untyped extension gave as a number is its text
                table[key] = value if value is None or isinstance(value, str) else str(value)
        self._table = table

    @classmethod
    def parse(cls, data: object, where: str, hint: str) -> LockedSource:
        """A source table read from a file (hostile input): a JSON/TOML object with a text
        `type` and text (or null) values; PlugmanError at `where` otherwise. Key order is kept."""
        if not isinstance(data, Mapping):
            raise PlugmanError("a plugin's source is not a table", hint=hint, where=where)
        kind = data.get(KIND)
        if not isinstance(kind, str) or not kind:
            raise PlugmanError("a plugin's source has no text 'type'", hint=hint, where=where)
        wrong = [str(k) for k, v in data.items() if not isinstance(k, str) or not _text(v)]
        if wrong:
            raise PlugmanError(
                f"a {kind} source has a field that is not text: {', '.join(sorted(wrong))}",
                hint=hint,
                where=where,
            )
        found = cls(kind)
        found._table = dict(data)  # the order read, `type` where it was
        return found

    @property
    def kind(self) -> str:
        kind = self._table[KIND]
        assert kind is not None
        return kind

    @property
    def fields(self) -> dict[str, str | None]:
        """The kind's own fields (without `type`), in order."""
        return {key: value for key, value in self._table.items() if key != KIND}

    def settled(self) -> LockedSource:
        """As a lock entry holds it: `type`, then the fields that say something (not None),
        sorted by name."""
        said = sorted((k, v) for k, v in self.fields.items() if v is not None)
        return LockedSource(self.kind, dict(said))

    def table(self) -> dict[str, str | None]:
        """The JSON/TOML form: `type` and the fields, in the order read or made."""
        return dict(self._table)

    def __getitem__(self, key: str) -> str | None:
        return self._table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"LockedSource({self.kind!r}, {self.fields!r})"


def _text(value: object) -> bool:
    return value is None or isinstance(value, str)
