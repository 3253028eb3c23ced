"""What the neighbouring-store readers share: a read-only open, table facts, mapped values.

A source file is never changed: it is opened ``mode=ro`` (``immutable`` when SQLite would
otherwise create ``-wal``/``-shm`` beside it), exactly as the store opens a read-only file.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import timestamps
from ..connection import make_database, translated
from ..schema import sniff_file


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """Choices that change how a neighbouring store maps to memories."""

    #: ``pending`` (the default) or ``local_only`` for every imported memory.
    sync_status: str = "pending"
    #: context-memory: also import key messages as ``conversation`` memories.
    messages: bool = False
    #: Own formats (JSONL, CSV, another .site.db) keep their ``sync_status`` unless this is set.
    force_sync_status: bool = False


@contextlib.contextmanager
def open_readonly(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a SQLite source (errors name the file)."""
    sniff_file(path)
    db, _ = make_database(path, readonly=True)
    try:
        with translated(path):
            db.connect()
            conn = db.connection()
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        yield conn
    finally:
        db.close_all()


def tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Table name -> its column names."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {name: {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')} for name in names}


def sql_time(value: Any) -> Any:
    """A source timestamp (text in any format, or epoch seconds/milliseconds) in SQLite's format;
    a value that is not a time is returned as it is, for :func:`.rows.check_row` to report."""
    parsed = timestamps.parse(value) if value not in (None, "") else None
    return value if parsed is None else timestamps.to_sql(parsed)


def json_list(text: Any) -> list[str]:
    """Items of a JSON array column; text that is not a JSON array is one item."""
    if text in (None, ""):
        return []
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return [str(text)]
    if isinstance(value, list):
        return [str(v) for v in value if v not in (None, "")]
    return [str(value)]


def tags_line(tags: Iterable[tuple[str | None, str]]) -> str:
    """``Tags: react, file=src/app.ts`` — the line the search tag extractor reads as tags
    (a bare value is a ``topic``; commas and line breaks inside a value become spaces)."""
    seen: dict[str, None] = {}
    for kind, value in tags:
        value = " ".join(str(value).replace(",", " ").split())
        if value:
            seen[f"{kind}={value}" if kind and kind != "topic" else value] = None
    return f"Tags: {', '.join(seen)}" if seen else ""


def join_blocks(*blocks: str | None) -> str:
    """Paragraphs joined by blank lines, empty ones left out."""
    return "\n\n".join(b.strip("\n") for b in blocks if b and b.strip())


def memory(id_: str, content: str, type_: str, importance: int, created: str, updated: str | None,
           options: ImportOptions, related: list[str] | None = None) -> dict[str, Any]:
    """Column values of a memory mapped from a neighbouring store."""
    return {
        "id": id_, "content": content, "type": type_, "importance": importance, "access_count": 0,
        "last_accessed_at": None, "health_score": 1.0,
        "related_to": json.dumps(list(dict.fromkeys(related))) if related else None,
        "superseded_by": None, "created_at": created, "updated_at": updated or created,
        "expires_at": None, "synced_at": None, "sync_status": options.sync_status,
    }
