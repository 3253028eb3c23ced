"""Another Ora ``.site.db`` as a source: every row exactly as stored (seeding a new agent)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ..schema import MEMORY_COLUMNS
from .rows import Incoming

KIND = "ora"


def detect(tables: dict[str, set[str]]) -> bool:
    """A ``memories`` table with ``id`` and ``content``."""
    return {"id", "content"} <= tables.get("memories", set())


def count(conn: sqlite3.Connection) -> int:
    """How many memories the file holds."""
    return conn.execute("SELECT count(*) FROM memories").fetchone()[0]


def read(conn: sqlite3.Connection) -> Iterator[Incoming]:
    """Every memory, columns the file lacks as NULL."""
    present = {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
    select = ", ".join(c if c in present else f"NULL AS {c}" for c in MEMORY_COLUMNS)
    cursor = conn.execute(f"SELECT rowid, {select} FROM memories ORDER BY rowid")
    while batch := cursor.fetchmany(5000):
        for rowid, *values in batch:
            yield Incoming(dict(zip(MEMORY_COLUMNS, values, strict=True)), f"memories rowid {rowid}")
