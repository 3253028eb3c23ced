"""Restoring a backup into a live memory file: nothing committed is ever lost, whatever the file's state.

**A readable live file** is restored while holding its write lock for the whole swap
(``BEGIN IMMEDIATE`` on the live file):

1. the lock is taken — an agent's next write waits (its busy timeout) until the restore commits;
2. the current content, including every row committed up to that moment, is copied aside into
   the backup folder (``…-before-restore.site.db``, checked, 0600) by a reader whose snapshot
   begins after the lock was taken, so no commit can fall between the copy and the swap;
3. the live file's tables are replaced by the backup's inside the same transaction, through
   SQLite (its ``-wal``/``-shm`` stay consistent for connections that have it open), and it
   commits. Rows an agent writes after that land on top of the restored content.

**A damaged live file** (not a database any more, truncated, failing ``quick_check``) cannot be
locked or read through SQLite: its bytes (and its ``-wal``) are kept aside as they are, and the
backup is written next to it and renamed over it; the stale ``-wal``/``-shm`` are removed so
they cannot be replayed onto the restored file.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from .config import Config
from .connection import BUSY_TIMEOUT_MS, translate
from .errors import CorruptFile, EmptyFile, NotSQLite, OraError, WrongSchema
from .records import Change, Initiator
from .schema import sniff_file

LOCKED_SWAP = "held the write lock for the whole swap"
REPLACED_FILE = "replaced the damaged file (its bytes kept aside)"


@dataclass(frozen=True)
class RestoreReport:
    """What a restore did: which backup went where, where the replaced file was kept, and how."""

    backup: Path
    target: Path
    kept_aside: Path | None  # None when there was no current file to keep
    memories: int  # memories in the restored file
    message: str
    strategy: str = LOCKED_SWAP  # LOCKED_SWAP or REPLACED_FILE (or "new file")
    damaged: str = ""  # why the live file counted as damaged (REPLACED_FILE only)
    #: What views hear: every row may differ, so they reload (asked for by a person).
    change: Change = Change.reload(Initiator.USER)


class _Damaged(Exception):
    """The live file cannot be restored through SQLite."""


def restore(backup_path: Path, target: Path, config: Config) -> RestoreReport:
    """Restore a checked backup into ``target`` (see the module docstring). Raises ``BackupError``."""
    from . import backup as b

    if target.is_symlink():
        from .private import refuse_link

        refuse_link(target, "memory file")
    if not os.path.lexists(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        memories = _write_new(backup_path, target)
        return RestoreReport(backup_path, target, None, memories,
                             f"restored {target} from {backup_path.name} ({memories} memories; there was no "
                             "file to keep aside)", "new file")
    try:
        return _locked_swap(backup_path, target, config)
    except _Damaged as damage:
        reason = str(damage)
    kept = b.set_aside_raw(target, config)
    memories = _replace_file(backup_path, target, kept)
    return RestoreReport(backup_path, target, kept, memories,
                         f"restored {target} from {backup_path.name} ({memories} memories); the live file was "
                         f"damaged ({reason}) and was replaced — its bytes are kept at {kept}",
                         REPLACED_FILE, reason)


def _classify(target: Path, exc: BaseException) -> None:
    """Raise :class:`_Damaged` for errors that mean the file itself is broken; return otherwise."""
    if isinstance(exc, (NotSQLite, CorruptFile, EmptyFile)):
        raise _Damaged(getattr(exc, "problem", str(exc))) from exc
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        raise _Damaged(str(exc)) from exc
    text = str(exc).lower()
    if isinstance(exc, sqlite3.Error) and ("malformed" in text or "not a database" in text or "disk i/o" in text):
        raise _Damaged(str(exc)) from exc


def _locked_swap(backup_path: Path, target: Path, config: Config) -> RestoreReport:
    from . import backup as b

    try:
        sniff_file(target)
    except OraError as exc:
        _classify(target, exc)
        raise
    # A URI connection, so the backup can be attached read-only and immutable by URI.
    conn = sqlite3.connect(f"file:{quote(str(target.resolve()))}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                           isolation_level=None)
    kept: Path | None = None
    try:
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("ATTACH DATABASE ? AS restore_src", (b.ro_uri(backup_path, immutable=True),))
            conn.execute("BEGIN IMMEDIATE")  # from here no one else can commit to the live file
            check = [r[0] for r in conn.execute("PRAGMA main.quick_check")]
            if check != ["ok"]:
                raise _Damaged("; ".join(check[:3]))
            if not conn.execute("SELECT 1 FROM main.sqlite_master WHERE type='table' AND name='memories'").fetchone():
                raise WrongSchema(target, "no 'memories' table: not an Ora memory file; nothing was restored")
        except sqlite3.Error as exc:
            _classify(target, exc)
            raise translate(target, exc) from exc
        kept = b.set_aside_live(target, config)
        try:
            _replace_tables(conn)
            memories = conn.execute("SELECT count(*) FROM main.memories").fetchone()[0]
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise b.BackupError(f"{target}: restore failed ({exc}); nothing was changed, and a copy of the "
                                f"file is kept at {kept}") from exc
    finally:
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        conn.close()
    return RestoreReport(backup_path, target, kept, memories,
                         f"restored {target} from {backup_path.name} ({memories} memories; agents were held off "
                         f"for the swap, so no write was lost); the previous file is kept at {kept}")


def _objects(conn: sqlite3.Connection, schema: str) -> dict[str, tuple[str, str, str]]:
    """name -> (type, table, normalised sql) of a schema's tables, indexes, triggers and views."""
    rows = conn.execute(f"SELECT type, name, tbl_name, sql FROM {schema}.sqlite_master "
                        "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'").fetchall()
    return {name: (kind, table, " ".join(sql.split())) for kind, name, table, sql in rows}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _replace_tables(conn: sqlite3.Connection) -> None:
    """Make ``main`` hold exactly the tables, rows and schema objects of ``restore_src`` (same transaction)."""
    live, wanted = _objects(conn, "main"), _objects(conn, "restore_src")
    for name, (kind, _table, _sql) in live.items():  # every view and trigger first: no trigger may
        if kind in ("view", "trigger"):                # fire on the rows copied in (re-created below)
            conn.execute(f"DROP {kind.upper()} IF EXISTS main.{_quote(name)}")
    tables = {n: o for n, o in live.items() if o[0] == "table"}
    for name, (_kind, _table, sql) in tables.items():
        if wanted.get(name) != (_kind, _table, sql):
            conn.execute(f"DROP TABLE main.{_quote(name)}")
        else:
            conn.execute(f"DELETE FROM main.{_quote(name)}")
    for name, (kind, _table, sql) in wanted.items():
        if kind == "table" and live.get(name) != wanted[name]:
            conn.execute(sql)
    for name, (kind, _table, _sql) in wanted.items():
        if kind != "table":
            continue
        columns = [r[1] for r in conn.execute(f"PRAGMA restore_src.table_info({_quote(name)})")]
        rowid = not re.search(r"WITHOUT\s+ROWID", wanted[name][2], re.IGNORECASE)
        cols = ", ".join(_quote(c) for c in columns)
        keys = f"rowid, {cols}" if rowid else cols
        conn.execute(f"INSERT INTO main.{_quote(name)} ({keys}) SELECT {keys} FROM restore_src.{_quote(name)}")
    for name, (kind, _table, _sql) in live.items():
        if kind == "index" and wanted.get(name) != live[name]:
            conn.execute(f"DROP INDEX IF EXISTS main.{_quote(name)}")
    present = _objects(conn, "main")
    for name, (kind, _table, _sql) in wanted.items():
        if kind != "table" and name not in present:
            sql = conn.execute("SELECT sql FROM restore_src.sqlite_master WHERE name = ?", (name,)).fetchone()[0]
            conn.execute(sql)
    if conn.execute("SELECT 1 FROM restore_src.sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        conn.execute("DELETE FROM main.sqlite_sequence")
        conn.execute("INSERT INTO main.sqlite_sequence SELECT * FROM restore_src.sqlite_sequence")
    for pragma in ("user_version", "application_id"):
        value = int(conn.execute(f"PRAGMA restore_src.{pragma}").fetchone()[0])
        conn.execute(f"PRAGMA main.{pragma} = {value}")


def _write_new(backup_path: Path, target: Path) -> int:
    """Copy the backup into a file that does not exist yet (through SQLite, one consistent copy)."""
    from . import backup as b

    src = sqlite3.connect(b.ro_uri(backup_path, immutable=True), uri=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    dst = sqlite3.connect(str(target), isolation_level=None)
    try:
        src.backup(dst)
        return dst.execute("SELECT count(*) FROM memories").fetchone()[0]
    except sqlite3.Error as exc:
        raise b.BackupError(f"{target}: restore failed ({exc})") from exc
    finally:
        dst.close()
        src.close()


def _replace_file(backup_path: Path, target: Path, kept: Path) -> int:
    """Write the backup beside the damaged ``target`` and rename it over; drop the stale WAL."""
    from . import backup as b

    temp = target.with_name(f".{target.name}.restoring-{os.getpid()}")
    for leftover in (temp, Path(f"{temp}-journal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
    try:
        memories = _write_new(backup_path, temp)
        mode = os.lstat(target).st_mode & 0o777
        os.chmod(temp, mode or 0o600)
        b.fsync_path(temp)
        for stale in (Path(f"{target}-wal"), Path(f"{target}-shm"), Path(f"{target}-journal")):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        os.replace(temp, target)
        b.fsync_path(target.parent)
    except OSError as exc:
        raise b.BackupError(f"{target}: could not replace the damaged file ({exc.strerror or exc}); its bytes are "
                            f"kept at {kept}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return memories
