"""Connections that follow the concurrency rules of ARCHITECTURE.md.

Every connection sets ``busy_timeout``, ``foreign_keys=ON`` and ``trusted_schema=OFF``; every
write transaction is ``BEGIN IMMEDIATE``. A read-only open keeps SQLite's locking, so another
program's commit or checkpoint can never tear what it reads (:func:`read_mode`): an
``immutable`` open takes no locks, and an agent's checkpoint rewrote pages under it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import peewee

from .errors import CorruptFile, DatabaseLocked, InvalidValue, NotSQLite, OraError, ReadOnlyDatabase
from .fileheader import read_header

BUSY_TIMEOUT_MS = 5000
#: SQLite VM steps between two cancel checks inside a long statement (a progress handler): about
#: 10 ms of SQLite's work. Each check is a call into Python, which takes the GIL: every 20,000
#: steps (a check every ~0.1 ms) a worker's facet count took the GIL so often that the window's
#: thread waited for it at each of a paint's calls into Python (GUI-thread gaps of 50-120 ms
#: with 1-25 ms of its own work in them).
CANCEL_CHECK_STEPS = 1_000_000


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def is_wal(path: Path) -> bool:
    """True when the file's header says it is in WAL mode (bytes 18-19 are 2)."""
    header = read_header(path, 20)
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return None


#: Bytes of a ``-wal`` file's header: a ``-wal`` no longer than this holds no commit.
WAL_HEADER = 32
#: How a read-only open reads a file (see :func:`read_mode`).
SHARED, READONLY, IMMUTABLE = "shared", "ro", "immutable"


def read_mode(path: Path) -> str:
    """How a read-only open of ``path`` reads it without a torn view and without leaving files.

    - ``ro`` (``mode=ro``, SQLite's locks): a rollback-journal file (nothing is created), or a
      WAL file whose ``-wal`` holds commits (read through it, never checkpointed by us).
    - ``shared``: a WAL file whose ``-wal`` holds no commit (or is absent), which we may write
      and add files beside. Opened read-write with ``PRAGMA query_only``: SQLite takes its locks
      and creates ``-wal``/``-shm`` while the file is open, and the last connection to close
      (ours or an agent's) removes them, as after any writer. ``mode=ro`` would take the same
      locks but cannot remove the files it made, so they would stay beside the file.
    - ``immutable``: a WAL file with nothing beside it that we may not add files to (a read-only
      file, folder or mount). No locks: readers compare the file's stat before and after and
      read again when it moved (``Store._read``, the check job).
    """
    if not is_wal(path):
        return READONLY
    wal = _size(str(path) + "-wal")
    if wal is not None and wal > WAL_HEADER:  # commits in the -wal (a writer's, or a crashed one's)
        return READONLY
    if may_add_files(path):
        return SHARED
    return IMMUTABLE if wal is None or _size(str(path) + "-shm") is None else READONLY


def may_add_files(path: Path) -> bool:
    """Whether this process may write ``path`` and create files beside it (its ``-wal``/``-shm``).

    A file or folder with no write permission bit at all counts as read-only even for root (who
    could write it anyway): whoever took the bits away meant nothing to be written there.
    """
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        writable_bits = all(os.stat(p).st_mode & 0o222 for p in (path, folder))
    except OSError:
        return False
    return writable_bits and os.access(path, os.R_OK | os.W_OK) and os.access(folder, os.W_OK | os.X_OK)


def readonly_uri(path: Path, mode: str | None = None) -> str:
    """The URI a read-only open of ``path`` uses in ``mode`` (default: :func:`read_mode`).

    A ``shared`` connection must also run ``PRAGMA query_only = 1`` (:func:`connect_readonly`).
    """
    path = Path(path)
    mode = mode or read_mode(path)
    params = {SHARED: {"mode": "rw"}, READONLY: {"mode": "ro"},
              IMMUTABLE: {"mode": "ro", "immutable": "1"}}[mode]
    return _uri(path, **params)


def connect_readonly(path: Path, timeout: float = BUSY_TIMEOUT_MS / 1000, **kwargs: Any) -> sqlite3.Connection:
    """A stdlib connection that reads ``path`` as :func:`read_mode` says (errors are sqlite3's)."""
    path = Path(path)
    mode = read_mode(path)
    conn = sqlite3.connect(readonly_uri(path, mode), uri=True, timeout=timeout, **kwargs)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        conn.execute("PRAGMA trusted_schema = OFF")
        if mode == SHARED:
            conn.execute("PRAGMA query_only = 1")
    except BaseException:
        conn.close()
        raise
    return conn


class Database(peewee.SqliteDatabase):
    """peewee's ``SqliteDatabase`` (one connection per thread) that can close every thread's
    connection at once, so closing a store releases the file whichever threads used it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._every: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._every_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn = super()._connect()
        with self._every_lock:
            # Threads that ended without closing leave their connection behind: close those.
            gone = [pair for pair in self._every if not pair[0].is_alive()]
            self._every = [pair for pair in self._every if pair[0].is_alive()]
            self._every.append((threading.current_thread(), conn))
        for _, old in gone:
            with contextlib.suppress(sqlite3.Error):
                old.close()
        return conn

    def _close(self, conn: sqlite3.Connection) -> None:
        with self._every_lock:
            self._every = [pair for pair in self._every if pair[1] is not conn]
        conn.close()

    @property
    def open_connections(self) -> int:
        """How many threads hold an open connection to this database."""
        with self._every_lock:
            return len(self._every)

    def close_all(self) -> None:
        """Close this thread's connection and every other thread's (they reconnect if used again)."""
        if not self.is_closed() and not self.in_transaction():
            self.close()
        with self._every_lock:
            others, self._every = self._every, []
        for _, conn in others:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


def make_database(path: Path, readonly: bool = False,
                  timeout: float = BUSY_TIMEOUT_MS / 1000) -> tuple[Database, bool]:
    """Return (peewee database, immutable?) for ``path``; nothing is opened yet."""
    pragmas: dict[str, Any] = {"busy_timeout": int(timeout * 1000), "foreign_keys": 1, "trusted_schema": 0}
    if readonly:
        mode = read_mode(path)
        if mode == SHARED:
            pragmas["query_only"] = 1
        db = Database(readonly_uri(path, mode), pragmas=pragmas, uri=True, timeout=timeout,
                      check_same_thread=False)
        return db, mode == IMMUTABLE
    # Deleted and overwritten text is zeroed on the page, not left in free space (purge).
    pragmas["secure_delete"] = 1
    db = Database(str(path), pragmas=pragmas, lock_type="IMMEDIATE", timeout=timeout,
                  check_same_thread=False)
    return db, False


def translate(path: str | Path, exc: BaseException) -> OraError:
    """Map sqlite3/peewee errors to an ``OraError`` that names the file and the problem."""
    text = str(exc)
    lowered = text.lower()
    for kind in ("unique", "not null", "check"):
        prefix = f"{kind} constraint failed: "
        if lowered.startswith(prefix):
            column = text[len(prefix):].split(",")[0].strip()
            field = column.split(".")[-1] if kind != "check" else "value"
            problem = {"unique": "already exists (ids must be unique)", "not null": "must not be empty",
                       "check": f"breaks a CHECK constraint ({column})"}[kind]
            return InvalidValue(field, f"{problem} in {path}")
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


def file_stamp(path: Path) -> tuple:
    """(mtime, size, inode) of the file and of its ``-wal``: moves whenever another process writes."""
    stats = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(str(path) + suffix)
            stats.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except FileNotFoundError:
            stats.append(None)
    return tuple(stats)


def commit_counter(path: Path) -> int | None:
    """SQLite's own count of commits to ``path``, the same for every connection and process.

    In WAL mode it is the wal-index header's ``iChange`` (in ``-shm``; machine byte order, two
    copies that agree when no writer is mid-update); otherwise the file header's change counter
    (offset 24). Each commit that changes the file adds exactly one. ``None`` when it cannot be
    read (no ``-shm`` yet, a file being replaced): callers fall back to ``data_version``.
    """
    try:  # read_header, never open/close: closing any descriptor of the file drops SQLite's locks
        header = read_header(path, 28)
        if len(header) < 28:
            return None
        if header[18] != 2:  # not WAL: the rollback-journal change counter
            return int.from_bytes(header[24:28], "big")
        for _attempt in range(3):
            index = read_header(f"{path}-shm", 96)
            if len(index) == 96 and index[:48] == index[48:] and index[12] == 1:
                return int.from_bytes(index[8:12], sys.byteorder)
    except OSError:
        return None
    return None


class ChangeWatch:
    """Cheap detection of other connections' writes (another process, or a connection outside
    this store), telling them apart from the store's own commits on any of its threads.

    For a normal connection it compares SQLite's commit counter (:func:`commit_counter`) with the
    value last seen, and the store reports its own commits (:meth:`own_commit_begins` /
    :meth:`own_commit_ended`): a commit the store did not make is what counts. Where the counter
    cannot be read it falls back to ``PRAGMA data_version`` (it moves only when another
    connection commits; per connection, so the last value is kept per thread). An immutable
    read-only connection cannot see other writers: there the (mtime, size, inode) of the file and
    its ``-wal`` are compared.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last: dict[int, tuple] = {}
        self._stamp: tuple | None = None  # the file's stamp at the last reset, for a thread's first call
        self._guard = threading.Lock()
        self._known: int | None = None  # the commit counter as of our last look or our last commit
        self._foreign = False  # someone else committed before one of our own commits
        #: thread -> (counter, total_changes, counter at the last look) at BEGIN
        self._begun: dict[int, tuple[int | None, int, int | None]] = {}

    def fingerprint(self, db: peewee.SqliteDatabase, immutable: bool) -> tuple:
        """What identifies the file's current state for this kind of connection."""
        if immutable:
            return ("stat", *file_stamp(self.path))
        return ("version", db.execute_sql("PRAGMA data_version").fetchone()[0])

    def changed(self, db: peewee.SqliteDatabase, immutable: bool) -> bool:
        """True when someone else's commit landed since the last call."""
        if not immutable:
            counter = commit_counter(self.path)
            if counter is not None:
                with self._guard:
                    moved = self._foreign or (self._known is not None and counter != self._known)
                    if self._known is None:  # no counter at the last reset: judge by the file's stamp
                        moved = self._stamp is not None and file_stamp(self.path) != self._stamp
                    self._known, self._foreign = counter, False
                return moved
        current = self.fingerprint(db, immutable)
        key = threading.get_ident()
        previous, self._last[key] = self._last.get(key), current
        if previous is None:  # this thread's first look: data_version has no past here, the file's stamp has
            return self._stamp is not None and file_stamp(self.path) != self._stamp
        return previous != current

    def reset(self, db: peewee.SqliteDatabase, immutable: bool) -> None:
        """Take the current state as seen (on this thread, and as the baseline for other threads' first look)."""
        self._last[threading.get_ident()] = self.fingerprint(db, immutable)
        self._stamp = file_stamp(self.path)
        with self._guard:
            self._known = None if immutable else commit_counter(self.path)
            self._foreign = False

    def own_commit_begins(self, connection: sqlite3.Connection) -> None:
        """Called inside our write transaction, once it holds the write lock: a counter that moved
        since our last look is someone else's commit."""
        counter = commit_counter(self.path)
        with self._guard:
            if counter is not None and self._known is not None and counter != self._known:
                self._foreign = True
            self._begun[threading.get_ident()] = (counter, connection.total_changes, self._known)

    @property
    def counter(self) -> int | None:
        """The commit counter as of the last look or our last commit."""
        return self._known

    def our_commit_will_be(self, connection: sqlite3.Connection) -> int | None:
        """Inside our write, before COMMIT: the counter our commit brings the file to (we hold
        the write lock since :meth:`own_commit_begins`), None when it changes nothing or the
        counter is not known."""
        begun, changes, _ = self._begun.get(threading.get_ident(), (None, 0, None))
        return None if begun is None or connection.total_changes == changes else begun + 1

    def own_commit_ended(self, connection: sqlite3.Connection) -> OwnCommit | None:
        """Called after our commit: it added one to the counter if it changed anything; more than
        that is someone else's commit landing right after ours. Which commits were whose
        (:class:`OwnCommit`), None when the counter cannot tell (someone else's then counts as
        seen at the next look)."""
        begun, changes, seen = self._begun.pop(threading.get_ident(), (None, 0, None))
        counter = commit_counter(self.path)
        with self._guard:
            if counter is None or begun is None:
                return None
            ours = 1 if connection.total_changes != changes else 0
            if counter not in (begun, begun + ours):  # (a schema-only commit of ours also lands here: harmless)
                self._foreign = True
            self._known = counter
            return OwnCommit(seen, begun, ours == 1 and counter >= begun + 1)

    def accounted(self, commit: OwnCommit) -> None:
        """The change feed read every commit up to ours (others' before it, then ours): only
        commits after ours are someone else's news at the next look."""
        with self._guard:
            self._known, self._foreign = commit.begun + commit.ours, False


@dataclass(frozen=True, slots=True)
class OwnCommit:
    """Our commit as the counter saw it: the counter at the last look (``seen``), at our BEGIN
    (``begun``: others' commits in between), and whether ours wrote anything (``ours``)."""

    seen: int | None
    begun: int
    ours: bool
