"""Reading files into located documents, and the report that collects what was found."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from plugman.manifest import jsonloc
from plugman.manifest.diagnostics import ERROR, Diagnostic, Sink

MAX_FILE_BYTES = 8 * 1024 * 1024


class Report:
    """Every diagnostic from one run, and which files were checked. `texts`, when a dict: the
    text of each file read through `read_text`, kept for the hidden-text scan
    (plugman.manifest.exposure) so that it reads no file twice."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.files: list[str] = []
        self._files: set[str] = set()  # the same names, to look them up
        self.texts: dict[str, str] | None = None

    def sink(self, path: Path, doc: jsonloc.JsonDocument | None = None) -> Sink:
        """A sink for one file; the file is counted as checked."""
        name = str(path)
        self.add_files((name,))
        sink = Sink(name, doc.locate if doc else None)
        sink.items = self.diagnostics
        return sink

    def add_files(self, names: Iterable[str]) -> None:
        """Count these files as checked (each once, in order)."""
        for name in names:
            if name not in self._files:
                self._files.add(name)
                self.files.append(name)

    def seen(self, path: Path) -> bool:
        return str(path) in self._files

    def read_text(self, path: Path, sink: Sink) -> str | None:
        """`read_text`, the text kept in `texts` when they are kept."""
        text = read_text(path, sink)
        if text is not None and self.texts is not None:
            self.texts[str(path)] = text
        return text


def read_text(path: Path, sink: Sink) -> str | None:
    """The file's text, or None (with an error in `sink`) when it cannot be read as UTF-8."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            sink.error("file-too-large", f"file is larger than {MAX_FILE_BYTES} bytes")
            return None
        data = path.read_bytes()
    except OSError as exc:
        sink.error("unreadable", f"cannot read the file: {exc.strerror or exc}")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        sink.add(
            ERROR,
            "encoding",
            "the file is not valid UTF-8",
            (),
            "save it as UTF-8",
            line=line,
            column=column,
        )
        return None


JSONC_ONLY = frozenset({"json-comment", "json-trailing-comma"})
# JSON parsers accept a duplicate key (the last value wins), but in a plugin manifest, hooks
# file, MCP config or marketplace a reviewer reads the first value while the agent uses the
# last: an error here, so validate fails and install refuses the plugin.
REFUSED = frozenset({"json-duplicate-key"})


def read_json(
    path: Path, report: Report, *, jsonc: bool = False
) -> tuple[jsonloc.JsonDocument | None, Sink]:
    """Parse a JSON file; syntax problems are reported with their line and column. A `jsonc`
    file (VS Code's) may hold comments and trailing commas."""
    sink = report.sink(path)
    text = report.read_text(path, sink)
    if text is None:
        return None, sink
    try:
        doc = jsonloc.parse(text)
    except jsonloc.JsonSyntaxError as exc:
        sink.add(
            ERROR,
            "json-syntax",
            f"invalid JSON: {exc.message}",
            (),
            "fix the syntax at that position",
            line=exc.line,
            column=exc.column,
        )
        return None, sink
    sink.locate = doc.locate
    for problem in doc.problems:
        if jsonc and problem.code in JSONC_ONLY:
            continue
        line, column = doc.position(problem.offset)
        sink.add(
            ERROR if problem.code in REFUSED else problem.severity,
            problem.code,
            problem.message,
            problem.path,
            problem.hint,
            line=line,
            column=column,
        )
    return doc, sink
