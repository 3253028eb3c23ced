"""The file's side of sync: its state table, what to push, applying a pull, conflicts.

The state lives in a plain ``ora_desktop_sync`` table (ARCHITECTURE.md, contract 2), one row per server
(keyed by the server's id, so pointing a file at another server starts afresh). Memories purged
for good can queue an id-only tombstone in ``ora_desktop_sync_tombstones`` (see
:func:`queue_tombstones`); ordinary deletes are found in the trash.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .. import timestamps
from ..rawsql import all_rows, run_sql
from ..records import DeletedMemory, row_to_memory
from ..schema import MEMORY_COLUMNS
from ..writes import IDS_JSON
from .redact import SyncError
from .server import COLUMNS, ServerRow

if TYPE_CHECKING:
    from ..store import Store

STATE_TABLE = "ora_desktop_sync"
TOMBSTONE_TABLE = "ora_desktop_sync_tombstones"
CONFLICT = "sync conflict"  # trash reason of a losing version
REMOTE_DELETE = "sync delete"  # trash reason of a memory deleted on another machine
NEEDED = ("id", "content", "updated_at", "synced_at", "sync_status")
TABLES_SQL = (
    f"CREATE TABLE IF NOT EXISTS {STATE_TABLE} (server_id TEXT PRIMARY KEY, server TEXT NOT NULL, "
    "site TEXT NOT NULL, agent TEXT NOT NULL, last_pull INTEGER NOT NULL DEFAULT 0, tomb_mark TEXT, "
    "last_sync TEXT, pushed INTEGER NOT NULL DEFAULT 0, pulled INTEGER NOT NULL DEFAULT 0, "
    "conflicts INTEGER NOT NULL DEFAULT 0)",
    f"CREATE TABLE IF NOT EXISTS {TOMBSTONE_TABLE} (memory_id TEXT PRIMARY KEY, deleted_at TEXT NOT NULL)",
)
_OLDEST = datetime.min.replace(tzinfo=UTC)


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


@dataclass(frozen=True, slots=True)
class Decision:
    """How a pulled row was settled against the file (one per conflict reported)."""

    memory_id: str
    winner: str  # "this file" or "server"
    local_updated_at: str | None
    server_updated_at: str | None
    server_deleted: bool = False


def require_columns(store: Store) -> None:
    """Refuse a file whose ``memories`` lacks a column sync relies on (nothing is changed)."""
    missing = [c for c in NEEDED if c not in store.columns]
    if missing:
        raise SyncError(f"{store.path}: cannot sync: the memories table has no {', '.join(missing)} column")


def ensure_tables(store: Store) -> None:
    """Create the sync tables (call inside the sync's first write transaction)."""
    store.ensure_engine_tables()
    for sql in TABLES_SQL:
        run_sql(store, sql)


def states(store: Store) -> list[SyncState]:
    """Every server this file has synced with, most recent sync first (never creates a table)."""
    if not store.has_table(STATE_TABLE):
        return []
    rows = all_rows(store,
        f"SELECT server_id, server, site, agent, last_pull, tomb_mark, last_sync, pushed, pulled, conflicts "
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
        "pushed, pulled, conflicts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (state.server_id, state.server, state.site, state.agent, state.last_pull, state.tomb_mark, last,
         state.pushed, state.pulled, state.conflicts),
    )


def _select(store: Store) -> str:
    return ", ".join(c if c in store.columns else f"NULL AS {c}" for c in COLUMNS)


PENDING = "(sync_status = 'pending' OR sync_status IS NULL)"


def pending_count(store: Store) -> int:
    """How many memories wait to be pushed (``local_only`` never counts)."""
    if "sync_status" not in store.columns:
        return 0
    return all_rows(store, f"SELECT count(*) FROM memories WHERE {PENDING}")[0][0]


def pending_rows(store: Store, after_rowid: int, limit: int) -> list[tuple[int, tuple[Any, ...]]]:
    """A page of ``(rowid, values in COLUMNS order)`` of memories waiting to be pushed."""
    rows = all_rows(store,
        f"SELECT rowid, {_select(store)} FROM memories WHERE {PENDING} AND rowid > ? ORDER BY rowid LIMIT ?",
        (after_rowid, limit),
    )
    return [(r[0], tuple(r[1:])) for r in rows]


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


# ---------------------------------------------------------------------- pull
def _time(text: str | None) -> datetime:
    return (timestamps.parse(text) if text else None) or _OLDEST


def _newer(server: tuple[Any, ...], local: tuple[Any, ...]) -> bool:
    """Whether the server version wins: newer ``updated_at``; a tie goes to the larger canonical
    JSON of the versions, so every machine settles the same pair the same way."""
    at = COLUMNS.index("updated_at")
    s_time, l_time = _time(server[at]), _time(local[at])
    if s_time != l_time:
        return s_time > l_time
    return json.dumps(server, default=str) > json.dumps(local, default=str)


def apply_pull(store: Store, page: Sequence[ServerRow], mark: str | None, stamp: str
               ) -> tuple[set[str], set[str], set[str], list[Decision]]:
    """Apply a page of server rows (inside a write transaction).

    Returns (added ids, changed ids, removed ids, conflicts). A row changed here since the last
    sync (``pending``) is a conflict: the newer version wins and the other is kept in the trash
    with reason "sync conflict". ``local_only`` memories are never touched.
    """
    ids = [row.id for row in page]
    local = {r[0]: (r[1], tuple(r[2:])) for r in all_rows(store,
        f"SELECT id, sync_status, {_select(store)} FROM memories WHERE id IN {IDS_JSON}", (json.dumps(ids),))}
    deleted_here = _deleted_since(store, ids, mark)
    write: list[ServerRow] = []
    to_trash_local: list[str] = []
    server_losers: list[ServerRow] = []
    remove: list[str] = []
    remove_conflict: list[str] = []
    mark_synced: list[str] = []
    decisions: list[Decision] = []
    added: set[str] = set()
    for row in page:
        status, values = local.get(row.id, (None, None))
        if values is None:
            if row.deleted:
                continue
            gone = deleted_here.get(row.id)
            if gone is not None and _time(gone) >= _time(row.updated_at):
                continue  # deleted here after the server's edit: our tombstone goes up next
            write.append(row)
            added.add(row.id)
            continue
        if status == "local_only":
            continue
        pending = status != "synced"
        if row.deleted:
            if not pending:
                remove.append(row.id)
            elif _newer(row.values, values):
                remove_conflict.append(row.id)
                decisions.append(Decision(row.id, "server", values[COLUMNS.index("updated_at")], row.updated_at, True))
            else:
                decisions.append(Decision(row.id, "this file", values[COLUMNS.index("updated_at")], row.updated_at,
                                          True))
            continue
        if not pending:
            write.append(row)
        elif row.values == values:
            mark_synced.append(row.id)  # our own push came back (a sync stopped before marking)
        elif _newer(row.values, values):
            to_trash_local.append(row.id)
            write.append(row)
            decisions.append(Decision(row.id, "server", values[COLUMNS.index("updated_at")], row.updated_at))
        else:
            server_losers.append(row)
            decisions.append(Decision(row.id, "this file", values[COLUMNS.index("updated_at")], row.updated_at))
    batch = uuid.uuid4().hex[:12]
    if to_trash_local or server_losers:
        store.ensure_engine_tables()
    if to_trash_local:
        pairs = ", ".join(f"'{c}', \"{c}\"" for c in store.columns)
        run_sql(store,
            "INSERT INTO ora_desktop_trash (memory_id, deleted_at, reason, batch, row_json) "
            f"SELECT id, ?, ?, ?, json_object({pairs}) FROM memories WHERE id IN {IDS_JSON}",
            (stamp, CONFLICT, batch, json.dumps(to_trash_local)),
        )
    if server_losers:
        store.db.cursor().executemany(
            "INSERT INTO ora_desktop_trash (memory_id, deleted_at, reason, batch, row_json) VALUES (?, ?, ?, ?, ?)",
            [(r.id, stamp, CONFLICT, batch, _row_json(r, stamp)) for r in server_losers],
        )
    if write:
        _upsert(store, write, stamp)
    if mark_synced:
        run_sql(store, f"UPDATE memories SET sync_status = 'synced', synced_at = ? WHERE id IN {IDS_JSON}",
                      (stamp, json.dumps(mark_synced)))
    for ids_, reason in ((remove, REMOTE_DELETE), (remove_conflict, CONFLICT)):
        if ids_:
            store.remove_where_recoverably(f"id IN {IDS_JSON}", [json.dumps(ids_)], reason, return_records=False)
    changed = {r.id for r in write} - added | set(mark_synced)
    return added, changed, set(remove) | set(remove_conflict), decisions


def _row_json(row: ServerRow, stamp: str) -> str:
    data = dict(zip(COLUMNS, row.values, strict=True))
    data.update(synced_at=stamp, sync_status="synced")
    return json.dumps(data)


def _upsert(store: Store, rows: Sequence[ServerRow], stamp: str) -> None:
    present = [c for c in COLUMNS if c in store.columns]
    at = [COLUMNS.index(c) for c in present]
    names = [*present, "synced_at", "sync_status"]
    sets = ", ".join(f"{c} = excluded.{c}" for c in names if c != "id")
    sql = (f"INSERT INTO memories ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
           f"ON CONFLICT(id) DO UPDATE SET {sets}")
    store.db.cursor().executemany(sql, [[r.values[i] for i in at] + [stamp, "synced"] for r in rows])


def _deleted_since(store: Store, ids: Sequence[str], mark: str | None) -> dict[str, str]:
    """Of ``ids``, those deleted here since ``mark`` (trash or queued tombstones) -> when."""
    found: dict[str, str] = {}
    if store.has_table("ora_desktop_trash"):
        since = "" if mark is None else " AND julianday(deleted_at) >= julianday(?)"
        params: list[Any] = [json.dumps(list(ids)), CONFLICT, REMOTE_DELETE] + ([] if mark is None else [mark])
        for memory_id, when in all_rows(store,
            f"SELECT memory_id, max(deleted_at) FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON} "
            f"AND reason NOT IN (?, ?){since} GROUP BY memory_id", params,
        ):
            found[memory_id] = when
    if store.has_table(TOMBSTONE_TABLE):
        for memory_id, when in all_rows(store,
            f"SELECT memory_id, deleted_at FROM {TOMBSTONE_TABLE} WHERE memory_id IN {IDS_JSON}",
            (json.dumps(list(ids)),),
        ):
            found[memory_id] = when
    return found


# ---------------------------------------------------------------------- conflicts
def conflicts(store: Store, limit: int | None = 500) -> list[DeletedMemory]:
    """Losing versions kept by sync, newest first (restorable like any trash row)."""
    if not store.has_table("ora_desktop_trash"):
        return []
    tail = f" LIMIT {int(limit)}" if limit else ""
    rows = all_rows(store,
        "SELECT id, deleted_at, reason, batch, row_json FROM ora_desktop_trash WHERE reason = ? "
        f"ORDER BY id DESC{tail}", (CONFLICT,),
    )
    out = []
    for trash_id, deleted_at, reason, batch, text in rows:
        data = json.loads(text)
        memory = row_to_memory([None, *(data.get(c) for c in MEMORY_COLUMNS)])
        out.append(DeletedMemory(trash_id, memory, timestamps.parse(deleted_at), reason, batch))
    return out
