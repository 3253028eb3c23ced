"""Pinned memories: the few a person wants in every context, first (Letta's core memory blocks).

Pins live in the plain table ``ora_desktop_pins`` of the agent's own file (memory id, when, by
whom; its DDL is in :mod:`.engine_tables`), created by the first pin and never by reading
(DESIGN contract 2): a read-only file, or one nobody pinned in, simply has no pins. The seed's
``memories`` table is untouched.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from . import engine_tables
from .listing import PINNED_SQL
from .rawsql import all_rows

if TYPE_CHECKING:
    from .store import Store

TABLE = engine_tables.PINS


def pinned_ids(store: Store) -> list[str]:
    """Ids pinned in ``store``, oldest pin first (empty when nothing was ever pinned)."""
    if not store.has_table(TABLE):
        return []
    return [str(r[0]) for r in all_rows(store, f"SELECT memory_id FROM {TABLE} ORDER BY pinned_at, rowid")]


def has_pins_table(conn: sqlite3.Connection) -> bool:
    """Whether any database open on ``conn`` (the search engine attaches the memory file) holds the pins table."""
    try:
        return conn.execute("SELECT 1 FROM pragma_table_list WHERE name = ?", (TABLE,)).fetchone() is not None
    except sqlite3.OperationalError:  # SQLite before 3.37: the main schema and an attached "src"
        for schema in ("main", "src"):
            try:
                if conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE name = ?", (TABLE,)).fetchone():
                    return True
            except sqlite3.OperationalError:
                continue
        return False


__all__ = ["PINNED_SQL", "TABLE", "has_pins_table", "pinned_ids"]
