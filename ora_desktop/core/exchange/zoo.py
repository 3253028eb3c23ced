"""The zoo ContextDatabase (seed ``000_…``, ``memory.sqlite``): archived, pruned chat.

Each ``memory_messages`` row -> a ``conversation`` memory, importance 4, content ``role: text``,
its ``source`` (``history_archive``) as a ``Tags:`` line; ``created_at`` (integer epoch seconds,
or milliseconds) becomes SQLite's ``YYYY-MM-DD HH:MM:SS`` UTC. Ids derive from the file's
identity — its first archived row, which never changes as the archive grows — and the row id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from .rows import Incoming, derived_id
from .sources import ImportOptions, join_blocks, memory, sql_time, tags_line

KIND = "zoo"


def detect(tables: dict[str, set[str]]) -> bool:
    """A ``memory_messages`` table with role, content and created_at."""
    return {"role", "content", "created_at"} <= tables.get("memory_messages", set())


def count(conn: sqlite3.Connection, options: ImportOptions) -> int:
    """How many memories the file will give."""
    return conn.execute("SELECT count(*) FROM memory_messages").fetchone()[0]


def read(conn: sqlite3.Connection, options: ImportOptions) -> Iterator[Incoming]:
    """Memories from a zoo context database."""
    first = conn.execute("SELECT created_at, role, content FROM memory_messages ORDER BY id LIMIT 1").fetchone()
    identity = "|".join(str(v) for v in first) if first else ""
    for row_id, role, text, source, created in conn.execute(
            "SELECT id, role, content, source, created_at FROM memory_messages ORDER BY id"):
        where = f"memory_messages row {row_id}"
        content = join_blocks(f"{role}: {text}", tags_line([("topic", source)] if source else []))
        yield Incoming(memory(derived_id("zoo", identity, row_id), content, "conversation", 4,
                              sql_time(created), None, options), where)
