"""The engine's store: one open ``.site.db`` file, its reads, writes, trash and links.

``open_store(path)`` runs the compatibility check and returns a :class:`Store`. Reads return
plain records; writes are ``BEGIN IMMEDIATE`` transactions that validate before SQL, follow the
sync rule, and report a :class:`~ora_desktop.core.records.Change` to subscribers.

This module sits below search, context and the operations (ARCHITECTURE.md, "Layers"): it
imports none of them. The ``Store`` agents get from ``ora_desktop.open_store`` is the subclass
in :mod:`ora_desktop.core.library`, which adds ``search``, ``context``, ``export`` and the other
operations as methods.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from . import engine_tables, feedreaders, timestamps
from .connection import BUSY_TIMEOUT_MS, ChangeWatch, commit_counter, file_stamp, make_database, translated
from .decoding import is_undecodable_error, tolerant_text
from .errors import InvalidValue, NotFound, OraError, ReadOnlyDatabase
from .facets import count_facets
from .feed import ChangeFeed, LogEnd
from .feedreaders import FeedLog, FeedReader
from .fingerprint import row_fingerprint
from .graph import GraphMixin
from .health_buckets import HEALTH_BUCKETS as HEALTH_BUCKETS  # re-exported: views label buckets with it
from .listing import (
    TIME_COLUMNS,
    Cursor,
    ListQuery,
    keyset_parts,
    order_clause,
    resolve_pins,
    sort_expression,
    where_clause,
)
from .models import bind
from .records import Change, Facets, Memories, Memory, TaskContext, parse_json, row_to_memory
from .schema import MEMORY_COLUMNS, RECALL_THRESHOLD, SchemaReport, inspect, sniff_file
from .trash import TrashMixin
from .writes import WritesMixin

Listener = Callable[[Change], None]
# Largest IN (...) list per statement (SQLite's default variable limit is 32766).
CHUNK = 30000
#: A type with at least this many memories is recalled along the importance index.
COMMON_TYPE = 20000


def open_store(path: str | Path, readonly: bool = False, *, timeout: float | None = None) -> Store:
    """Open an Ora memory file; raises an ``OraError`` subclass naming the file on failure.

    ``readonly=True`` writes nothing to the file or its folder. ``timeout`` is how many seconds
    to wait for another program's lock before :class:`DatabaseLocked` (default 5).
    """
    return Store(Path(path), readonly=readonly, timeout=timeout)


T = TypeVar("T")
INF = float("inf")
#: Seconds after a commit of ours within which its operation's change may still be told.
UNTOLD_S = 2.0


class Store(WritesMixin, GraphMixin, TrashMixin):
    """An open memory database. Use as a context manager, or call :meth:`close`.

    Safe to share between threads: peewee keeps one connection per thread.
    """

    def __init__(self, path: Path, readonly: bool = False, timeout: float | None = None) -> None:
        self.path = Path(path).expanduser()
        self.readonly = readonly
        self.timeout = BUSY_TIMEOUT_MS / 1000 if timeout is None else float(timeout)
        sniff_file(self.path)
        self._stamp = file_stamp(self.path)
        self._retired: list = []
        self._importance_index: bool | None = None
        shm = Path(f"{self.path}-shm")
        shm_before, wal_before = shm.exists(), Path(f"{self.path}-wal").exists()
        self.db, self.immutable = make_database(self.path, readonly, self.timeout)
        self.models = bind(self.db)
        self._listeners: list[Listener] = []
        self._local = threading.local()  # changes waiting for this thread's transaction to commit
        self._lock = threading.RLock()
        self._watch = ChangeWatch(self.path)
        #: What other programs changed, by id (read on the watcher's thread, see :meth:`external_change`).
        self.feed = ChangeFeed(self.path, self._fetch_all)
        #: Held from our BEGIN IMMEDIATE until the feed has accounted for our commit: the detector
        #: looks only while it is free, so it never reads our commit as another program's.
        self._owning = threading.Lock()
        #: thread -> when its last commit landed (inf: committing), until that commit's change
        #: is told to the listeners (see :meth:`read_as_heard`).
        self._untold: dict[int, float] = {}
        self._feed_log = FeedLog(self._detect)
        self.subscribe(self._feed_log.publish)  # our own commits, once each, for readers that want them
        # (from the file as opened: the feed's mark below is where they start)
        self._watcher = self._feed_log.reader(look=False)  # external_change's cursor
        self._looker = self._feed_log.reader(look=False)  # changed_externally's cursor
        with translated(self.path):
            try:
                self.db.connect(reuse_if_open=True)
                self.report: SchemaReport = inspect(self.db.connection(), self.path)
            except BaseException:
                self.db.close_all()
                raise
        unfinished = engine_tables.unfinished_step(self.db.connection())
        if unfinished is not None:  # (a step in chunks: operations/chunked_undo.py)
            self.report = replace(self.report, warnings=(*self.report.warnings, (
                f"“{unfinished.get('verb')} {unfinished.get('label')}” was written in chunks and has not "
                "finished (running in another process, or its process ended): the next undo, redo or "
                "restore of this file takes back what it wrote")))
        if self.immutable:  # an immutable connection reports "delete"; the header says WAL
            self.report = replace(self.report, journal_mode="wal")
        elif readonly and wal_before and not shm_before and shm.exists():
            # A -wal left without its -shm (a writer that crashed): SQLite must build the index
            # of the WAL in a -shm file to read its commits. Say so rather than hide it.
            self.report = replace(self.report, warnings=(
                *self.report.warnings,
                f"{shm.name} was created to read the -wal file another program left behind",
            ))
        self.columns: tuple[str, ...] = self.report.memory_columns
        self._select = ", ".join(c if c in self.columns else f"NULL AS {c}" for c in MEMORY_COLUMNS)
        self._template: tuple[list[Any], dict[str, int]] | None = None  # see WritesMixin._insert_template
        self._engine_tables_ready = False
        self._engine_checked = False  # the engine tables' version, checked (and migrated) at the first write
        with translated(self.path):
            if not self.immutable:
                self.feed.mark()  # before the counter: a commit in between is heard, not lost
            self._watch.reset(self.db, self.immutable)
        self._watch_immutable = self.immutable
        feedreaders.register(self.path, self._feed_log)

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections of every thread that used this store."""
        feedreaders.unregister(self.path, self._feed_log)
        for db in [*self._retired, self.db]:
            db.close_all()
        self._retired.clear()

    def __repr__(self) -> str:
        mode = "read-only" if self.readonly else "read-write"
        return f"<Store {self.path} {mode}>"

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the compatibility check found worth saying (never fatal)."""
        return self.report.warnings

    # ----------------------------------------------------------------- listeners
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change)`` after every write; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, change: Change) -> Change:
        """Tell listeners; inside an enclosing :meth:`write` wait until it commits (and forget
        the change if it rolls back), so views never hear of a change that did not happen."""
        if change:
            initiator = feedreaders.initiator()
            if initiator is not None and change.initiator is not initiator:
                change = change.but(initiator=initiator)
            if self.db.in_transaction():
                self._pending().append(change)
            else:
                for listener in list(self._listeners):
                    listener(change)
                self._untold.pop(threading.get_ident(), None)
        return change

    def _pending(self) -> list[Change]:
        pending = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = []
        return pending

    def feed_reader(self) -> FeedReader:
        """A new consumer of this file's change feed, with its own cursor (:mod:`.feedreaders`):
        it hears every other program's commit from now on, whoever else reads the feed."""
        return self._feed_log.reader()

    def external_change(self) -> Change | None:
        """What other connections committed since the last call: a ``Change`` naming the ids
        (initiator external; :mod:`.feed`), ``Change.reload()`` when which rows is not known,
        ``None`` when nothing changed. Cheap when nothing did (the commit counter). The window's
        watcher's reader of the feed; other consumers take their own :meth:`feed_reader`."""
        return self._watcher.poll()

    def changed_externally(self) -> bool:
        """True when another connection committed since the last call (any table); a reader of
        the feed of its own, so it never takes :meth:`external_change`'s changes."""
        return self._looker.moved()

    def _detect(self) -> tuple[bool | None, Change | None]:
        """The feed's one detector (run by whichever reader looks first): whether someone else
        committed since the last look (None: not now, our commit is being accounted for), and
        which memories changed (see :meth:`external_change`)."""
        with translated(self.path):
            self._follow_file()
            if self.immutable != self._watch_immutable:  # reopened as another kind: the file moved
                self._watch.reset(self.db, self.immutable)
                self._watch_immutable = self.immutable
                return True, Change.reload()
            if self.immutable:
                return (True, Change.reload()) if self._watch.changed(self.db, True) else (False, None)
            if not self._owning.acquire(blocking=False):
                return None, None  # our commit is being accounted for: look at the next tick
            try:
                first = not self.feed.started
                if first:
                    self.feed.start()  # before the counter is read: nothing lands between unseen
                before = self._watch.counter
                if not self._watch.changed(self.db, False):
                    return False, None
                if first:
                    return True, Change.reload()
                return True, self._whose(before, self._watch.counter, self.feed.poll())
            finally:
                self._owning.release()

    def _whose(self, after: int | None, upto: int | None, change: Change | None) -> Change | None:
        """Others' commits after counter ``after`` up to ``upto`` as the feed read them, or as
        their operations said them when another store of this process made them (a job, a sync,
        an import)."""
        ours = feedreaders.claimed(self.path, after, upto, self)
        return change if ours is None else feedreaders.heard_as(ours, change)

    def _own_commit_heard(self, end: LogEnd | None) -> None:
        """After our COMMIT: others' commits before ours go to the feed's log as theirs (before
        our own change is published), and the feed steps past ours (:meth:`ChangeFeed.own_commit`)."""
        commit = self._watch.own_commit_ended(self.db.connection())
        if commit is None:
            return
        followed, theirs = self.feed.own_commit(end, commit.ours)
        if not followed:
            return  # the next look starts the feed again, and reloads if anyone else committed
        if theirs is not None or commit.seen != commit.begun:
            self._feed_log.heard(self._whose(commit.seen, commit.begun, theirs))
        self._watch.accounted(commit)

    def _follow_file(self) -> None:
        """An immutable connection cannot see other writers: reopen it when the file moved."""
        if self.immutable and file_stamp(self.path) != self._stamp:
            with self._lock:
                if file_stamp(self.path) == self._stamp:
                    return
                # The replaced connections may still be stepping a cursor (here or in another
                # thread): they are closed one reopen later, or by close(), never under a reader.
                for stale in self._retired:
                    stale.close_all()
                self._retired = [self.db]
                self._stamp = file_stamp(self.path)
                self.db, self.immutable = make_database(self.path, self.readonly, self.timeout)
                self.models = bind(self.db)

    # ----------------------------------------------------------------- low level
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one SQL statement on this thread's connection, errors translated."""
        if self.immutable:
            self._follow_file()
        with translated(self.path):
            return self.db.execute_sql(sql, params)

    def _fetch_all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Every row of one SQL statement, errors (also those met while stepping) translated."""
        return self._read(sql, params, list)

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple | None:
        """The first row of a read (see :meth:`_read`), or ``None``."""
        return self._read(sql, params, lambda cursor: cursor.fetchone())

    def _read(self, sql: str, params: Sequence[Any], build: Callable[[sqlite3.Cursor], Any]) -> Any:
        """Run a read and ``build`` its result from the cursor. An immutable connection cannot
        see another writer: if the file moved while the read ran, its result may mix old and
        new pages, so the read runs again on a fresh connection (at most three times). A read that
        met text whose bytes are not UTF-8 runs again decoding it tolerantly (:mod:`.decoding`)."""
        try:
            return self._read_once(sql, params, build)
        except OraError as exc:
            if not is_undecodable_error(exc):
                raise
        with tolerant_text(self.db.connection()):
            return self._read_once(sql, params, build)

    def _read_once(self, sql: str, params: Sequence[Any], build: Callable[[sqlite3.Cursor], Any]) -> Any:
        for attempt in range(3):
            cursor = self._execute(sql, params)
            try:
                with translated(self.path):
                    result = build(cursor)
            except OraError:
                if not self.immutable or file_stamp(self.path) == self._stamp or attempt == 2:
                    raise
                continue
            if not self.immutable or file_stamp(self.path) == self._stamp:
                return result
        return result

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """A ``BEGIN IMMEDIATE`` transaction (refused on a read-only store); a savepoint when
        nested. Errors, including a lock that outlasts the timeout at BEGIN or COMMIT, come
        out as ``OraError``s naming the file."""
        self._require_writable()
        outermost = not self.db.in_transaction()
        claimed: int | None = None
        owning = telling = False
        end: LogEnd | None = None
        change: Change | None = None
        try:
            with translated(self.path), self.db.atomic("IMMEDIATE"):
                if outermost:
                    self._owning.acquire()
                    owning = True
                    self._watch.own_commit_begins(self.db.connection())
                    end = self.feed.log_end()  # we hold the write lock: others' commits end here
                    if not self._engine_checked:
                        engine_tables.prepare(self.db.connection(), self.path)
                yield
                if outermost:  # our other stores of the file hear this commit as what it is
                    self._untold[threading.get_ident()] = INF
                    telling = True
                    claimed = self._watch.our_commit_will_be(self.db.connection())
                    if claimed is not None:
                        feedreaders.claim(self.path, claimed, self, self._one_change(
                            list(self._pending()), getattr(self._local, "announced", None)))
        except BaseException:
            if outermost:
                if telling:
                    self._untold.pop(threading.get_ident(), None)
                if owning:
                    self._owning.release()
                self._pending().clear()
                self._local.announced = None
                if claimed is not None:
                    feedreaders.unclaim(self.path, claimed, self)
            raise
        if outermost:
            self._engine_checked = True
            try:
                try:
                    self._own_commit_heard(end)
                finally:
                    self._owning.release()
                pending, self._local.pending = self._pending(), []
                announced, self._local.announced = getattr(self._local, "announced", None), None
                change = self._one_change(pending, announced)
                if change is not None:
                    self._emit(change)
            finally:
                if telling:  # a change the caller emits after the write is still to be told
                    if change is None:
                        self._untold[threading.get_ident()] = time.monotonic()
                    else:
                        self._untold.pop(threading.get_ident(), None)

    def _telling(self) -> bool:
        """Whether a commit of ours may still be on its way to the listeners: being made, or made
        in the last :data:`UNTOLD_S` seconds by a thread that has emitted nothing since (its
        operation emits after the write; one that never emits told nothing to be double-counted)."""
        now = time.monotonic()
        return any(now - at < UNTOLD_S for at in list(self._untold.values()))

    def read_as_heard(self, read: Callable[[Store], T]) -> tuple[Change | None, T | None]:
        """Look for others' commits (what :meth:`external_change` answers, taking them from it),
        then ``read(self)`` in one read transaction. The read is returned only when its snapshot
        is the file exactly as the changes told so far leave it: no other program's commit
        landed between the look and the snapshot, and no commit of ours is still on its way to
        the listeners (commits during the read are after its snapshot, and told after it).
        Otherwise it is None: ask again later. A count moved by the ids of each change told
        after it then stays exact (the window's sidebar). Run it on the watcher's thread, in
        place of a look; :meth:`AppContext.read_as_heard
        <ora_desktop.gui.context.AppContext.read_as_heard>` also checks that no change of the
        file reached the views while it ran."""
        if self.immutable:
            return self.external_change(), None
        telling = self._telling()
        looked, change = self._watcher.looked()
        heard = self._watch.counter
        try:
            with translated(self.path), self.db.atomic("DEFERRED"):  # a read: no write lock
                self.db.execute_sql("SELECT count(*) FROM sqlite_schema").fetchone()  # the snapshot is taken
                snapshot = commit_counter(self.path)  # (a commit just after it makes this larger: no harm)
                result = read(self)
        except OraError:  # the change looked for is still told; the caller reads its usual way
            return change, None
        exact = looked and not telling and not self._telling() and heard is not None and snapshot == heard
        return change, result if exact else None

    def announce(self, change: Change) -> Change:
        """Inside a :meth:`write`: ``change`` is what this transaction does, as the operation
        running it names it (ids, kind, initiator). Listeners hear it once, at the commit, in
        place of the changes the store's own mutators noted; outside a write it is emitted."""
        if not self.db.in_transaction():
            return self._emit(change)
        self._local.announced = change
        return change

    @staticmethod
    def _one_change(pending: list[Change], announced: Change | None) -> Change | None:
        """The one ``Change`` a commit is heard as: the operation's own, or the mutators' together."""
        noted = feedreaders.compose(pending)
        if announced is None or not announced:
            return noted
        if announced.columns is None and noted is not None and noted.ids == announced.ids:
            return announced.but(columns=noted.columns)  # which columns an edit wrote: views repaint less
        return announced

    def _require_writable(self) -> None:
        if self.readonly:
            raise ReadOnlyDatabase(self.path, "opened read-only; reopen it writable to change it")

    def ensure_engine_tables(self) -> None:
        """Create the plain ``ora_desktop_*`` tables; called only by writes the user asked for.

        Inside a :meth:`write` transaction the tables roll back with it when the write fails.
        """
        self._require_writable()
        if self._engine_tables_ready:
            return
        with self.write(), translated(self.path):
            engine_tables.create(self.db.connection(),
                                 (engine_tables.TRASH, engine_tables.STATE, engine_tables.TRASH_LINKS), self.path)
        self._engine_tables_ready = not self.db.in_transaction()

    def create_engine_tables(self, *names: str) -> None:
        """Create other ``ora_desktop_*`` tables (:mod:`.engine_tables` names), inside a write."""
        self._require_writable()
        with self.write(), translated(self.path):
            engine_tables.create(self.db.connection(), names, self.path)

    def has_table(self, name: str) -> bool:
        """Whether the file holds a table of that name."""
        row = self._execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
        return row.fetchone() is not None

    def _rows(self, where: str = "1", params: Sequence[Any] = (), tail: str = "") -> list[Memory]:
        sql = f"SELECT rowid, {self._select} FROM memories WHERE {where} {tail}"
        return self._read(sql, params, lambda cursor: [row_to_memory(r) for r in cursor])

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

    def versions(self, ids: Iterable[str]) -> dict[str, str | None]:
        """The current ``version`` of each memory (``None``: not in the file), one statement;
        inside a :meth:`write` it is the version the transaction sees (and will overwrite)."""
        ids = list(dict.fromkeys(ids))
        out: dict[str, str | None] = dict.fromkeys(ids)
        if ids:
            at = MEMORY_COLUMNS.index("id")
            sql = f"SELECT {self._select} FROM memories WHERE id IN (SELECT value FROM json_each(?))"
            for row in self._read(sql, [json.dumps(ids)], list):
                out[row[at]] = row_fingerprint(row)
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
        query = _query(self, query, filters)
        where, params = where_clause(query, self.columns)
        expr = sort_expression(query.order_by, self.columns)
        order = f"ORDER BY {order_clause(expr, query.descending)}"
        if query.after is None:
            limit = "" if query.limit is None else f" LIMIT {int(query.limit)}"
            return self._rows(where, params, order + limit)
        rows: list[Memory] = []
        for clause, extra in keyset_parts(expr, query.after, query.descending):
            wanted = None if query.limit is None else int(query.limit) - len(rows)
            if wanted is not None and wanted <= 0:
                break
            limit = "" if wanted is None else f" LIMIT {wanted}"
            rows += self._rows(f"{where} AND {clause}", [*params, *extra], order + limit)
        return rows

    def iter_all(self, query: ListQuery | None = None, page: int = 5000, **filters: Any) -> Iterator[Memory]:
        """Every matching memory in order, without holding a read transaction open.

        The matching row keys are taken once (one sorted scan); rows are then fetched page
        by page, so another program can write meanwhile: rows present throughout are seen
        exactly once, rows deleted meanwhile are skipped, rows added meanwhile are not seen.
        """
        query = _query(self, query, filters).with_(limit=None, after=None)
        keys = self.row_keys(query)
        where, params = where_clause(query, self.columns)
        for start in range(0, len(keys), page):
            chunk = keys[start:start + page].tolist()
            found = {
                m.rowid: m
                for m in self._rows(f"rowid IN (SELECT value FROM json_each(?)) AND {where}",
                                    [json.dumps(chunk), *params])
            }
            yield from (found[k] for k in chunk if k in found)

    def cursor_for(self, memory: Memory, order_by: str = "created_at") -> Cursor:
        """The keyset cursor just after ``memory`` in ``order_by`` order."""
        expr = sort_expression(order_by, self.columns)
        value = self._one(f"SELECT {expr} FROM memories WHERE rowid = ? AND id = ?", (memory.rowid, memory.id))
        if value is None:  # gone (or renumbered) since it was read: derive the key from the record
            raw = memory.updated_at_text if order_by == "updated_at" else getattr(memory, order_by, None)
            if order_by in TIME_COLUMNS and raw is not None:
                raw = timestamps.to_sql(raw) if not isinstance(raw, str) else raw
                raw = self._execute("SELECT julianday(?)", (raw,)).fetchone()[0]
            value = (None if isinstance(raw, tuple) else raw,)
        return Cursor(value[0], memory.rowid or 0)

    def cursor_at(self, offset: int, query: ListQuery | None = None, **filters: Any) -> Cursor | None:
        """The cursor after the row at ``offset`` (for jumping; scans the index once)."""
        query = _query(self, query, filters)
        where, params = where_clause(query, self.columns)
        expr = sort_expression(query.order_by, self.columns)
        row = self._one(
            f"SELECT {expr}, rowid FROM memories WHERE {where} "
            f"ORDER BY {order_clause(expr, query.descending)} LIMIT 1 OFFSET ?",
            [*params, int(offset)],
        )
        return Cursor(row[0], row[1]) if row else None

    def row_keys(self, query: ListQuery | None = None, **filters: Any) -> array:
        """Rowids of every matching memory in sort order, as a compact ``array('q')``.

        A view can hold a million of these (8 bytes each) and fetch rows lazily with
        :meth:`by_rowids`.
        """
        query = _query(self, query, filters)
        where, params = where_clause(query, self.columns)
        expr = sort_expression(query.order_by, self.columns)
        tail = f"ORDER BY {order_clause(expr, query.descending)}"
        if query.limit is not None:
            tail += f" LIMIT {int(query.limit)}"
        # One step of SQLite (run without the GIL) joins every rowid in order as 16 hex digits
        # into one string, instead of a million steps each taking the GIL back from the GUI
        # thread; Python then decodes it in C, a slice at a time (_parse_keys). SQLite keeps an
        # ordered subquery's order through group_concat (it never flattens one into an aggregate).
        sql = (f"SELECT group_concat(printf('%016x', rowid), '') "
               f"FROM (SELECT rowid FROM memories WHERE {where} {tail})")
        return self._read(sql, params, lambda cursor: _parse_keys(cursor.fetchone()[0]))

    def count(self, query: ListQuery | None = None, **filters: Any) -> int:
        """How many memories match (superseded ones hidden unless asked)."""
        query = _query(self, query, filters)
        where, params = where_clause(query, self.columns)
        # Without a WHERE clause SQLite counts from its smallest b-tree, far faster than "WHERE 1".
        where_sql = "" if where == "1" else f" WHERE {where}"
        return self._one(f"SELECT count(*) FROM memories{where_sql}", params)[0]

    def facets(self, query: ListQuery | None = None, **filters: Any) -> Facets:
        """Counts per type, sync status, importance and health bucket for matching rows."""
        return count_facets(self, _query(self, query, filters))

    def recall(self, type: str, limit: int = 20, *, current: bool = True) -> list[Memory]:
        """The seed's recall: that type, health above 0.3, most important then newest.

        ``current`` (the default) leaves out superseded and expired memories, so an agent does
        not recall what it corrected; ``current=False`` is the seed's query as written."""
        if type not in ("fact", "preference", "context", "task", "conversation"):
            raise InvalidValue("type", f"{type!r} is not a memory type")
        # rowid breaks ties (same importance, same second) so the order is the same every time.
        order = f"ORDER BY importance DESC, julianday(created_at) DESC, rowid DESC LIMIT {int(limit)}"
        where, params = "type = ? AND health_score > ?", (type, RECALL_THRESHOLD)
        if current:
            live, extra = where_clause(ListQuery(superseded="hide", expired=False), self.columns)
            where, params = f"{where} AND {live}", (*params, *extra)
        if self._walk_importance(type):
            # Read the importance index from the top and sort only within the first levels that
            # fill the limit, instead of sorting every memory of the type by time.
            sql = f"SELECT rowid, {self._select} FROM memories INDEXED BY idx_memories_importance WHERE {where} {order}"
            return self._read(sql, params, lambda cursor: [row_to_memory(r) for r in cursor])
        return self._rows(where, params, order)

    def _walk_importance(self, type: str) -> bool:
        """True when recall of ``type`` is best read along the importance index: the index is
        there and the type is common (a rare type is quicker found through the type index)."""
        if self._importance_index is None:
            self._importance_index = self._one(
                "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'idx_memories_importance' "
                "AND tbl_name = 'memories'") is not None
        if not self._importance_index:
            return False
        seen = self._one("SELECT count(*) FROM (SELECT 1 FROM memories WHERE type = ? LIMIT ?)",
                         (type, COMMON_TYPE))
        return bool(seen and seen[0] >= COMMON_TYPE)

    def important(self, limit: int = 50, superseded: str | None = None, *, current: bool = True) -> Memories:
        """The seed's extraction query: importance >= 7, or facts with health >= 0.5; most
        important first and, among equals, the most recently added (highest rowid) first.

        That order is the seed's importance index read backwards, so, like the seed's query,
        it stops after ``limit`` rows instead of sorting every important memory by time.
        ``current`` (the default) leaves out superseded and expired memories before the limit
        (what an agent must get: never what it corrected); ``current=False`` is the seed's
        query as written. ``superseded`` (``"show"``, ``"hide"``, ``"only"``) overrides the
        superseded half of that choice. This is the one home of the rule: the context, the
        CLI, MCP and promote all call it. The answer is a sequence whose records are built as
        they are read (:class:`Memories`).
        """
        wanted = ListQuery(superseded=superseded or ("hide" if current else "show"),
                           expired=False if current else None)
        live, params = where_clause(wanted, self.columns)
        sql = (f"SELECT rowid, {self._select} FROM memories WHERE "
               f"(importance >= 7 OR (type = 'fact' AND health_score >= 0.5)) AND {live} "
               f"ORDER BY importance DESC, rowid DESC LIMIT {int(limit)}")
        return self._read(sql, params, lambda cursor: Memories(cursor.fetchall()))

    def tasks(self) -> list[TaskContext]:
        """Rows of ``task_context`` (empty when the table is absent)."""
        if not self.report.has_task_context:
            return []
        rows = self._fetch_all(
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


def _query(store: Store, query: ListQuery | None, filters: Mapping[str, Any]) -> ListQuery:
    """The query asked, for this file: ``is:pinned`` where nobody pinned anything is resolved."""
    query = query or ListQuery()
    query = query.with_(**filters) if filters else query
    parsed = query.filters
    if parsed is not None and parsed.pinned is not None:
        query = query.with_(filters=resolve_pins(parsed, store.has_table(engine_tables.PINS)))
    return query


KEY_SLICE = 65536  # keys decoded at a time by _parse_keys: about a millisecond of held GIL


def _parse_keys(joined: str | None) -> array:
    """``array('q')`` of rowids written as 16 hex digits each (two's complement, big-endian),
    decoded a slice at a time, yielding the GIL between slices."""
    keys = array("q")
    if not joined:
        return keys
    step = 16 * KEY_SLICE
    for pos in range(0, len(joined), step):
        keys.frombytes(bytes.fromhex(joined[pos:pos + step]))
        time.sleep(0)
    if sys.byteorder == "little":
        keys.byteswap()
    return keys
