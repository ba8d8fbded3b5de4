#!/usr/bin/env python3
"""A small in-memory notes MCP server, built with the mcp Python SDK 2.x (``MCPServer``).

Usage::

    python notes_server.py                                  # stdio (default)
    python notes_server.py --transport streamable-http --host 127.0.0.1 --port 8765
                                                            # -> http://127.0.0.1:8765/mcp
    python notes_server.py --transport sse --port 8766      # -> http://127.0.0.1:8766/sse

Only the standard library and ``mcp`` are used. In stdio mode nothing but protocol
messages is written to stdout; logs go to stderr.
"""

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Literal, cast

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

SERVER_NAME = "notes"
SERVER_VERSION = "1.0.0"
TRANSPORTS = ("stdio", "streamable-http", "sse")
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass
class Note:
    title: str
    body: str
    owner: str


@dataclass
class NoteStore:
    """Notes kept in memory for the lifetime of the process, in insertion order."""

    owner: str
    notes: dict[str, Note] = field(default_factory=dict)

    def seed(self) -> None:
        self.put("welcome", "Welcome to the plugman notes server. Try add_note and list_notes.")
        self.put("todo", "Write the changelog. Review the open pull requests.")

    def put(self, title: str, body: str) -> Note:
        note = Note(title=title, body=body, owner=self.owner)
        self.notes[title] = note
        return note

    def get(self, title: str) -> Note:
        try:
            return self.notes[title]
        except KeyError:
            raise ValueError(f"no note titled {title!r}") from None

    def titles(self) -> list[str]:
        return list(self.notes)


def build_server(log_level: LogLevel = "WARNING") -> MCPServer:
    """Create the notes server with its tools, resources and prompt registered."""
    store = NoteStore(owner=os.environ.get("NOTES_OWNER", "sample"))
    store.seed()

    server = MCPServer(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions="Keeps short text notes in memory. Notes are lost when the server stops.",
        log_level=log_level,
    )

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
    def add_note(title: str, body: str) -> str:
        """Add a note, replacing any note with the same title."""
        title = title.strip()
        if not title:
            raise ValueError("title must not be empty")
        store.put(title, body)
        return f"saved note {title!r}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_notes() -> list[str]:
        """List the titles of all notes."""
        return store.titles()

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def get_note(title: str) -> str:
        """Return the body of the note with this title."""
        return store.get(title).body

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def delete_note(title: str) -> str:
        """Delete the note with this title."""
        store.get(title)
        del store.notes[title]
        return f"deleted note {title!r}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.resource(
        "notes://index",
        name="notes-index",
        description="JSON list of all note titles.",
        mime_type="application/json",
    )
    def notes_index() -> str:
        return json.dumps(store.titles())

    @server.resource(
        "notes://note/{title}",
        name="note",
        description="The body of one note.",
        mime_type="text/plain",
    )
    def note_body(title: str) -> str:
        return store.get(title).body

    @server.prompt()
    def summarize_notes(style: str = "short") -> str:
        """Ask the model to summarize every note, in a short or detailed style."""
        listing = "\n".join(f"- {n.title}: {n.body}" for n in store.notes.values())
        header = f"Summarize the notes of {store.owner} in a {style} style:"
        return f"{header}\n{listing or '(no notes)'}"

    return server


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="In-memory notes MCP server (mcp SDK 2.x).")
    parser.add_argument("--transport", choices=TRANSPORTS, default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP/SSE bind address")
    parser.add_argument("--port", type=int, default=8765, help="HTTP/SSE port")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="WARNING")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    server = build_server(cast(LogLevel, args.log_level))
    if args.transport == "stdio":
        server.run()
        return
    # Human-readable hint on stderr only; stdout stays clean in every mode.
    path = "/sse" if args.transport == "sse" else "/mcp"
    print(
        f"notes server: {args.transport} on http://{args.host}:{args.port}{path}", file=sys.stderr
    )
    if args.transport == "sse":
        server.run("sse", host=args.host, port=args.port)
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
