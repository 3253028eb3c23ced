"""The sidecar full-text index of one memory file (ARCHITECTURE.md, contract 3).

The sidecar ``<cache>/search/<file_key>.fts.db`` holds:

* ``docs(fid, mid, ver, srow)`` — one row per memory: ``mid`` is the memory ``id`` (the key),
  ``ver`` its ``updated_at`` text when indexed, ``srow`` its rowid then (a *hint* used to find
  new and deleted rows cheaply, never an identity: ``VACUUM`` renumbers rowids);
* ``fts`` — a self-contained FTS5 table (``porter unicode61``) whose rowid is ``docs.fid``;
* ``tags(fid, kind, value)`` — tags extracted at index time;
* ``meta`` — index version, the database's identity (path, device, inode), the rowid and
  ``updated_at`` high-water marks, sample (rowid, id) pairs, and the file stats last seen.

The agent's file is only read: it is attached ``mode=ro`` (``immutable`` when it is a WAL file
with no ``-wal``, exactly as read-only stores open it) to a connection of our own.

Bringing the index up to date (:meth:`SearchIndex.refresh`):

1. nothing to do when the file's (mtime, size) and its ``-wal``'s are those last seen;
2. a different inode (the file was replaced, e.g. restored) or a sample row found at another
   rowid (``VACUUM`` renumbered) → full reconcile by id;
3. otherwise the rows on the table-leaf pages the write-ahead log gained since the index's
   cursor (:mod:`..wallog`, read before the table) and the rows past the high-water rowid have
   their text compared with the indexed text — only rows added or changed are re-indexed; when
   the log cannot vouch, the memories a store's change feed named here, else every memory's
   text (one join, :func:`.refresh._text_differs`);
4. ``count(*)`` compared with ``docs``: a difference means deletions, found per 1,024-rowid
   bucket whose counts differ; if the counts still differ, full reconcile.

A missing or unreadable sidecar, another index version, or another database at the same
path → rebuild. A build writes a temporary file and renames it when complete, so a cancelled
or crashed build leaves no partial index.
"""

from __future__ import annotations

import atexit
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import filelock

from .. import feedreaders, paths, timestamps, wallog
from ..connection import BUSY_TIMEOUT_MS
from ..errors import FileMissing, OraError
from ..private import refuse_link
from .refresh import RefreshMixin
from .results import IndexState
from .sidecar import (
    INDEX_VERSION,
    MARGIN,
    attach_source,
    connect_sidecar,
    file_stats,
    fts5_available,
    identity,
    settled,
    sidecar_path,
    source_columns,
    source_uri,
)


class _Progress:
    """Build progress of this process, readable from any thread (for :func:`index_state`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, tuple[int, int]] = {}

    def set(self, key: str, done: int, total: int) -> None:
        with self._lock:
            self._running[key] = (done, total)

    def clear(self, key: str) -> None:
        with self._lock:
            self._running.pop(key, None)

    def get(self, key: str) -> tuple[int, int] | None:
        with self._lock:
            return self._running.get(key)


PROGRESS = _Progress()


class SearchIndex(RefreshMixin):
    """The sidecar of one database, with its own connection (the source attached as ``src``).

    Thread-safe: one lock serialises use of the connection. Get instances with
    :func:`get_index` so each process keeps one per file.
    """

    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path).expanduser().resolve()
        self.sidecar = sidecar_path(self.db_path)
        self.lock = threading.RLock()
        self.file_lock = filelock.FileLock(str(refuse_link(str(self.sidecar) + ".lock")), mode=0o600)
        self._conn: sqlite3.Connection | None = None
        self._anchors: list[sqlite3.Connection] = []  # see attach_source: closed after the connection
        self._sidecar_ino: int | None = None
        self._seen: list | None = None
        self._attached = ""
        self._attached_identity: list[int] = []
        #: This process's reader of the file's change feed, as of the last refresh (see _named_by_feed).
        self._reader: feedreaders.FeedReader | None = None
        self.columns: tuple[str, ...] = ()

    # ------------------------------------------------------------------ connection
    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._seen = None
            self._drop_anchors(keep=0)

    def _attach(self, conn: sqlite3.Connection) -> None:
        """(Re)attach the agent's file; earlier anchors close once the new attach holds the file."""
        anchor = attach_source(conn, self.db_path)
        if anchor is not None:
            self._anchors.append(anchor)
        self._drop_anchors(keep=1 if anchor is not None else 0)

    def _drop_anchors(self, keep: int) -> None:
        while len(self._anchors) > keep:
            self._anchors.pop(0).close()

    def _sidecar_inode(self) -> int | None:
        try:
            return os.stat(self.sidecar).st_ino
        except OSError:
            return None

    def connection(self) -> sqlite3.Connection:
        """The open sidecar connection (reopened when the sidecar file was replaced)."""
        ino = self._sidecar_inode()
        if self._conn is not None and ino != self._sidecar_ino:
            self.close()
        if self._conn is None:
            if ino is None:
                raise FileMissing(self.sidecar, "the search index is not built")
            self._conn = connect_sidecar(self.sidecar)
            self._sidecar_ino = ino
            self._attach(self._conn)
            self._attached, self._attached_identity = source_uri(self.db_path), identity(self.db_path)
            self.columns = source_columns(self._conn)
        return self._conn

    def meta(self, conn: sqlite3.Connection | None = None) -> dict[str, Any]:
        conn = conn or self.connection()
        out = {}
        for key, value in conn.execute("SELECT key, value FROM meta"):
            try:
                out[key] = json.loads(value)
            except (TypeError, ValueError):
                out[key] = value
        return out

    @staticmethod
    def set_meta(conn: sqlite3.Connection, **values: Any) -> None:
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                         [(k, json.dumps(v)) for k, v in values.items()])

    # ------------------------------------------------------------------ state
    def usable(self) -> tuple[bool, str]:
        """(True, "") when the sidecar exists, is complete, of this version and this file's."""
        if self._sidecar_inode() is None:
            return False, "not built"
        try:
            with self.lock:
                meta = self.meta()
        except (sqlite3.Error, OraError) as exc:
            self.close()
            return False, f"unreadable ({exc})"
        if meta.get("version") != INDEX_VERSION:
            return False, f"index version {meta.get('version')} is not {INDEX_VERSION}"
        if meta.get("path") != str(self.db_path):
            return False, "built for another file"
        if not meta.get("complete"):
            return False, "incomplete"
        return True, ""

    def state(self) -> IndexState:
        key = str(self.sidecar)
        progress = PROGRESS.get(key)
        ok, reason = self.usable()
        rows, stale, version, tags_pending = 0, False, None, False
        if ok:
            with self.lock:
                conn = self.connection()
                meta = self.meta(conn)
                rows = self._rows(conn)  # kept by triggers: no count of a million docs per change
            version = meta.get("version")
            stale = meta.get("stats") != file_stats(self.db_path)
            tags_pending = not meta.get("tags_done", True)
        return IndexState(path=self.db_path, sidecar=self.sidecar, built=ok, rows=rows, stale=stale,
                          building=progress is not None, progress=progress, fts5=fts5_available(),
                          version=version, reason=reason, tags_pending=tags_pending)

    # ------------------------------------------------------------------ refresh
    def _named_by_feed(self) -> frozenset[str] | None:
        """The memories changed since this process's last refresh, as the change feed of a store
        of the file open here names them (:mod:`..feedreaders`); None when no store is open, this
        is the first refresh with it, or it cannot tell. The refresh leans on them only when the
        log cannot vouch for the interval (a checkpoint truncated it)."""
        log = feedreaders.log_for(self.db_path)
        reader = self._reader if self._reader is not None and self._reader.log is log else None
        self._reader = log.reader(own=True) if reader is None and log is not None else reader
        if reader is None:
            return None
        change = reader.poll()
        if change is None:
            return frozenset()
        return change.ids if change else None

    def refresh(self, wait: bool = True) -> bool:
        """Bring a built index up to date; returns True when something was re-indexed.

        With ``wait=False`` a refresh another process is running is not waited for.
        """
        with self.lock:
            stats = file_stats(self.db_path)
            if stats == self._seen:
                return False
            conn = self.connection()
            # The file changed: our attach must see it even when another process has already
            # brought the index up to date. An immutable attach does not see other writers'
            # commits, nor does an attach of a file since replaced (another inode).
            uri = source_uri(self.db_path)
            ident = identity(self.db_path)
            if uri != self._attached or "immutable=1" in uri or ident != self._attached_identity:
                self._attach(conn)
                self._attached, self._attached_identity = uri, ident
                self.columns = source_columns(conn)
            try:
                self.file_lock.acquire(timeout=(BUSY_TIMEOUT_MS / 1000) if wait else 0.05)
            except filelock.Timeout:
                return False
            try:
                meta = self.meta(conn)
                if meta.get("stats") == stats and meta.get("identity") == ident and meta.get("vouched", True):
                    self._seen = stats
                    return False
                started = timestamps.now()
                # The log is read before the table: a commit published after is read again next time.
                logged = self._logged(meta)
                log = logged.cursor if logged is not None else wallog.cursor_now(self.db_path)
                named = self._named_by_feed()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    changed, position = self._refresh_locked(conn, meta, log, logged, named)
                    vouch = settled(stats)  # else the next search looks again (see SETTLE_NS)
                    self.set_meta(conn, stats=stats, vouched=vouch, identity=identity(self.db_path),
                                  since=timestamps.to_sql(started - MARGIN),
                                  wal=position.as_list() if position else None)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    self._reader = None  # what it named is not indexed: the next refresh cannot lean on it
                    raise
                self._seen = stats if vouch else None
                return changed
            finally:
                self.file_lock.release()

_registry: dict[str, SearchIndex] = {}
_registry_lock = threading.Lock()
_by_name: dict[tuple[str, str], SearchIndex] = {}


def get_index(db_path: str | Path) -> SearchIndex:
    """The process-wide :class:`SearchIndex` of a database file."""
    fast = (str(db_path), str(paths.cache_dir()))  # resolving paths costs more than a search
    index = _by_name.get(fast)
    if index is not None:
        return index
    key = str(Path(db_path).expanduser().resolve())
    with _registry_lock:
        index = _registry.get(key)
        if index is None or index.sidecar != sidecar_path(key):  # the cache folder moved
            index = _registry[key] = SearchIndex(Path(key))
        _by_name[fast] = index
        return index


@atexit.register
def close_every_index() -> None:
    """Close every index's connections as the process ends, each anchor last, so the ``-wal`` and
    ``-shm`` a read made beside an agent's file are removed (see ``sidecar.attach_source``)."""
    with _registry_lock:
        indexes = list(_registry.values())
    for index in indexes:
        index.close()
