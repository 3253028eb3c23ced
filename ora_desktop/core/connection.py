"""Connections that follow DESIGN's concurrency rules.

Every connection sets ``busy_timeout``, ``foreign_keys=ON`` and ``trusted_schema=OFF``; every
write transaction is ``BEGIN IMMEDIATE``. A read-only open never writes to the file or its
directory: SQLite's ``mode=ro`` would still create ``-wal``/``-shm`` files beside a WAL database
when no writer has them open, so in that case the file is opened ``immutable`` and
:class:`ChangeWatch` reopens it when the file changes on disk.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import peewee

from .errors import CorruptFile, DatabaseLocked, NotSQLite, OraError, ReadOnlyDatabase

BUSY_TIMEOUT_MS = 5000


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def is_wal(path: Path) -> bool:
    """True when the file's header says it is in WAL mode (bytes 18-19 are 2)."""
    with path.open("rb") as handle:
        header = handle.read(20)
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def readonly_needs_immutable(path: Path) -> bool:
    """A WAL file with no ``-wal`` beside it: ``mode=ro`` would create sidecar files."""
    return is_wal(path) and not Path(str(path) + "-wal").exists()


def make_database(path: Path, readonly: bool = False) -> tuple[peewee.SqliteDatabase, bool]:
    """Return (peewee database, immutable?) for ``path``; nothing is opened yet."""
    pragmas = {"busy_timeout": BUSY_TIMEOUT_MS, "foreign_keys": 1, "trusted_schema": 0}
    immutable = False
    if readonly:
        immutable = readonly_needs_immutable(path)
        params = {"mode": "ro", "immutable": "1"} if immutable else {"mode": "ro"}
        target = _uri(path, **params)
        db = peewee.SqliteDatabase(
            target, pragmas=pragmas, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
        )
    else:
        db = peewee.SqliteDatabase(
            str(path), pragmas=pragmas, lock_type="IMMEDIATE",
            timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
        )
    return db, immutable


def translate(path: str | Path, exc: BaseException) -> OraError:
    """Map sqlite3/peewee errors to an ``OraError`` that names the file and the problem."""
    text = str(exc)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return DatabaseLocked(path, f"the database is locked by another program ({text}); try again")
    if "readonly" in lowered or "read-only" in lowered or "attempt to write" in lowered:
        return ReadOnlyDatabase(path, f"the database cannot be written ({text})")
    if "not a database" in lowered or "encrypted" in lowered:
        return NotSQLite(path, f"not a usable SQLite database ({text})")
    if "malformed" in lowered or "disk i/o" in lowered or "corrupt" in lowered:
        return CorruptFile(path, f"the database is damaged ({text})")
    return OraError(f"{path}: {text}")


@contextlib.contextmanager
def translated(path: str | Path) -> Iterator[None]:
    """Re-raise database errors as ``OraError`` naming ``path``."""
    try:
        yield
    except OraError:
        raise
    except (sqlite3.Error, peewee.PeeweeException) as exc:
        raise translate(path, exc) from exc


class ChangeWatch:
    """Cheap detection of another process's writes.

    Uses ``PRAGMA data_version`` on a normal connection, and the (mtime, size) of the file
    and its ``-wal`` for an immutable read-only one (which cannot see other writers).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last: tuple = ()

    def fingerprint(self, db: peewee.SqliteDatabase, immutable: bool) -> tuple:
        stats = []
        for suffix in ("", "-wal"):
            try:
                st = os.stat(str(self.path) + suffix)
                stats.append((st.st_mtime_ns, st.st_size))
            except FileNotFoundError:
                stats.append(None)
        if immutable:
            return tuple(stats)
        version = db.execute_sql("PRAGMA data_version").fetchone()[0]
        return (version, stats[1])

    def changed(self, db: peewee.SqliteDatabase, immutable: bool) -> bool:
        current = self.fingerprint(db, immutable)
        previous, self._last = self._last, current
        return bool(previous) and previous != current

    def reset(self, db: peewee.SqliteDatabase, immutable: bool) -> None:
        self._last = self.fingerprint(db, immutable)
