"""The store: one open ``.site.db`` file and every operation on its memories.

``open_store(path)`` runs the compatibility check and returns a :class:`Store`. Reads return
plain records; writes are ``BEGIN IMMEDIATE`` transactions that validate before SQL, follow
DESIGN's sync rule, and report a :class:`~ora_desktop.core.records.Change` to subscribers.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import timestamps
from .connection import ChangeWatch, make_database, translated
from .errors import InvalidValue, NotFound, ReadOnlyDatabase
from .graph import GraphMixin
from .listing import Cursor, ListQuery, keyset_clause, order_clause, sort_expression, where_clause
from .models import bind
from .records import Change, Facets, Memory, TaskContext, parse_json, parse_related
from .schema import MEMORY_COLUMNS, RECALL_THRESHOLD, SchemaReport, inspect, sniff_file
from .trash import TrashMixin
from .validation import check_id, clean_fields

Listener = Callable[[Change], None]
TIME_FIELDS = ("last_accessed_at", "created_at", "updated_at", "expires_at", "synced_at")
HEALTH_BUCKETS = ("0.0-0.1", "0.1-0.2", "0.2-0.3", "0.3-0.4", "0.4-0.5",
                  "0.5-0.6", "0.6-0.7", "0.7-0.8", "0.8-0.9", "0.9-1.0")
# Largest IN (...) list per statement (SQLite's default variable limit is 32766).
CHUNK = 30000


def open_store(path: str | Path, readonly: bool = False) -> Store:
    """Open an Ora memory file; raises an ``OraError`` subclass naming the file on failure."""
    return Store(Path(path), readonly=readonly)


class Store(GraphMixin, TrashMixin):
    """An open memory database. Use as a context manager, or call :meth:`close`.

    Safe to share between threads: peewee keeps one connection per thread.
    """

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = Path(path).expanduser()
        self.readonly = readonly
        sniff_file(self.path)
        self.db, self.immutable = make_database(self.path, readonly)
        self.models = bind(self.db)
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()
        self._watch = ChangeWatch(self.path)
        with translated(self.path):
            try:
                self.db.connect(reuse_if_open=True)
                self.report: SchemaReport = inspect(self.db.connection(), self.path)
            except BaseException:
                self.db.close()
                raise
        self.columns: tuple[str, ...] = self.report.memory_columns
        self._select = ", ".join(c if c in self.columns else f"NULL AS {c}" for c in MEMORY_COLUMNS)
        self._engine_tables_ready = False
        with translated(self.path):
            self._watch.reset(self.db, self.immutable)

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close this thread's connection (other threads close theirs on exit)."""
        if not self.db.is_closed():
            self.db.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.readonly else "read-write"
        return f"<Store {self.path} {mode}>"

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.report.warnings

    # ----------------------------------------------------------------- listeners
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change)`` after every write; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, change: Change) -> Change:
        if change:
            for listener in list(self._listeners):
                listener(change)
        return change

    def changed_externally(self) -> bool:
        """True when another connection wrote since the last call (cheap: data_version/stat)."""
        with translated(self.path):
            changed = self._watch.changed(self.db, self.immutable)
            if changed and self.immutable:
                self._reopen()
            return changed

    def _reopen(self) -> None:
        self.db.close()
        self.db, self.immutable = make_database(self.path, self.readonly)
        self.models = bind(self.db)
        self._watch.reset(self.db, self.immutable)

    # ----------------------------------------------------------------- low level
    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one SQL statement on this thread's connection, errors translated."""
        with translated(self.path):
            return self.db.execute_sql(sql, params)

    def write(self) -> Any:
        """A ``BEGIN IMMEDIATE`` transaction (refused on a read-only store)."""
        self._require_writable()
        return self.db.atomic("IMMEDIATE")

    def _require_writable(self) -> None:
        if self.readonly:
            raise ReadOnlyDatabase(self.path, "opened read-only; reopen it writable to change it")

    def ensure_engine_tables(self) -> None:
        """Create the plain ``ora_desktop_*`` tables; called only by writes the user asked for."""
        self._require_writable()
        if self._engine_tables_ready:
            return
        with translated(self.path):
            self.db.create_tables([self.models.trash, self.models.state], safe=True)
        self._engine_tables_ready = True

    def has_table(self, name: str) -> bool:
        row = self.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
        return row.fetchone() is not None

    def _rows(self, where: str = "1", params: Sequence[Any] = (), tail: str = "") -> list[Memory]:
        sql = f"SELECT rowid, {self._select} FROM memories WHERE {where} {tail}"
        return [row_to_memory(r) for r in self.execute(sql, params)]

    # ----------------------------------------------------------------- reads
    def get(self, memory_id: str) -> Memory:
        """The memory with this id; raises ``NotFound``."""
        rows = self._rows("id = ?", (memory_id,))
        if not rows:
            raise NotFound(f"{self.path}: no memory with id {memory_id!r}")
        return rows[0]

    def find(self, memory_id: str) -> Memory | None:
        """The memory with this id, or ``None``."""
        rows = self._rows("id = ?", (memory_id,))
        return rows[0] if rows else None

    def get_many(self, ids: Iterable[str]) -> dict[str, Memory]:
        """Memories by id (missing ids are simply absent)."""
        out: dict[str, Memory] = {}
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            for memory in self._rows(f"id IN ({','.join('?' * len(chunk))})", chunk):
                out[memory.id] = memory
        return out

    def by_rowids(self, rowids: Sequence[int]) -> list[Memory]:
        """Rows by rowid, in the order given (for views that hold a list of row keys)."""
        found: dict[int, Memory] = {}
        for start in range(0, len(rowids), CHUNK):
            chunk = list(rowids[start:start + CHUNK])
            for memory in self._rows(f"rowid IN ({','.join('?' * len(chunk))})", chunk):
                found[memory.rowid] = memory
        return [found[r] for r in rowids if r in found]

    def list(self, query: ListQuery | None = None, **filters: Any) -> list[Memory]:
        """Memories matching ``query`` (or keyword filters), sorted, one keyset page."""
        query = _query(query, filters)
        where, params = where_clause(query, self.columns)
        expr = sort_expression(query.order_by, self.columns)
        if query.after is not None:
            clause, extra = keyset_clause(expr, query.after, query.descending)
            where, params = f"{where} AND {clause}", [*params, *extra]
        tail = f"ORDER BY {order_clause(expr, query.descending)}"
        if query.limit is not None:
            tail += f" LIMIT {int(query.limit)}"
        return self._rows(where, params, tail)

    def iter_all(self, query: ListQuery | None = None, page: int = 5000, **filters: Any) -> Iterator[Memory]:
        """Every matching memory, fetched page by page by keyset."""
        query = _query(query, filters).with_(limit=page)
        while True:
            rows = self.list(query)
            yield from rows
            if len(rows) < page:
                return
            query = query.with_(after=self.cursor_for(rows[-1], query.order_by))

    def cursor_for(self, memory: Memory, order_by: str = "created_at") -> Cursor:
        """The keyset cursor just after ``memory`` in ``order_by`` order."""
        expr = sort_expression(order_by, self.columns)
        value = self.execute(f"SELECT {expr} FROM memories WHERE rowid = ?", (memory.rowid,)).fetchone()
        return Cursor(value[0] if value else None, memory.rowid or 0)

    def cursor_at(self, offset: int, query: ListQuery | None = None, **filters: Any) -> Cursor | None:
        """The cursor after the row at ``offset`` (for jumping; scans the index once)."""
        query = _query(query, filters)
        where, params = where_clause(query, self.columns)
        expr = sort_expression(query.order_by, self.columns)
        row = self.execute(
            f"SELECT {expr}, rowid FROM memories WHERE {where} "
            f"ORDER BY {order_clause(expr, query.descending)} LIMIT 1 OFFSET ?",
            [*params, int(offset)],
        ).fetchone()
        return Cursor(row[0], row[1]) if row else None

    def row_keys(self, query: ListQuery | None = None, **filters: Any) -> array:
        """Rowids of every matching memory in sort order, as a compact ``array('q')``.

        A view can hold a million of these (8 bytes each) and fetch rows lazily with
        :meth:`by_rowids`.
        """
        query = _query(query, filters)
        where, params = where_clause(query, self.columns)
        expr = sort_expression(query.order_by, self.columns)
        tail = f"ORDER BY {order_clause(expr, query.descending)}"
        if query.limit is not None:
            tail += f" LIMIT {int(query.limit)}"
        cursor = self.execute(f"SELECT rowid FROM memories WHERE {where} {tail}", params)
        keys = array("q")
        while batch := cursor.fetchmany(50000):
            keys.extend(r[0] for r in batch)
        return keys

    def count(self, query: ListQuery | None = None, **filters: Any) -> int:
        """How many memories match (superseded ones hidden unless asked)."""
        query = _query(query, filters)
        where, params = where_clause(query, self.columns)
        return self.execute(f"SELECT count(*) FROM memories WHERE {where}", params).fetchone()[0]

    def facets(self, query: ListQuery | None = None, **filters: Any) -> Facets:
        """Counts per type, sync status, importance and health bucket for matching rows."""
        query = _query(query, filters).with_(limit=None, after=None)
        where, params = where_clause(query, self.columns)

        def group(expr: str) -> dict:
            sql = f"SELECT {expr} AS k, count(*) FROM memories WHERE {where} GROUP BY k"
            return {k: n for k, n in self.execute(sql, params)}

        types = group(_col("type", self.columns))
        syncs = group(_col("sync_status", self.columns))
        importance = group(_col("importance", self.columns))
        buckets_raw = group(
            f"CASE WHEN {_col('health_score', self.columns)} IS NULL THEN -1 "
            f"ELSE min(9, max(0, CAST({_col('health_score', self.columns)} * 10 AS INTEGER))) END"
        )
        buckets = {label: buckets_raw.get(i, 0) for i, label in enumerate(HEALTH_BUCKETS)}
        if buckets_raw.get(-1):
            buckets["unknown"] = buckets_raw[-1]
        return Facets(
            total=sum(types.values()),
            types={str(k): v for k, v in types.items()},
            sync_statuses={str(k): v for k, v in syncs.items()},
            importance={k: v for k, v in importance.items()},
            health_buckets=buckets,
        )

    def recall(self, type: str, limit: int = 20) -> list[Memory]:
        """The seed's recall: that type, health above 0.3, most important then newest."""
        if type not in ("fact", "preference", "context", "task", "conversation"):
            raise InvalidValue("type", f"{type!r} is not a memory type")
        return self._rows(
            "type = ? AND health_score > ?", (type, RECALL_THRESHOLD),
            f"ORDER BY importance DESC, julianday(created_at) DESC LIMIT {int(limit)}",
        )

    def important(self, limit: int = 50) -> list[Memory]:
        """The seed's extraction query: importance >= 7, or facts with health >= 0.5."""
        return self._rows(
            "importance >= 7 OR (type = 'fact' AND health_score >= 0.5)", (),
            f"ORDER BY importance DESC, julianday(created_at) DESC, rowid LIMIT {int(limit)}",
        )

    def tasks(self) -> list[TaskContext]:
        """Rows of ``task_context`` (empty when the table is absent)."""
        if not self.report.has_task_context:
            return []
        rows = self.execute(
            "SELECT id, task_description, input_data, output_data, status, created_at, "
            "completed_at FROM task_context ORDER BY julianday(created_at) DESC"
        )
        return [
            TaskContext(
                id=r[0], task_description=r[1], input_data=parse_json(r[2]),
                output_data=parse_json(r[3]), status=r[4], created_at=timestamps.parse(r[5]),
                completed_at=timestamps.parse(r[6]), input_raw=r[2], output_raw=r[3],
            )
            for r in rows
        ]

    # ----------------------------------------------------------------- writes
    def add(self, content: str, type: str = "fact", importance: int = 5, *, id: str | None = None,
            **fields: Any) -> Memory:
        """Store a new memory (the seed's insert); returns it as stored."""
        row = self._new_row(content=content, type=type, importance=importance, id=id, **fields)
        self._require_writable()
        with self.write(), translated(self.path):
            self.models.memory.insert(row).execute()
        memory = self.get(row["id"])
        self._emit(Change(added=frozenset({memory.id}), source="add"))
        return memory

    def add_many(self, items: Iterable[Mapping[str, Any]], chunk: int = 2000) -> Change:
        """Insert many memories in one transaction (all or nothing); returns what was added."""
        self._require_writable()
        rows = [self._new_row(**item) for item in items]
        ids = [r["id"] for r in rows]
        if len(set(ids)) != len(ids):
            raise InvalidValue("id", "the batch holds the same id twice")
        columns = [c for c in MEMORY_COLUMNS if c in self.columns]
        sql = (
            f"INSERT INTO memories ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        with self.write(), translated(self.path):
            cursor = self.db.cursor()
            for start in range(0, len(rows), chunk):
                cursor.executemany(sql, ([r.get(c) for c in columns] for r in rows[start:start + chunk]))
        return self._emit(Change(added=frozenset(ids), source="add_many"))

    def _new_row(self, content: str, type: str = "fact", importance: int = 5,
                 id: str | None = None, **fields: Any) -> dict[str, Any]:
        stamp = timestamps.now_sql()
        created = fields.pop("created_at", None)
        updated = fields.pop("updated_at", None)
        row = clean_fields({"content": content, "type": type, "importance": importance, **fields})
        row["id"] = check_id(id) if id is not None else new_id()
        row["created_at"] = timestamps.coerce(created, "created_at") or stamp
        row["updated_at"] = timestamps.coerce(updated, "updated_at") or row["created_at"]
        row.setdefault("health_score", 1.0)
        row.setdefault("access_count", 0)
        row.setdefault("sync_status", "pending")
        return {k: v for k, v in row.items() if k in self.columns}

    def update(self, memory_id: str, *, expected_version: str | None = None, **fields: Any) -> Memory:
        """Edit one memory. ``updated_at`` becomes now and ``sync_status`` pending (unless
        ``local_only`` or set explicitly). With ``expected_version`` (the ``version`` of the
        record the edit started from), a row changed underneath raises ``Conflict``."""
        from .errors import Conflict

        values = clean_fields(fields)
        if not values:
            return self.get(memory_id)
        self._require_writable()
        with self.write(), translated(self.path):
            current = self.execute("SELECT updated_at FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if current is None:
                raise NotFound(f"{self.path}: no memory with id {memory_id!r}")
            if expected_version is not None and current[0] != expected_version:
                raise Conflict(
                    memory_id,
                    f"{self.path}: memory {memory_id!r} was changed by another program "
                    f"(at {current[0]}) since you opened it",
                )
            self._update_where("id = ?", [memory_id], values)
        memory = self.get(memory_id)
        self._emit(Change(changed=frozenset({memory_id}), source="update"))
        return memory

    def update_many(self, ids: Iterable[str], **fields: Any) -> Change:
        """Set the same fields on many memories, one statement per 30,000 ids."""
        values = clean_fields(fields)
        ids = list(dict.fromkeys(ids))
        self._require_writable()
        if not values or not ids:
            return Change()
        changed: set[str] = set()
        with self.write(), translated(self.path):
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start:start + CHUNK]
                marks = ",".join("?" * len(chunk))
                found = self.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk)
                changed.update(r[0] for r in found)
                self._update_where(f"id IN ({marks})", chunk, values)
        return self._emit(Change(changed=frozenset(changed), source="update_many"))

    def _update_where(self, where: str, params: Sequence[Any], values: Mapping[str, Any]) -> int:
        """One UPDATE applying DESIGN's sync rule; call inside a write transaction."""
        sets = [f"{name} = ?" for name in values if name in self.columns]
        args: list[Any] = [values[name] for name in values if name in self.columns]
        if "updated_at" in self.columns:
            sets.append("updated_at = ?")
            args.append(timestamps.now_sql())
        if "sync_status" not in values and "sync_status" in self.columns:
            sets.append("sync_status = CASE WHEN sync_status = 'local_only' THEN 'local_only' ELSE 'pending' END")
        cursor = self.execute(f"UPDATE memories SET {', '.join(sets)} WHERE {where}", [*args, *params])
        return cursor.rowcount

    def touch(self, memory_id: str) -> Memory:
        """The seed's access update: count +1, last access now, health +0.1 (capped at 1)."""
        self._require_writable()
        with self.write(), translated(self.path):
            cursor = self.execute(
                "UPDATE memories SET access_count = coalesce(access_count, 0) + 1, "
                "last_accessed_at = datetime('now'), "
                "health_score = MIN(1.0, coalesce(health_score, 0) + 0.1) WHERE id = ?",
                (memory_id,),
            )
            if cursor.rowcount == 0:
                raise NotFound(f"{self.path}: no memory with id {memory_id!r}")
        self._emit(Change(changed=frozenset({memory_id}), source="touch"))
        return self.get(memory_id)

    def touch_many(self, ids: Iterable[str]) -> Change:
        """Access update for several memories in one statement per chunk."""
        ids = list(dict.fromkeys(ids))
        self._require_writable()
        if not ids:
            return Change()
        with self.write(), translated(self.path):
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start:start + CHUNK]
                self.execute(
                    "UPDATE memories SET access_count = coalesce(access_count, 0) + 1, "
                    "last_accessed_at = datetime('now'), "
                    "health_score = MIN(1.0, coalesce(health_score, 0) + 0.1) "
                    f"WHERE id IN ({','.join('?' * len(chunk))})", chunk,
                )
        return self._emit(Change(changed=frozenset(ids), source="touch"))

    def delete(self, ids: str | Iterable[str], reason: str = "deleted") -> tuple[Memory, ...]:
        """Delete memories, first keeping their full rows in the trash (restorable).

        Returns the removed records; unknown ids are ignored.
        """
        ids = [ids] if isinstance(ids, str) else list(dict.fromkeys(ids))
        removed = self.remove_where_recoverably(
            f"id IN ({','.join('?' * len(ids))})" if ids else "0", ids, reason
        )
        return removed

    def new_memory_id(self) -> str:
        return new_id()


def new_id() -> str:
    """A fresh memory id."""
    return f"mem-{uuid.uuid4().hex}"


def row_to_memory(row: Sequence[Any]) -> Memory:
    """Build a :class:`Memory` from ``(rowid, *MEMORY_COLUMNS)``."""
    (rowid, id_, content, type_, importance, access_count, last_accessed_at, health, related,
     superseded_by, created_at, updated_at, expires_at, synced_at, sync_status) = row
    related_ids, malformed = parse_related(related)
    unparsed = tuple(
        (name, str(text))
        for name, text in zip(
            TIME_FIELDS, (last_accessed_at, created_at, updated_at, expires_at, synced_at), strict=True
        )
        if text not in (None, "") and timestamps.parse(text) is None
    )
    return Memory(
        id=str(id_),
        content=content if isinstance(content, str) else ("" if content is None else str(content)),
        type=type_,
        importance=importance,
        access_count=access_count or 0,
        last_accessed_at=timestamps.parse(last_accessed_at),
        health_score=health,
        related_to=related_ids,
        superseded_by=superseded_by or None,
        created_at=timestamps.parse(created_at),
        updated_at=timestamps.parse(updated_at),
        expires_at=timestamps.parse(expires_at),
        synced_at=timestamps.parse(synced_at),
        sync_status=sync_status,
        related_malformed=malformed,
        version=updated_at,
        unparsed=unparsed,
        rowid=rowid,
    )


def _col(name: str, available: Sequence[str]) -> str:
    return name if name in available else "NULL"


def _query(query: ListQuery | None, filters: Mapping[str, Any]) -> ListQuery:
    query = query or ListQuery()
    return query.with_(**filters) if filters else query

