"""Every conflict a sync settled, with the basis of its decision: the ``sync --conflicts`` list.

One row per conflict in a plain ``ora_desktop_sync_conflicts`` table: the memory, what kind of
conflict (two edits, or a deletion against an edit), which side won, the two times compared in
server time and why, and the trash row that keeps the losing version when there is one. Files
synced before this log existed list their kept "sync conflict" trash rows as well.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .. import engine_tables, timestamps
from ..rawsql import all_rows
from ..records import DeletedMemory, row_to_memory
from ..schema import MEMORY_COLUMNS

if TYPE_CHECKING:
    from ..store import Store

TABLE = engine_tables.SYNC_CONFLICTS
EDIT = "edit"  # both sides edited the memory
DELETE = "delete"  # one side deleted it, the other edited it
TRASH = engine_tables.TRASH


@dataclass(frozen=True, slots=True)
class ConflictEntry:
    """One settled conflict; ``kept`` is the losing version when it is in the trash."""

    memory_id: str
    decided_at: datetime | None
    kind: str
    winner: str  # "this file", "server", or "" for a conflict kept before the log existed
    basis: str
    kept: DeletedMemory | None = None


@dataclass(frozen=True, slots=True)
class ConflictPage:
    """A page of the conflicts list, newest first, and how many there are in all."""

    total: int
    offset: int
    entries: tuple[ConflictEntry, ...]


def record(store: Store, entries: Sequence[tuple[str, str, str, str, int | None]], stamp: str) -> None:
    """Log ``(memory id, kind, winner, basis, trash id)`` conflicts (inside a write)."""
    if entries:
        store.create_engine_tables(TABLE)
        store.db.cursor().executemany(
            f"INSERT INTO {TABLE} (memory_id, decided_at, kind, winner, basis, trash_id) VALUES (?, ?, ?, ?, ?, ?)",
            [(m, stamp, k, w, b, t) for m, k, w, b, t in entries])


def _sources(store: Store, reason: str) -> tuple[str, list]:
    """The UNION of logged conflicts and older "sync conflict" trash rows, as one SELECT."""
    has_log, has_trash = store.has_table(TABLE), store.has_table(TRASH)
    parts: list[str] = []
    params: list = []
    if has_log:
        kept = ("t.id, t.deleted_at, t.reason, t.batch, t.row_json" if has_trash
                else "NULL, NULL, NULL, NULL, NULL")
        join = f" LEFT JOIN {TRASH} t ON t.id = c.trash_id" if has_trash else ""
        parts.append(f"SELECT c.id AS n, c.memory_id, c.decided_at AS at, c.kind, c.winner, c.basis, {kept} "
                     f"FROM {TABLE} c{join}")
    if has_trash:
        logged = f" AND id NOT IN (SELECT trash_id FROM {TABLE} WHERE trash_id IS NOT NULL)" if has_log else ""
        parts.append(f"SELECT -id AS n, memory_id, deleted_at AS at, '{EDIT}', '', '', id, deleted_at, reason, "
                     f"batch, row_json FROM {TRASH} WHERE reason = ?{logged}")
        params.append(reason)
    return " UNION ALL ".join(parts), params


def page(store: Store, reason: str, limit: int | None = 50, offset: int = 0) -> ConflictPage:
    """The conflicts list, newest first: ``limit`` entries from ``offset`` and the total."""
    union, params = _sources(store, reason)
    if not union:
        return ConflictPage(0, offset, ())
    total = all_rows(store, f"SELECT count(*) FROM ({union})", params)[0][0]
    tail = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit else (f" LIMIT -1 OFFSET {int(offset)}")
    rows = all_rows(store, f"SELECT * FROM ({union}) ORDER BY julianday(at) DESC, n DESC{tail}", params)
    entries = []
    for _, memory_id, at, kind, winner, basis, trash_id, deleted_at, why, batch, text in rows:
        kept = None
        if trash_id is not None and text is not None:
            data = json.loads(text)
            memory = row_to_memory([None, *(data.get(c) for c in MEMORY_COLUMNS)])
            kept = DeletedMemory(trash_id, memory, timestamps.parse(deleted_at), why, batch)
        entries.append(ConflictEntry(memory_id, timestamps.parse(at), kind, winner, basis, kept))
    return ConflictPage(total, offset, tuple(entries))
