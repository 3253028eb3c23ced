"""The file's side of sync: its state table, what to push, tombstones, the conflicts list
(a pull is applied by :mod:`.pull`).

The state lives in a plain ``ora_desktop_sync`` table (ARCHITECTURE.md, contract 2), one row per server
(keyed by the server's id, so pointing a file at another server starts afresh). Memories purged
for good can queue an id-only tombstone in ``ora_desktop_sync_tombstones`` (see
:func:`queue_tombstones`); ordinary deletes are found in the trash.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import engine_tables, timestamps
from ..rawsql import all_rows, run_sql
from ..writes import IDS_JSON
from . import baseline, conflict_log
from .redact import SyncError
from .server import COLUMNS

if TYPE_CHECKING:
    from ..store import Store

STATE_TABLE = engine_tables.SYNC
TOMBSTONE_TABLE = engine_tables.SYNC_TOMBSTONES
CONFLICT = "sync conflict"  # trash reason of a losing version
REMOTE_DELETE = "sync delete"  # trash reason of a memory deleted on another machine
NEEDED = ("id", "content", "updated_at", "synced_at", "sync_status")


@dataclass(frozen=True, slots=True)
class SyncState:
    """What a file remembers of its syncs with one server."""

    server_id: str
    server: str
    site: str
    agent: str
    last_pull: int = 0
    tomb_mark: str | None = None
    last_sync: datetime | None = None
    pushed: int = 0
    pulled: int = 0
    conflicts: int = 0
    clock_offset: float | None = None  # seconds this machine's clock was behind the server's at the last sync
    push_id: str | None = None  # the run whose push may not be marked here yet (a sync stopped mid-push)


@dataclass(frozen=True, slots=True)
class Decision:
    """How a pulled row was settled against the file (one per conflict reported)."""

    memory_id: str
    winner: str  # "this file" or "server"
    local_updated_at: str | None
    server_updated_at: str | None
    server_deleted: bool = False
    kind: str = "edit"  # "edit" (both sides edited) or "delete" (a deletion against an edit)
    basis: str = ""  # why this side won: the two times compared in server time


def require_columns(store: Store) -> None:
    """Refuse a file whose ``memories`` lacks a column sync relies on (nothing is changed)."""
    missing = [c for c in NEEDED if c not in store.columns]
    if missing:
        raise SyncError(f"{store.path}: cannot sync: the memories table has no {', '.join(missing)} column")


_ADDED_STATE_COLUMNS = ("clock_offset", "push_id")  # engine tables version 2 (older files lack them)


def ensure_tables(store: Store) -> None:
    """Create the sync tables (call inside the sync's first write transaction)."""
    store.ensure_engine_tables()
    store.create_engine_tables(STATE_TABLE, TOMBSTONE_TABLE, baseline.TABLE, conflict_log.TABLE)


def states(store: Store) -> list[SyncState]:
    """Every server this file has synced with, most recent sync first (never creates a table)."""
    if not store.has_table(STATE_TABLE):
        return []
    have = {r[1] for r in all_rows(store, f"PRAGMA table_info({STATE_TABLE})")}
    extra = ", ".join(c if c in have else f"NULL AS {c}" for c in _ADDED_STATE_COLUMNS)
    rows = all_rows(store,
        f"SELECT server_id, server, site, agent, last_pull, tomb_mark, last_sync, pushed, pulled, conflicts, {extra} "
        f"FROM {STATE_TABLE} ORDER BY julianday(last_sync) DESC"
    )
    return [SyncState(*r[:6], timestamps.parse(r[6]), *r[7:]) for r in rows]


def state_for(store: Store, server_id: str) -> SyncState | None:
    """The state kept for one server, or ``None`` before the first sync with it."""
    return next((s for s in states(store) if s.server_id == server_id), None)


def save_state(store: Store, state: SyncState) -> None:
    """Write ``state`` (inside a write transaction)."""
    last = timestamps.to_sql(state.last_sync) if state.last_sync else None
    run_sql(store,
        f"INSERT OR REPLACE INTO {STATE_TABLE} (server_id, server, site, agent, last_pull, tomb_mark, last_sync, "
        "pushed, pulled, conflicts, clock_offset, push_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (state.server_id, state.server, state.site, state.agent, state.last_pull, state.tomb_mark, last,
         state.pushed, state.pulled, state.conflicts, state.clock_offset, state.push_id),
    )


def _select(store: Store, alias: str = "") -> str:
    return ", ".join(f"{alias}{c}" if c in store.columns else f"NULL AS {c}" for c in COLUMNS)


PENDING = "(sync_status = 'pending' OR sync_status IS NULL)"


def _outgoing(store: Store, server_id: str | None) -> tuple[str, str, list[Any]]:
    """(FROM clause, WHERE condition, parameters) of the memories a sync with ``server_id`` pushes:
    those differing from what was last synced with it (see :mod:`.baseline`), whatever
    ``sync_status`` says; before any baseline exists, those marked pending."""
    if server_id is None or not baseline.ready(store):
        pending = PENDING.replace("sync_status", "m.sync_status")
        return "memories m", f"m.sync_status IS NOT 'local_only' AND {pending}", []
    baseline.install(store)
    cols = ", ".join(f"{c}" for c in ("memory_id", "fingerprint", "updated_at", *baseline.USAGE))
    source = (f"memories m LEFT JOIN (SELECT {cols} FROM {baseline.TABLE} WHERE server_id = ?) b "
              "ON b.memory_id = m.id")
    return source, f"m.sync_status IS NOT 'local_only' AND {baseline.changed_sql(store)}", [server_id]


def pending_count(store: Store, server_id: str | None = None) -> int:
    """How many memories wait to be pushed to ``server_id`` (``local_only`` never counts). Without
    ``server_id``, those marked pending (an index lookup); with it, every row differing from what
    was last synced (a pass over the file computing fingerprints)."""
    if "sync_status" not in store.columns:
        return 0
    source, where, params = _outgoing(store, server_id)
    return all_rows(store, f"SELECT count(*) FROM {source} WHERE {where}", params)[0][0]


def outgoing(store: Store, server_id: str | None, among: frozenset[str] | None = None,
             rowids: frozenset[int] | None = None) -> list[int]:
    """The rowids of every memory a sync with ``server_id`` pushes, in rowid order: one pass over
    the file (the content fingerprint of each row is computed here, once per sync), or over the
    memories ``among`` names (ids, :mod:`.heard`) or at ``rowids`` (:mod:`.logged`) when every
    other is known unchanged since the last sync."""
    source, where, params = _outgoing(store, server_id)
    for column, named in (("m.id", among), ("m.rowid", rowids)):
        if named is None:
            continue
        if not named:
            return []
        where += f" AND {column} IN (SELECT value FROM json_each(?))"
        params = [*params, json.dumps(sorted(named))]
    return [r[0] for r in all_rows(store, f"SELECT m.rowid FROM {source} WHERE {where} ORDER BY m.rowid", params)]


def rows_at(store: Store, server_id: str | None, rowids: Sequence[int]
            ) -> list[tuple[int, tuple[Any, ...], str | None, str | None]]:
    """``(rowid, values in COLUMNS order, baseline fingerprint, baseline updated_at)`` of the
    memories at ``rowids`` that are still there and not ``local_only``."""
    joined = server_id is not None and baseline.ready(store)
    source = (f"memories m LEFT JOIN (SELECT memory_id, fingerprint, updated_at FROM {baseline.TABLE} "
              "WHERE server_id = ?) b ON b.memory_id = m.id") if joined else "memories m"
    base = "b.fingerprint, b.updated_at" if joined else "NULL, NULL"
    rows = all_rows(store,
        f"SELECT m.rowid, {base}, {_select(store, 'm.')} FROM {source} WHERE m.rowid IN "
        "(SELECT value FROM json_each(?)) AND m.sync_status IS NOT 'local_only' ORDER BY m.rowid",
        ([server_id] if joined else []) + [json.dumps(list(rowids))],
    )
    return [(r[0], tuple(r[3:]), r[1], r[2]) for r in rows]


def data_version(store: Store) -> int:
    """SQLite's ``PRAGMA data_version`` of this thread's connection: it moves only when another
    connection commits to the file."""
    return run_sql(store, "PRAGMA data_version").fetchone()[0]


def mark_pushed(store: Store, rows: Sequence[tuple[int, tuple[Any, ...]]], stamp: str,
                unchanged_since: int | None = None) -> int:
    """Set pushed memories (``(rowid, values)`` as read by :func:`pending_rows`) ``synced`` unless
    they changed since they were read (call inside a write transaction). When no other connection
    committed since ``unchanged_since`` (a :func:`data_version` taken before the read), one
    statement marks them all; otherwise every pushed column is compared row by row, so an edit made
    meanwhile, even within the same second, stays pending."""
    if not rows:
        return 0
    if unchanged_since is not None and data_version(store) == unchanged_since:
        # No other connection committed since the rows were read: they are exactly as sent.
        return run_sql(store,
            "UPDATE memories SET sync_status = 'synced', synced_at = ? WHERE rowid IN (SELECT value FROM "
            "json_each(?)) AND sync_status IS NOT 'local_only'", (stamp, json.dumps([r for r, _ in rows])),
        ).rowcount
    present = [i for i, c in enumerate(COLUMNS) if c in store.columns]
    checks = " AND ".join(f"{COLUMNS[i]} IS ?" for i in present)
    cursor = store.db.cursor()
    cursor.executemany(
        f"UPDATE memories SET sync_status = 'synced', synced_at = ? WHERE rowid = ? AND {checks} "
        "AND sync_status IS NOT 'local_only'",
        [(stamp, rowid, *(values[i] for i in present)) for rowid, values in rows],
    )
    return cursor.rowcount


def reset_for_new_server(store: Store) -> int:
    """Before the first sync with a server, rows synced elsewhere are pending again for it."""
    return run_sql(store, "UPDATE memories SET sync_status = 'pending' WHERE sync_status = 'synced'").rowcount


# ---------------------------------------------------------------------- tombstones
def queue_tombstones(store: Store, ids: Iterable[str], deleted_at: str | None = None) -> None:
    """Ask the next sync to send id-only tombstones for ``ids`` (for deletes that leave no trash
    row, such as a purge). Call inside the purge's write transaction; creates the table if needed."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return
    ensure_tables(store)
    run_sql(store,
        f"INSERT OR REPLACE INTO {TOMBSTONE_TABLE} (memory_id, deleted_at) SELECT value, ? FROM json_each(?)",
        (deleted_at or timestamps.now_sql(), json.dumps(ids)),
    )


def tombstones(store: Store, mark: str | None) -> list[tuple[str, str]]:
    """``(id, deleted at)`` of memories deleted here since ``mark`` (from the trash, never
    ``local_only`` ones or removals made by sync itself) plus queued ones, minus ids present again."""
    out: dict[str, str] = {}
    if store.has_table("ora_desktop_trash"):
        since = "" if mark is None else " AND julianday(deleted_at) >= julianday(?)"
        for memory_id, deleted_at in all_rows(store,
            "SELECT memory_id, max(deleted_at) FROM ora_desktop_trash WHERE reason NOT IN (?, ?) "
            "AND json_extract(row_json, '$.sync_status') IS NOT 'local_only' "
            f"AND memory_id NOT IN (SELECT id FROM memories){since} GROUP BY memory_id",
            (CONFLICT, REMOTE_DELETE) if mark is None else (CONFLICT, REMOTE_DELETE, mark),
        ):
            out[memory_id] = deleted_at
    if store.has_table(TOMBSTONE_TABLE):
        for memory_id, deleted_at in all_rows(store,
            f"SELECT memory_id, deleted_at FROM {TOMBSTONE_TABLE} WHERE memory_id NOT IN (SELECT id FROM memories)"
        ):
            out[memory_id] = deleted_at
    return sorted(out.items())


def clear_queued(store: Store, ids: Sequence[str]) -> None:
    """Forget queued tombstones once the server has them (inside a write transaction)."""
    if ids and store.has_table(TOMBSTONE_TABLE):
        run_sql(store, f"DELETE FROM {TOMBSTONE_TABLE} WHERE memory_id IN {IDS_JSON}", (json.dumps(list(ids)),))


# ---------------------------------------------------------------------- conflicts
def conflicts(store: Store, limit: int | None = 50, offset: int = 0) -> conflict_log.ConflictPage:
    """Conflicts sync settled here, newest first, a page at a time with the total."""
    return conflict_log.page(store, CONFLICT, limit, offset)
