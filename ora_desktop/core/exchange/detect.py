"""Which format a source is, decided from its content (never from its name), and its rows.

SQLite files are told apart by their tables; text files by their first line (our JSONL header or
a JSON object with ``id`` and ``content``; a CSV header naming ``id`` and ``content``) or, for a
JSON document, by its keys (a semantica dump).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileMissing
from ..fileheader import read_header
from ..schema import SQLITE_HEADER
from . import chatlog, context_memory, markdown, notes, orafile, ownformat, semantica, zoo
from .rows import BadRow, BadSource, Incoming
from .sources import ImportOptions, open_readonly, tables

#: Every ``--from`` value; ``auto`` detects.
FORMATS = ("auto", "jsonl", "csv", "md", "markdown", "ora", "context-memory", "zoo", "chatlog", "semantica")
_DATABASES = {m.KIND: m for m in (orafile, context_memory, zoo, chatlog)}
_EXPECTED = {
    "ora": "an Ora .site.db (a memories table)",
    "context-memory": "a context-memory database (sessions, summaries, topics, code_snippets)",
    "zoo": "a zoo context database (memory_messages)",
    "chatlog": "a chat-log database (messages with timestamp, role, content; tags or summaries)",
    "jsonl": "an Ora JSONL export (JSON objects with id and content, one per line)",
    "csv": "an Ora CSV export (a header row naming id and content)",
    "semantica": "a semantica JSON dump (memory_items, nodes, edges)",
    "md": "an Ora Markdown review export (starting '# Memories (N)')",
    "markdown": "Markdown notes (a .md file or a folder of them; only with --from markdown)",
}


@dataclass(slots=True)
class Source:
    """An open source: its format, how many memories it should give, and the rows."""

    path: Path
    kind: str
    total: int
    rows: Iterator[Incoming | BadRow]


def expected() -> str:
    """What ``import`` reads, for messages."""
    return "; ".join(_EXPECTED.values())


@contextlib.contextmanager
def open_source(path: str | Path, kind: str = "auto", options: ImportOptions | None = None) -> Iterator[Source]:
    """Open ``path`` read-only as ``kind`` (or the detected format); raises ``BadSource``."""
    path = Path(path).expanduser()
    options = options or ImportOptions()
    if kind not in FORMATS:
        raise BadSource(f"{kind!r} is not an import format ({', '.join(FORMATS)})")
    if not path.exists():
        raise FileMissing(path, "no such file")
    if kind == notes.KIND:  # ordinary notes are never detected: any text file is Markdown
        if not notes.note_files(path):
            raise BadSource(f"{path}: holds no Markdown notes (.md)")
        yield Source(path, kind, notes.count(path), notes.read(path, options))
        return
    if path.is_dir():
        raise BadSource(f"{path}: is a folder, not a file to import (--from markdown reads a folder of notes)")
    head = read_header(path, len(SQLITE_HEADER))  # never open/close: it may be a file we hold open
    if head == SQLITE_HEADER:
        with open_readonly(path) as conn:
            found = tables(conn)
            detected = next((k for k, m in _DATABASES.items() if m.detect(found)), None)
            if kind not in ("auto", detected):
                raise BadSource(f"{path}: is not {_EXPECTED.get(kind, kind)}"
                                + (f"; it looks like {_EXPECTED[detected]}" if detected else ""))
            if detected is None:
                raise BadSource(f"{path}: a SQLite database none of the import formats knows "
                                f"(tables: {', '.join(sorted(found)) or 'none'}); expected {expected()}")
            module = _DATABASES[detected]
            if module is orafile:
                yield Source(path, detected, orafile.count(conn), orafile.read(conn))
            else:
                yield Source(path, detected, module.count(conn, options), module.read(conn, options))
        return
    first = _first_line(path)
    detected = _detect_text(path, first)
    if kind not in ("auto", detected):
        raise BadSource(f"{path}: is not {_EXPECTED.get(kind, kind)}"
                        + (f"; it looks like {_EXPECTED[detected]}" if detected else ""))
    if detected is None:
        raise BadSource(f"{path}: none of the import formats (expected {expected()})")
    if detected == markdown.KIND:
        with open(path, encoding="utf-8-sig", newline="") as stream:
            total = markdown.count(stream)
        with open(path, encoding="utf-8-sig", newline="") as stream:
            yield Source(path, detected, total, markdown.read(stream))
        return
    if detected == "semantica":
        data = semantica.load(path.read_text(encoding="utf-8-sig"))
        yield Source(path, detected, semantica.count(data), semantica.read(data, options))
        return
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = ownformat.read_jsonl if detected == "jsonl" else ownformat.read_csv
        yield Source(path, detected, max(0, _lines(path) - 1), reader(stream))


def _first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8-sig", newline="") as stream:
            for line in stream:
                if line.strip():
                    return line.lstrip("\ufeff")
    except UnicodeDecodeError:
        raise BadSource(f"{path}: neither SQLite nor UTF-8 text (expected {expected()})") from None
    return ""


def _detect_text(path: Path, first: str) -> str | None:
    if not first:
        return None
    if ownformat.looks_like_jsonl(first):
        return "jsonl"
    if markdown.looks_like_review(first):
        return markdown.KIND
    if first.lstrip()[:1] in "{[":
        try:
            data = semantica.load(path.read_text(encoding="utf-8-sig"))
        except UnicodeDecodeError:
            return None
        try:
            return "semantica" if data is not None and semantica.parts(data) is not None else None
        except BadRow:  # a dump's key holding the wrong kind of value: still a semantica dump
            return "semantica"
    return "csv" if ownformat.looks_like_csv(first) else None


def _lines(path: Path) -> int:
    count = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            count += chunk.count(b"\n")
    return count
