"""The sidecar full-text index of one memory file (DESIGN contract 3).

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
3. otherwise one scan for rows with ``rowid >= high-water rowid`` or ``updated_at`` at or after
   the previous refresh (minus a margin; any format that does not sort as text is always
   checked), compared with ``docs.ver`` — only rows added or changed are re-indexed;
4. ``count(*)`` compared with ``docs``: a difference means deletions, found per 1,024-rowid
   bucket whose counts differ; if the counts still differ, full reconcile.

A missing or unreadable sidecar, another index version, or another database at the same
path → rebuild. A build writes a temporary file and renames it when complete, so a cancelled
or crashed build leaves no partial index.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import filelock

from .. import paths, timestamps
from ..connection import BUSY_TIMEOUT_MS, readonly_needs_immutable
from ..errors import FileMissing, OraError
from . import walscan
from .results import IndexState
from .tags import extract_tags

ProgressFn = Callable[[int, int], None]
INDEX_VERSION = 2
BATCH = 20000
BUCKET_BITS = 10
SAMPLES = 16
# Rows updated this long before the previous refresh are re-checked when the table is scanned
# (clock skew, and "-05:00"-style offsets that sort as text before the UTC instant).
MARGIN = timedelta(hours=14)
NO_FTS5_ENV = "ORA_DESKTOP_NO_FTS5"
#: Tests may set this to force the LIKE fallback.
FORCE_FALLBACK = False

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS docs (fid INTEGER PRIMARY KEY, mid TEXT NOT NULL, ver TEXT, srow INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(content, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS tags (fid INTEGER NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL,
                                 PRIMARY KEY (fid, kind, value)) WITHOUT ROWID;
"""
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS docs_mid ON docs(mid)",
    "CREATE INDEX IF NOT EXISTS docs_srow ON docs(srow)",
    "CREATE INDEX IF NOT EXISTS tags_kind_value ON tags(kind, value COLLATE NOCASE)",
    "INSERT OR REPLACE INTO meta(key, value) VALUES ('rows', (SELECT count(*) FROM docs))",
    "CREATE TRIGGER IF NOT EXISTS docs_counted_in AFTER INSERT ON docs "
    "BEGIN UPDATE meta SET value = value + 1 WHERE key = 'rows'; END",
    "CREATE TRIGGER IF NOT EXISTS docs_counted_out AFTER DELETE ON docs "
    "BEGIN UPDATE meta SET value = value - 1 WHERE key = 'rows'; END",
)
_fts5: bool | None = None


class Cancelled(OraError):
    """A build was cancelled by its caller."""


def fts5_available() -> bool:
    """Whether this SQLite has FTS5 (and ``ORA_DESKTOP_NO_FTS5`` is not set)."""
    global _fts5
    if FORCE_FALLBACK or os.environ.get(NO_FTS5_ENV, "") not in ("", "0"):
        return False
    if _fts5 is None:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
            _fts5 = True
        except sqlite3.Error:
            _fts5 = False
        finally:
            conn.close()
    return _fts5


def sidecar_path(db_path: str | Path) -> Path:
    """Where the index of ``db_path`` lives: ``<cache>/search/<file_key>.fts.db``."""
    return paths.cache_dir() / "search" / f"{paths.file_key(db_path)}.fts.db"


def source_uri(db_path: Path) -> str:
    """A read-only URI for the agent's file (``immutable`` when ``mode=ro`` would create files)."""
    params = "mode=ro&immutable=1" if readonly_needs_immutable(db_path) else "mode=ro"
    return f"file:{quote(str(db_path.resolve()))}?{params}"


def file_stats(db_path: Path) -> list:
    """(mtime_ns, size) of the file and of its ``-wal`` (None when absent)."""
    out: list = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(str(db_path) + suffix)
            out.append([st.st_mtime_ns, st.st_size])
        except FileNotFoundError:
            out.append(None)
    return out


def identity(db_path: Path) -> list[int]:
    st = os.stat(db_path)
    return [st.st_dev, st.st_ino]


def _is_cancelled(cancel: object) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    if callable(is_set):
        return bool(is_set())
    return bool(cancel()) if callable(cancel) else bool(cancel)


def _chunks(items: list, size: int = 900) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else str(value)


def connect_sidecar(path: Path) -> sqlite3.Connection:
    """A connection to a sidecar file (autocommit; we run explicit transactions)."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False, uri=True)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA trusted_schema = OFF")
    # A cache: losing the last commits to a power cut is fine (they are redone), waiting for
    # the disk on every refresh is not.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def attach_source(conn: sqlite3.Connection, db_path: Path) -> None:
    """Attach the agent's file read-only as ``src``."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute("DETACH DATABASE src")
    conn.execute("ATTACH DATABASE ? AS src", (source_uri(db_path),))


def source_columns(conn: sqlite3.Connection) -> tuple[str, ...]:
    return tuple(row[1] for row in conn.execute("PRAGMA src.table_info(memories)"))


def _insert_docs(conn: sqlite3.Connection, rows: list[tuple[int, int, str, Any, Any]]) -> None:
    """Index rows ``(fid, srow, mid, content, ver)``: docs, fts and tags."""
    conn.executemany("INSERT INTO docs(fid, mid, ver, srow) VALUES (?, ?, ?, ?)",
                     [(fid, mid, None if ver is None else str(ver), srow) for fid, srow, mid, _, ver in rows])
    conn.executemany("INSERT INTO fts(rowid, content) VALUES (?, ?)", [(r[0], _text(r[3])) for r in rows])
    tag_rows = [(fid, kind, value) for fid, _, _, content, _ in rows for kind, value in extract_tags(_text(content))]
    if tag_rows:
        conn.executemany("INSERT OR IGNORE INTO tags(fid, kind, value) VALUES (?, ?, ?)", tag_rows)


def _delete_fids(conn: sqlite3.Connection, fids: Iterable[int]) -> int:
    fids = list(fids)
    for chunk in _chunks(fids):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM fts WHERE rowid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM tags WHERE fid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM docs WHERE fid IN ({marks})", chunk)
    return len(fids)


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


class SearchIndex:
    """The sidecar of one database, with its own connection (the source attached as ``src``).

    Thread-safe: one lock serialises use of the connection. Get instances with
    :func:`get_index` so each process keeps one per file.
    """

    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path).expanduser().resolve()
        self.sidecar = sidecar_path(self.db_path)
        self.lock = threading.RLock()
        self.file_lock = filelock.FileLock(str(self.sidecar) + ".lock")
        self._conn: sqlite3.Connection | None = None
        self._sidecar_ino: int | None = None
        self._seen: list | None = None
        self.columns: tuple[str, ...] = ()

    # ------------------------------------------------------------------ connection
    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._seen = None

    def _sidecar_inode(self) -> int | None:
        try:
            return os.stat(self.sidecar).st_ino
        except FileNotFoundError:
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
            attach_source(self._conn, self.db_path)
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
                rows = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
            version = meta.get("version")
            stale = meta.get("stats") != file_stats(self.db_path)
            tags_pending = not meta.get("tags_done", True)
        return IndexState(path=self.db_path, sidecar=self.sidecar, built=ok, rows=rows, stale=stale,
                          building=progress is not None, progress=progress, fts5=fts5_available(),
                          version=version, reason=reason, tags_pending=tags_pending)

    # ------------------------------------------------------------------ refresh
    def refresh(self, wait: bool = True) -> bool:
        """Bring a built index up to date; returns True when something was re-indexed.

        With ``wait=False`` a refresh another process is running is not waited for.
        """
        with self.lock:
            stats = file_stats(self.db_path)
            if stats == self._seen:
                return False
            try:
                self.file_lock.acquire(timeout=(BUSY_TIMEOUT_MS / 1000) if wait else 0.05)
            except filelock.Timeout:
                return False
            try:
                conn = self.connection()
                meta = self.meta(conn)
                if meta.get("stats") == stats and meta.get("identity") == identity(self.db_path):
                    self._seen = stats
                    return False
                # A fresh attach: an immutable attach does not see other writers' commits.
                attach_source(conn, self.db_path)
                self.columns = source_columns(conn)
                started = timestamps.now()
                log = walscan.current_position(str(self.db_path))
                conn.execute("BEGIN IMMEDIATE")
                try:
                    changed, position = self._refresh_locked(conn, meta, log)
                    self.set_meta(conn, stats=stats, identity=identity(self.db_path),
                                  since=timestamps.to_sql(started - MARGIN),
                                  wal=position.as_list() if position else None)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                self._seen = stats
                return changed
            finally:
                self.file_lock.release()

    def _refresh_locked(self, conn: sqlite3.Connection, meta: dict[str, Any],
                        log: walscan.WalPosition | None) -> tuple[bool, walscan.WalPosition | None]:
        """Re-index what changed; returns (changed?, the log position now processed)."""
        if meta.get("identity") != identity(self.db_path) or self._renumbered(conn, meta):
            return self._reconcile(conn), log
        max_row = int(meta.get("max_row") or 0)
        logged = walscan.read_changes(str(self.db_path), walscan.WalPosition.from_list(meta.get("wal")))
        if logged is not None:
            # Rows on the pages the log says changed, and anything past the last rowid seen.
            rowids = sorted(logged.rowids)
            candidates = conn.execute("SELECT rowid, id, updated_at FROM src.memories WHERE rowid >= ?",
                                      (max_row,)).fetchall()
            for chunk in _chunks(rowids):
                candidates.extend(conn.execute(
                    f"SELECT rowid, id, updated_at FROM src.memories WHERE rowid IN ({','.join('?' * len(chunk))})",
                    chunk))
            changed = self._apply(conn, candidates, compare_text=True)
            changed = self._remove_deleted_near(conn, logged.pages) or changed
            log = logged.position
        else:
            since = str(meta.get("since") or "0000")
            candidates = conn.execute(
                "SELECT rowid, id, updated_at FROM src.memories WHERE rowid >= ? OR updated_at >= ? "
                "OR typeof(updated_at) != 'text'", (max_row, since)).fetchall()
            changed = self._apply(conn, candidates)
        src_count = conn.execute("SELECT count(*) FROM src.memories").fetchone()[0]
        if src_count != self._rows(conn):
            changed = self._remove_deleted(conn) or changed
            if src_count != self._rows(conn):
                return self._reconcile(conn) or changed, log
        return changed, log

    @staticmethod
    def _rows(conn: sqlite3.Connection) -> int:
        """Rows in docs (kept in meta by triggers; counted when missing)."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'rows'").fetchone()
        if row is None:
            return conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        return int(row[0])

    def _remove_deleted_near(self, conn: sqlite3.Connection, pages: tuple[tuple[int, ...], ...]) -> bool:
        """Deleted memories between the neighbours of changed pages (rowids the log bounds)."""
        gone: list[int] = []
        for rowids in pages:
            present = set(rowids)
            low, high = min(rowids), max(rowids)
            before = conn.execute("SELECT max(rowid) FROM src.memories WHERE rowid < ?", (low,)).fetchone()[0]
            after = conn.execute("SELECT min(rowid) FROM src.memories WHERE rowid > ?", (high,)).fetchone()[0]
            before = (low - 1) if before is None else before
            after = (1 << 62) if after is None else after
            for fid, mid, srow in conn.execute("SELECT fid, mid, srow FROM docs WHERE srow > ? AND srow < ?",
                                               (before, after)):
                if srow not in present and conn.execute(
                        "SELECT 1 FROM src.memories WHERE id = ?", (mid,)).fetchone() is None:
                    gone.append(fid)
        return _delete_fids(conn, gone) > 0

    def _renumbered(self, conn: sqlite3.Connection, meta: dict[str, Any]) -> bool:
        """True when a sampled memory now lives at another rowid (VACUUM, or a REPLACE)."""
        samples = meta.get("samples") or []
        if not samples:
            return False
        ids = [mid for _, mid in samples]
        marks = ",".join("?" * len(ids))
        now = dict(conn.execute(f"SELECT id, rowid FROM src.memories WHERE id IN ({marks})", ids).fetchall())
        if any(mid in now and now[mid] != srow for srow, mid in samples):
            return True
        max_row = conn.execute("SELECT max(rowid) FROM src.memories").fetchone()[0] or 0
        return max_row < int(meta.get("max_row") or 0) - (1 << BUCKET_BITS)

    def _apply(self, conn: sqlite3.Connection, candidates: list[tuple[int, Any, Any]],
               compare_text: bool = False) -> bool:
        """Re-index candidates whose id is new or whose ``updated_at``/rowid changed.

        With ``compare_text`` (few candidates, from the log) the text is compared too, so an
        edit that kept ``updated_at`` (two edits in one second) is not missed.
        """
        if not candidates:
            return False
        known: dict[str, tuple[int, Any, int]] = {}
        ids = [str(c[1]) for c in candidates]
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for fid, mid, ver, srow in conn.execute(
                    f"SELECT fid, mid, ver, srow FROM docs WHERE mid IN ({marks})", chunk):
                known[mid] = (fid, ver, srow)
        stale_ids: list[str] = []
        moved: list[tuple[int, int]] = []
        for srow, mid, ver in candidates:
            mid = str(mid)
            ver = None if ver is None else str(ver)
            old = known.get(mid)
            if old is None or old[1] != ver:
                stale_ids.append(mid)
            elif old[2] != srow:
                moved.append((srow, old[0]))
        if compare_text:
            stale_ids.extend(self._text_changed(conn, [(srow, known[str(mid)][0]) for srow, mid, ver in candidates
                                                       if str(mid) in known and str(mid) not in stale_ids]))
            stale_ids = list(dict.fromkeys(stale_ids))
        if moved:
            conn.executemany("UPDATE docs SET srow = ? WHERE fid = ?", moved)
        if not stale_ids:
            return bool(moved)
        self._reindex_ids(conn, stale_ids, known)
        return True

    @staticmethod
    def _text_changed(conn: sqlite3.Connection, pairs: list[tuple[int, int]]) -> list[str]:
        """Ids whose current text differs from the indexed text; ``pairs`` are (rowid, fid)."""
        changed: list[str] = []
        for chunk in _chunks(pairs, 400):
            rowids = [p[0] for p in chunk]
            fids = [p[1] for p in chunk]
            current = {r: (str(i), _text(c)) for r, i, c in conn.execute(
                f"SELECT rowid, id, content FROM src.memories WHERE rowid IN ({','.join('?' * len(rowids))})",
                rowids)}
            indexed = dict(conn.execute(
                f"SELECT id, c0 FROM fts_content WHERE id IN ({','.join('?' * len(fids))})", fids))
            for rowid, fid in chunk:
                mid, text = current.get(rowid, (None, None))
                if mid is not None and indexed.get(fid) != text:
                    changed.append(mid)
        return changed

    def _reindex_ids(self, conn: sqlite3.Connection, ids: list[str], known: dict[str, tuple] | None = None) -> None:
        known = dict(known or {})
        missing = [i for i in ids if i not in known]
        for chunk in _chunks(missing):
            marks = ",".join("?" * len(chunk))
            for fid, mid, ver, srow in conn.execute(
                    f"SELECT fid, mid, ver, srow FROM docs WHERE mid IN ({marks})", chunk):
                known[mid] = (fid, ver, srow)
        next_fid = (conn.execute("SELECT max(fid) FROM docs").fetchone()[0] or 0) + 1
        _delete_fids(conn, [known[i][0] for i in ids if i in known])
        rows = []
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows.extend(conn.execute(
                f"SELECT rowid, id, content, updated_at FROM src.memories WHERE id IN ({marks})", chunk))
        batch = []
        srows = []
        for srow, mid, content, ver in rows:
            old = known.get(str(mid))
            fid = old[0] if old else next_fid
            if not old:
                next_fid += 1
            batch.append((fid, srow, str(mid), content, ver))
            srows.append((srow, str(mid)))
        # A rowid now held by another id: the memory that had it is gone.
        holder = dict(srows)
        gone = []
        for chunk in _chunks(list(holder)):
            for fid, mid, srow in conn.execute(
                    f"SELECT fid, mid, srow FROM docs WHERE srow IN ({','.join('?' * len(chunk))})", chunk):
                if mid != holder[srow] and conn.execute(
                        "SELECT 1 FROM src.memories WHERE id = ?", (mid,)).fetchone() is None:
                    gone.append(fid)
        _delete_fids(conn, gone)
        _insert_docs(conn, batch)
        if batch:
            top = max(srow for _, srow, *_ in batch)
            meta_max = self.meta(conn).get("max_row") or 0
            if top > meta_max:
                self.set_meta(conn, max_row=top)

    def _remove_deleted(self, conn: sqlite3.Connection) -> bool:
        """Find deleted memories in the rowid buckets whose counts differ; remove them."""
        bits = BUCKET_BITS
        src = dict(conn.execute(f"SELECT rowid >> {bits} AS b, count(*) FROM src.memories GROUP BY b"))
        ours = dict(conn.execute(f"SELECT srow >> {bits} AS b, count(*) FROM docs GROUP BY b"))
        buckets = [b for b in set(src) | set(ours) if src.get(b, 0) != ours.get(b, 0)]
        gone: list[int] = []
        for bucket in buckets:
            low, high = bucket << bits, ((bucket + 1) << bits) - 1
            present = {str(r[0]) for r in conn.execute(
                "SELECT id FROM src.memories WHERE rowid BETWEEN ? AND ?", (low, high))}
            for fid, mid in conn.execute("SELECT fid, mid FROM docs WHERE srow BETWEEN ? AND ?", (low, high)):
                if mid not in present and conn.execute(
                        "SELECT 1 FROM src.memories WHERE id = ?", (mid,)).fetchone() is None:
                    gone.append(fid)
        return _delete_fids(conn, gone) > 0

    def _reconcile(self, conn: sqlite3.Connection) -> bool:
        """Full comparison by id: re-index what changed, drop what is gone, refresh hints."""
        gone = [r[0] for r in conn.execute(
            "SELECT fid FROM docs d WHERE NOT EXISTS (SELECT 1 FROM src.memories m WHERE m.id = d.mid)")]
        _delete_fids(conn, gone)
        stale, moved = [], []
        for srow, mid, ver, fid, old_ver, old_srow in conn.execute(
                "SELECT m.rowid, m.id, m.updated_at, d.fid, d.ver, d.srow FROM src.memories m "
                "LEFT JOIN docs d ON d.mid = m.id"):
            ver = None if ver is None else str(ver)
            if fid is None or old_ver != ver:
                stale.append(str(mid))
            elif old_srow != srow:
                moved.append((srow, fid))
        conn.executemany("UPDATE docs SET srow = ? WHERE fid = ?", moved)
        for chunk in _chunks(stale, 5000):
            self._reindex_ids(conn, chunk)
        max_row = conn.execute("SELECT max(rowid) FROM src.memories").fetchone()[0] or 0
        self.set_meta(conn, max_row=max_row, samples=_samples(conn))
        return bool(gone or stale or moved)


def _samples(conn: sqlite3.Connection) -> list[list]:
    """Up to SAMPLES (rowid, id) pairs spread over the docs, to notice renumbering."""
    low, high = conn.execute("SELECT min(fid), max(fid) FROM docs").fetchone()
    if low is None:
        return []
    step = max(1, (high - low) // SAMPLES)
    rows: dict[str, list] = {}
    for target in range(low, high + 1, step):
        row = conn.execute("SELECT srow, mid FROM docs WHERE fid >= ? ORDER BY fid LIMIT 1", (target,)).fetchone()
        if row:
            rows[row[1]] = [row[0], row[1]]
    return list(rows.values())[:SAMPLES + 1]


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
