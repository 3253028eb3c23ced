"""The sidecar file itself: its schema, connections to it and to the agent's file, and the
small helpers that write documents, FTS rows and tags (see :mod:`.index` for the design)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from .. import paths
from ..connection import (
    BUSY_TIMEOUT_MS,
    IMMUTABLE,
    READONLY,
    SHARED,
    WAL_HEADER,
    connect_readonly,
    read_mode,
    readonly_uri,
)
from ..decoding import tolerant
from ..errors import OraError
from ..private import touch_private
from .cjk import SCHEMA as CJK_SCHEMA
from .cjk import has_cjk
from .tags import extract_tags

ProgressFn = Callable[[int, int], None]
INDEX_VERSION = 5  # 3: the cjk trigram table; 4: topic tags from "Tags:" lines; 5: session/project/model tags
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
""" + CJK_SCHEMA + ";\n"
# Made when the tags are all extracted (inserting into it meanwhile would slow the extraction).
TAGS_INDEX = "CREATE INDEX IF NOT EXISTS tags_kind_value ON tags(kind, value COLLATE NOCASE)"
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS docs_mid ON docs(mid)",
    "CREATE INDEX IF NOT EXISTS docs_srow ON docs(srow)",
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
            conn.execute("CREATE VIRTUAL TABLE t3 USING fts5(c, tokenize='trigram')")  # SQLite 3.34+
            _fts5 = True
        except sqlite3.Error:
            _fts5 = False
        finally:
            conn.close()
    return _fts5


def sidecar_path(db_path: str | Path) -> Path:
    """Where the index of ``db_path`` lives: ``<cache>/search/<file_key>.fts.db``."""
    return paths.cache_dir() / "search" / f"{paths.file_key(db_path)}.fts.db"


BUILDING = ".building-"  # <sidecar>.building-<pid>-<thread>: a build's file until its rename


def build_file(sidecar: Path, pid: int, thread: int) -> Path:
    """The temporary file a build writes before renaming it over ``sidecar``."""
    return sidecar.with_name(f"{sidecar.name}{BUILDING}{pid}-{thread}")


def remove_stale_builds(sidecar: Path) -> list[Path]:
    """Delete the files of builds that died (a kill mid-reindex leaves tens of MB of memory text).

    Call only while holding the index's file lock: every build holds it from its first byte to
    its rename, so a build file found meanwhile belongs to no live build."""
    removed = []
    for path in sidecar.parent.glob(f"{sidecar.name}{BUILDING}*"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def source_uri(db_path: Path) -> str:
    """The URI the agent's file is attached by: ``mode=ro`` with SQLite's locks (``immutable``
    only where nothing may be created beside it, :func:`~ora_desktop.core.connection.read_mode`).
    Never read-write: ``BEGIN IMMEDIATE`` on the sidecar would then take the agent's write lock."""
    return readonly_uri(db_path, IMMUTABLE if read_mode(db_path) == IMMUTABLE else READONLY)


#: How long after its last modification a file's stats may vouch for an index. A writer appends
#: its commit frames to ``-wal`` before it publishes them in ``-shm``: a reader that looks in
#: between sees the new size and mtime but a snapshot without the commit. Recording those stats
#: as "indexed up to here" would hide that commit for good if it was the writer's last one.
SETTLE_NS = 2_000_000_000


def settled(stats: list) -> bool:
    """True when no part of the file (db, ``-wal``) changed within :data:`SETTLE_NS`."""
    newest = max((entry[0] for entry in stats if entry), default=0)
    return time.time_ns() - newest > SETTLE_NS


def file_stats(db_path: Path) -> list:
    """(mtime_ns, size) of the file and of its ``-wal`` (None when absent or holding no frame:
    a reader's open creates an empty ``-wal`` and its close removes it, changing nothing)."""
    out: list = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(str(db_path) + suffix)
            out.append([st.st_mtime_ns, st.st_size] if not suffix or st.st_size > WAL_HEADER else None)
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
    """A connection to a sidecar file (autocommit; we run explicit transactions).

    The file is created 0600 first (it holds the text of every memory; SQLite gives its
    ``-wal``/``-shm`` the same mode) and a link in its place is refused.
    """
    touch_private(path)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False, uri=True)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.text_factory = tolerant  # memories read from the attached file may hold bytes that are not UTF-8
    conn.execute("PRAGMA secure_delete = ON")  # removed text is zeroed, not left in free space (purge)
    # A cache: losing the last commits to a power cut is fine (they are redone), waiting for
    # the disk on every refresh is not.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def attach_source(conn: sqlite3.Connection, db_path: Path) -> sqlite3.Connection | None:
    """Attach the agent's file read-only as ``src``; returns the anchor to close after ``conn``.

    A ``mode=ro`` attach of a WAL file with nothing beside it would create ``-wal``/``-shm`` and
    could not remove them. So a ``shared`` read-only connection (the anchor) opens the file
    first: the attach uses the anchor's files, and the anchor, closed last, removes them
    (unless another program still has the file open; then that program does).
    """
    anchor = None
    if read_mode(db_path) == SHARED:
        anchor = connect_readonly(db_path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        anchor.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL: -wal/-shm exist
    try:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("DETACH DATABASE src")
        conn.execute("ATTACH DATABASE ? AS src", (source_uri(db_path),))
    except BaseException:
        if anchor is not None:
            anchor.close()
        raise
    return anchor


def source_columns(conn: sqlite3.Connection) -> tuple[str, ...]:
    return tuple(row[1] for row in conn.execute("PRAGMA src.table_info(memories)"))


def tags_and_cjk(rows: list[tuple[int, Any]]) -> tuple[list[tuple[int, str, str]], list[tuple[int, str]]]:
    """The tag rows ``(fid, kind, value)`` and CJK rows ``(fid, text)`` of ``(fid, content)`` pairs."""
    texts = [(fid, _text(content)) for fid, content in rows]
    tags = [(fid, kind, value) for fid, text in texts for kind, value in extract_tags(text)]
    return tags, [(fid, text) for fid, text in texts if has_cjk(text)]


def _insert_docs(conn: sqlite3.Connection, rows: list[tuple[int, int, str, Any, Any]]) -> None:
    """Index rows ``(fid, srow, mid, content, ver)``: docs, fts and tags."""
    conn.executemany("INSERT INTO docs(fid, mid, ver, srow) VALUES (?, ?, ?, ?)",
                     [(fid, mid, None if ver is None else str(ver), srow) for fid, srow, mid, _, ver in rows])
    texts = [(r[0], _text(r[3])) for r in rows]
    conn.executemany("INSERT INTO fts(rowid, content) VALUES (?, ?)", texts)
    conn.executemany("INSERT INTO cjk(rowid, content) VALUES (?, ?)", [t for t in texts if has_cjk(t[1])])
    tag_rows = [(fid, kind, value) for fid, _, _, content, _ in rows for kind, value in extract_tags(_text(content))]
    if tag_rows:
        conn.executemany("INSERT OR IGNORE INTO tags(fid, kind, value) VALUES (?, ?, ?)", tag_rows)


def _delete_fids(conn: sqlite3.Connection, fids: Iterable[int]) -> int:
    fids = list(fids)
    for chunk in _chunks(fids):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM fts WHERE rowid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM cjk WHERE rowid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM tags WHERE fid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM docs WHERE fid IN ({marks})", chunk)
    return len(fids)


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
