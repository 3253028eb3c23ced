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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import filelock

from . import backup as b
from .backup import PARTIAL, BackupError, backup_folder, check_file, fsync_path, new_name
from .config import Config
from .connection import BUSY_TIMEOUT_MS, translate
from .errors import CorruptFile, EmptyFile, FileMissing, NotSQLite, OraError, WrongSchema
from .fileheader import copy_into
from .locks import job_lock
from .private import UnsafePath, make_dirs, open_private, private_dir, refuse_link
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
    #: Older copies kept before restores, deleted beyond ``[backup] keep_before_restore``.
    rotated_away: tuple[Path, ...] = ()


class _Damaged(Exception):
    """The live file cannot be restored through SQLite."""


def restore(backup_path: Path, target: Path, config: Config) -> RestoreReport:
    """Restore a checked backup into ``target`` (see the module docstring). Raises ``BackupError``."""

    if target.is_symlink():
        from .private import refuse_link

        refuse_link(target, "memory file")
    if not os.path.lexists(target):
        make_dirs(target.parent)
        memories = _write_new(backup_path, target)
        return RestoreReport(backup_path, target, None, memories,
                             f"restored {target} from {backup_path.name} ({memories} memories; there was no "
                             "file to keep aside)", "new file")
    try:
        return _locked_swap(backup_path, target, config)
    except _Damaged as damage:
        reason = str(damage)
    kept = set_aside_raw(target, config)
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
        kept = set_aside_live(target, config)
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

    src = sqlite3.connect(b.ro_uri(backup_path, immutable=True), uri=True)
    fd = open_private(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
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


#: How long a restore waits for a running backup of the same file by default, in seconds.
RESTORE_WAIT = 30.0


def restore_backup(backup_path: str | Path, target_path: str | Path, *,
                   config: Config | None = None, wait: float = RESTORE_WAIT) -> RestoreReport:
    """Replace ``target_path``'s content with a backup, after checking it and keeping the current file.

    Refuses (``BackupError``, nothing changed) a backup that is not an Ora database or fails
    ``integrity_check``. The restore holds the file's ``backup`` job lock — the one the backup job
    takes in the window, the daemon and ``ora-desktop run`` — so a backup cannot copy the file
    half-restored; while another process's backup holds it, the restore waits up to ``wait``
    seconds, then refuses with ``OraError`` (nothing changed). Agents are held off for the whole
    swap, and the current file — every row committed before the swap — is first copied aside
    into the backup folder as ``<timestamp>-before-restore.site.db``; a damaged live file is kept
    aside byte for byte and replaced (see :mod:`ora_desktop.core.restore`).
    ``RestoreReport.strategy`` says which.
    """

    backup_path = Path(backup_path).expanduser()
    target = Path(target_path).expanduser()
    if not backup_path.is_file():
        raise FileMissing(backup_path, "no such backup file")
    try:
        problems = check_file(backup_path)
    except OraError as exc:
        raise BackupError(f"{backup_path}: refused, not a usable backup ({exc}); nothing was changed") from exc
    if problems:
        raise BackupError(f"{backup_path}: refused, the backup fails its integrity check "
                          f"({'; '.join(problems[:3])}); nothing was changed")
    lock = job_lock("backup", target.resolve())
    try:
        lock.acquire(timeout=max(0.0, float(wait)))
    except filelock.Timeout:
        raise OraError(f"{target}: a backup of this file is running in another process (waited {wait:g} s); "
                       "nothing was restored — try again when it has finished") from None
    config = config or Config.load()
    try:
        report = restore(backup_path, target, config)
    finally:
        lock.release()
    return _rotate_asides(report, target, config)


def _rotate_asides(report: RestoreReport, target: Path, config: Config) -> RestoreReport:
    """Keep the newest ``[backup] keep_before_restore`` copies set aside, and say so."""
    if report.kept_aside is None:
        return report
    try:
        removed = b.rotate_before_restore(target, config=config)
    except OSError as exc:
        return replace(report, message=f"{report.message}; older copies kept before restores could not be "
                                       f"rotated ({exc.strerror or exc})")
    if not removed:
        return report
    keep = config.backup_setting("keep_before_restore").value
    return replace(report, rotated_away=tuple(removed),
                   message=f"{report.message}; {len(removed)} older cop{'y' if len(removed) == 1 else 'ies'} kept "
                           f"before restores deleted (the newest {keep} are kept: [backup] keep_before_restore)")


def _aside_folder(target: Path, config: Config) -> Path:
    folder = backup_folder(target, None, config)
    try:
        return private_dir(folder.parent.parent, folder.parent.name, folder.name)
    except (OSError, UnsafePath) as exc:
        raise BackupError(f"{target}: cannot use the backup folder {folder} ({getattr(exc, 'strerror', None) or exc}); "
                          "nothing was restored") from exc


def set_aside_live(target: Path, config: Config) -> Path:
    """Copy the readable live file aside through SQLite (a checked, 0600 ``…-before-restore`` backup)."""
    folder = _aside_folder(target, config)
    aside = new_name(folder, datetime.now(UTC), aside=True)
    try:
        problems = b.checked_copy(target, aside)
    except (OSError, OraError) as exc:
        raise BackupError(f"{target}: could not keep the current file aside in {folder} ({exc}); "
                          "nothing was restored") from exc
    if problems:
        raise BackupError(f"{target}: the copy kept aside failed its check ({'; '.join(problems[:3])}); "
                          "nothing was restored")
    return aside


def set_aside_raw(target: Path, config: Config) -> Path:
    """Keep a damaged live file's bytes (and its ``-wal`` beside them) as they are, 0600."""
    folder = _aside_folder(target, config)
    aside = new_name(folder, datetime.now(UTC), aside=True)
    temp = folder / f".{aside.name}{PARTIAL}-{os.getpid()}"
    try:
        _raw_copy(target, temp)
        wal = Path(f"{target}-wal")
        if wal.exists():
            _raw_copy(wal, Path(f"{aside}-wal"))
        fsync_path(temp)
        os.replace(temp, aside)
        fsync_path(folder)
    except OSError as exc:
        raise BackupError(f"{target}: could not keep the damaged file aside in {folder} ({exc}); "
                          "nothing was restored") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return aside


def _raw_copy(source: Path, target: Path) -> None:
    """Byte copy into a new private file; never through a link at the target. The live file is
    read through the kept-open descriptor (:mod:`.fileheader`): this process may hold connections
    to it, and closing a descriptor of it would drop their locks."""
    refuse_link(target)
    fd = open_private(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        copy_into(source, fd)
    finally:
        os.close(fd)
