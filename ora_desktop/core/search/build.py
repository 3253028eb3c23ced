"""Building a sidecar index: words first (searchable at once), then tags and CJK text; with
progress and cancel.

:func:`build` writes the documents and the FTS5 table into a temporary file with plain
``INSERT … SELECT`` statements (the same work as a raw ``INSERT INTO fts SELECT``) and renames it
into place — from then on the index answers searches. :func:`finish_tags` then extracts the
tags and picks the texts holding CJK characters for the trigram table, from the indexed text in
batches (resumable: a later :func:`ensure_index` finishes an interrupted run); until then tag
filters and CJK words say "still indexing", or wait. A thread doing that beside the words (for
the second core) was measured and dropped: on this shared 2-core machine it made the words 2-3x
slower and the whole build no faster. Progress is reported over both phases as one count
(memories indexed + memories tagged).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from .. import paths, timestamps, wallog
from ..errors import OraError, WrongSchema
from ..private import private_dir
from ..schema import sniff_file
from .index import PROGRESS, SearchIndex, get_index
from .results import IndexState
from .sidecar import (
    BATCH,
    INDEX_VERSION,
    INDEXES,
    MARGIN,
    SCHEMA,
    TAGS_INDEX,
    Cancelled,
    _delete_fids,
    _is_cancelled,
    _samples,
    attach_source,
    build_file,
    connect_sidecar,
    file_stats,
    fts5_available,
    identity,
    remove_stale_builds,
    settled,
    sidecar_path,
    tags_and_cjk,
)

ProgressFn = Callable[[int, int], None]
# Tags are extracted while holding the index's lock: small batches keep searches responsive.
TAG_BATCH = 5000


def build(db_path: str | Path, progress: ProgressFn | None = None, cancel: object = None,
          rebuild: bool = True) -> IndexState:
    """Build the sidecar from scratch into a temporary file, then put it in place.

    With ``rebuild=False`` an index another thread or process finished while this one waited
    for the lock is kept. Raises :class:`Cancelled` when ``cancel`` fires (the temporary file
    is removed).
    """
    index = get_index(db_path)
    source = index.db_path
    sniff_file(source)
    private_dir(paths.cache_dir(), index.sidecar.parent.name)
    key = str(index.sidecar)
    with index.file_lock:
        if not rebuild and index.usable()[0]:
            return index.state()
        remove_stale_builds(index.sidecar)  # (with their -journal/-wal/-shm)
        tmp = build_file(index.sidecar, os.getpid(), threading.get_ident())
        PROGRESS.set(key, 0, 0)
        try:
            _build_into(tmp, source, progress, cancel, key)
            with index.lock:
                index.close()
                os.replace(tmp, index.sidecar)
                for suffix in ("-wal", "-shm"):
                    Path(str(index.sidecar) + suffix).unlink(missing_ok=True)
            words = PROGRESS.get(key)
            if progress and words:  # the words are in place: searches use the index from now on
                progress(*words)
        finally:
            PROGRESS.clear(key)
            for suffix in ("", "-journal", "-wal", "-shm"):
                Path(str(tmp) + suffix).unlink(missing_ok=True)
    index.refresh()
    if not finish_tags(index, progress, cancel):
        return _cancelled(index)
    return index.state()


def finish_tags(index: SearchIndex, progress: ProgressFn | None = None, cancel: object = None) -> bool:
    """Extract tags for every indexed memory not tagged yet (phase two of a build).

    Reads the text from the index itself, one batch per short write transaction, so searches
    go on meanwhile. Returns True when every memory is tagged, False when cancelled.
    """
    key = str(index.sidecar)
    with index.lock:
        conn = index.connection()
        meta = index.meta(conn)
        if meta.get("tags_done", True):
            return True
        total = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        done = conn.execute("SELECT count(*) FROM docs WHERE fid <= ?", (meta.get("tags_upto") or 0,)).fetchone()[0]
    report_every = max(TAG_BATCH, total // 200)
    reported = None
    try:
        while True:
            PROGRESS.set(key, total + done, 2 * total)
            if progress and (reported is None or done - reported >= report_every):
                reported = done
                progress(total + done, 2 * total)
            if _is_cancelled(cancel):
                return False
            with index.lock:
                conn = index.connection()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    upto = index.meta(conn).get("tags_upto") or 0
                    rows = conn.execute("SELECT id, c0 FROM fts_content WHERE id > ? ORDER BY id LIMIT ?",
                                        (upto, TAG_BATCH)).fetchall()
                    _insert_tags(conn, *tags_and_cjk(rows))
                    if rows:
                        SearchIndex.set_meta(conn, tags_upto=rows[-1][0])
                    else:
                        conn.execute(TAGS_INDEX)
                        SearchIndex.set_meta(conn, tags_done=True)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            if not rows:
                break
            done += len(rows)
    finally:
        PROGRESS.clear(key)
    if progress:
        progress(2 * total, 2 * total)
    return True


def _refuse_without_memories(conn: sqlite3.Connection, source: Path) -> None:
    """Another application's SQLite file (no ``memories`` table) is refused naming it, so a search
    across files skips it with a warning instead of failing on ``src.memories``."""
    if conn.execute("SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND name = 'memories'").fetchone() is None:
        raise WrongSchema(source, "no 'memories' table: this is an SQLite file, but not an Ora memory database")


def _build_into(tmp: Path, source: Path, progress: ProgressFn | None, cancel: object, key: str) -> None:
    conn = connect_sidecar(tmp)
    anchor = None
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.executescript(SCHEMA)
        anchor = attach_source(conn, source)
        _refuse_without_memories(conn, source)
        started = timestamps.now()
        stats, ident = file_stats(source), identity(source)
        log = wallog.cursor_now(source)  # before the table is read: see refresh
        total = conn.execute("SELECT count(*) FROM src.memories").fetchone()[0]
        if progress:
            progress(0, 2 * total)
        last_row = _fill(conn, total, progress, cancel, key)
        conn.execute("BEGIN")
        try:
            conn.execute("CREATE UNIQUE INDEX docs_mid ON docs(mid)")
        except sqlite3.IntegrityError:  # a foreign file without a primary key repeated an id
            dupes = conn.execute(
                "SELECT fid FROM docs WHERE fid NOT IN (SELECT min(fid) FROM docs GROUP BY mid)").fetchall()
            _delete_fids(conn, [r[0] for r in dupes])
        for statement in INDEXES:
            conn.execute(statement)
        SearchIndex.set_meta(
            conn, version=INDEX_VERSION, path=str(source), identity=ident, stats=stats, vouched=settled(stats),
            since=timestamps.to_sql(started - MARGIN), max_row=last_row or 0, samples=_samples(conn),
            built_at=timestamps.to_sql(started), complete=True, tags_upto=0, tags_done=False,
            wal=log.as_list() if log else None,
        )
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE src")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
        if anchor is not None:  # last: it removes the -wal/-shm it made (see attach_source)
            anchor.close()


def _fill(conn: sqlite3.Connection, total: int, progress: ProgressFn | None, cancel: object, key: str) -> int:
    """Index the source's words batch by batch (the same ``INSERT … SELECT`` a raw FTS5 build
    runs); returns the last rowid indexed."""
    done, last_row = 0, 0
    report_every = max(BATCH, total // 200)
    reported = 0
    while True:
        if _is_cancelled(cancel):
            raise Cancelled("the index build was cancelled")
        conn.execute("BEGIN")
        # fid = the rowid at build time (any unique number would do: docs maps it to the id).
        added = conn.execute(
            "INSERT INTO docs(fid, mid, ver, srow) SELECT rowid, id, CAST(updated_at AS TEXT), rowid "
            "FROM src.memories WHERE rowid > ? AND id IS NOT NULL ORDER BY rowid LIMIT ?",
            (last_row, BATCH)).rowcount
        if added <= 0:
            conn.execute("COMMIT")
            return last_row
        high = conn.execute("SELECT max(fid) FROM docs").fetchone()[0]
        conn.execute("INSERT INTO fts(rowid, content) SELECT rowid, content FROM src.memories "
                     "WHERE rowid > ? AND rowid <= ? AND id IS NOT NULL", (last_row, high))
        conn.execute("COMMIT")
        last_row = high
        done += added
        PROGRESS.set(key, done, 2 * max(total, done))
        if progress and done - reported >= report_every:
            reported = done
            progress(done, 2 * max(total, done))


def _insert_tags(conn: sqlite3.Connection, tags: list[tuple[int, str, str]], texts: list[tuple[int, str]]) -> None:
    if tags:
        conn.executemany("INSERT OR IGNORE INTO tags(fid, kind, value) VALUES (?, ?, ?)", tags)
    if texts:  # (a refresh may have indexed one of them again meanwhile)
        conn.executemany("DELETE FROM cjk WHERE rowid = ?", [(fid,) for fid, _ in texts])
        conn.executemany("INSERT INTO cjk(rowid, content) VALUES (?, ?)", texts)


def index_state(db_path: str | Path) -> IndexState:
    """Whether the index is built, how many rows it holds, whether the file changed since
    (cheap: file stats), and build progress when this process is building it."""
    return get_index(db_path).state()


def ensure_index(db_path: str | Path, progress: ProgressFn | None = None, cancel: object = None,
                 rebuild: bool = False) -> IndexState:
    """Build the index if missing (or ``rebuild``), else bring it up to date incrementally.

    ``progress(done, total)`` is called while building; ``cancel`` (an Event or a callable
    returning True) stops a build, leaving no partial index (the returned state says
    ``built=False, reason='cancelled'``).
    """
    index = get_index(db_path)
    if not fts5_available():
        return IndexState(path=index.db_path, sidecar=index.sidecar, built=False, fts5=False,
                          reason="this SQLite has no FTS5: searches use the LIKE fallback")
    ok, _ = index.usable()
    if ok and not rebuild:
        try:
            index.refresh()
            if not finish_tags(index, progress, cancel):
                return _cancelled(index)
            return index.state()
        except sqlite3.DatabaseError:
            index.close()  # a damaged sidecar: rebuild it below
    try:
        return build(db_path, progress, cancel, rebuild=rebuild)
    except Cancelled:
        return _cancelled(index)


def _cancelled(index: SearchIndex) -> IndexState:
    state = index.state()
    return IndexState(path=state.path, sidecar=state.sidecar, built=state.built, rows=state.rows,
                      stale=state.stale, fts5=True, version=state.version, tags_pending=state.tags_pending,
                      reason="cancelled")


def drop_index(db_path: str | Path) -> bool:
    """Delete the sidecar of ``db_path`` (nothing is lost: it is rebuilt on the next search)."""
    index = get_index(db_path)
    with index.lock:
        index.close()
        existed = index.sidecar.exists()
        for suffix in ("", "-wal", "-shm"):
            Path(str(index.sidecar) + suffix).unlink(missing_ok=True)
    return existed


class BuildTask:
    """A background build of one index (a thread): ``progress``, ``cancel()``, ``wait()``.

    ``on_progress(done, total)`` and ``on_done(state)`` are called from the worker thread;
    a GUI forwards them to its own thread. ``error`` holds the message if the build failed.
    """

    def __init__(self, db_path: str | Path, on_progress: ProgressFn | None = None,
                 on_done: Callable[[IndexState], None] | None = None, rebuild: bool = False) -> None:
        self.db_path = Path(db_path)
        self.progress: tuple[int, int] = (0, 0)
        self.state: IndexState | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._on_progress = on_progress
        self._on_done = on_done
        self._rebuild = rebuild
        self._thread = threading.Thread(target=self._run, name=f"index {self.db_path.name}", daemon=True)
        self._thread.start()

    def _report(self, done: int, total: int) -> None:
        self.progress = (done, total)
        if self._on_progress:
            self._on_progress(done, total)

    def _run(self) -> None:
        try:
            self.state = ensure_index(self.db_path, self._report, self._cancel, rebuild=self._rebuild)
        except (OraError, OSError, sqlite3.Error) as exc:
            self.error = str(exc)
            self.state = IndexState(path=self.db_path, sidecar=sidecar_path(self.db_path), built=False,
                                    reason=str(exc))
        if self._on_done:
            self._on_done(self.state)

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> IndexState | None:
        self._thread.join(timeout)
        return self.state
