"""Scrub purged memories out of the full-text sidecar (the built-in scrubber of :mod:`..scrub`).

Every scrub also deletes the files of builds that died (``<sidecar>.building-*``, a full copy of
the texts a killed reindex left), holding the index's file lock that every live build holds.

SQLite 3.40's FTS5 has no ``secure-delete`` option (3.44): deleting a row leaves its words in
the index segments until they are merged. So the rows go (docs, fts, tags) with
``secure_delete`` on, then ``optimize`` merges every segment into one (the old segments' pages
are freed and zeroed), then the ``-wal`` is checkpointed and truncated. If a byte scan still
finds a purged text (free space written before ``secure_delete`` was on), the sidecar is vacuumed.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import filelock

from ..connection import translated
from ..errors import OraError
from ..residue import find_residue
from .index import get_index
from .sidecar import BUILDING, _delete_fids, connect_sidecar, remove_stale_builds

BUILD_WAIT = 600.0  # seconds to wait for a build of the index to finish before scrubbing it


def scrub_fts(db_path: Path, ids: frozenset[str], texts: list[bytes]) -> Path | None:
    """Remove ``ids`` from ``db_path``'s full-text sidecar; returns the sidecar, or ``None`` if
    there is none. ``texts`` (needles, see :func:`..residue.needles`) are checked for afterwards."""
    index = get_index(db_path)
    if not index.sidecar.exists() and not any(index.sidecar.parent.glob(f"{index.sidecar.name}{BUILDING}*")):
        return None
    # The file lock first, as a build takes it (a build then takes index.lock to swap files in).
    try:  # a build in progress holds the lock: wait for it, then scrub what it wrote
        index.file_lock.acquire(timeout=BUILD_WAIT)
    except filelock.Timeout:
        raise OraError(f"{index.sidecar}: the search index of {db_path} was being built for more than "
                       f"{BUILD_WAIT:.0f} s, so it may still hold the purged memories; rebuild it with "
                       f"'ora-desktop reindex --db {db_path}'") from None
    conn = None
    try:
        stale = remove_stale_builds(index.sidecar)  # a killed reindex's copy of every text
        with index.lock, translated(index.sidecar):
            if not index.sidecar.exists():
                return stale[0] if stale else None
            index.close()  # our own connection must hold no snapshot while the file is rewritten
            conn = connect_sidecar(index.sidecar)
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                fids = [r[0] for r in conn.execute(
                    "SELECT fid FROM docs WHERE mid IN (SELECT value FROM json_each(?))", [json.dumps(sorted(ids))])]
                _delete_fids(conn, fids)
                conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            if texts and find_residue([index.sidecar], texts):
                conn.execute("VACUUM")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        if conn is not None:
            conn.close()
        index.file_lock.release()
    return index.sidecar


def indexed_texts(db_path: Path, ids: frozenset[str]) -> dict[str, str]:
    """The text the full-text sidecar holds for each of ``ids`` it still indexes (what a purge
    that was killed after its commit left there); empty when the sidecar cannot be read (the
    scrub that follows removes the ids all the same, or says what is wrong)."""
    index = get_index(db_path)
    if not ids or not index.sidecar.exists():
        return {}
    try:
        with index.lock, translated(index.sidecar):
            conn = index.connection()
            return {mid: text for mid, text in conn.execute(
                "SELECT docs.mid, fts.content FROM docs JOIN fts ON fts.rowid = docs.fid "
                "WHERE docs.mid IN (SELECT value FROM json_each(?))", [json.dumps(sorted(ids))])
                if isinstance(text, str)}
    except (OraError, sqlite3.Error):
        return {}


def scrub_vectors(db_path: Path, ids: frozenset[str], texts: list[bytes]) -> Path | None:
    """Remove ``ids`` from ``db_path``'s vector sidecar (rows overwritten, the log truncated);
    returns the sidecar, or ``None`` if there is none. Vectors hold no text, so ``texts`` are
    not looked for there."""
    from .vectors import forget, vector_path

    path = vector_path(db_path)
    if not path.exists():
        return None
    forget(db_path, ids)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path
