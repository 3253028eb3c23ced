"""Backups of memory files: SQLite's online backup API, checked copies, rotation, restore.

``create_backup`` copies a live file (agents may be writing: the copy is one consistent
snapshot, taken inside a single read transaction) to ``<backup dir>/<slug>/<agent>/
<UTC timestamp>.site.db``. The copy is written under a hidden temporary name that does not end
in ``.site.db``, switched to a single-file journal mode, checked with ``PRAGMA integrity_check``,
made mode 0600, flushed, and only then renamed into place: a crash at any point leaves no file
that looks like a valid backup, and never touches the live file.

Rotation keeps the newest ``keep_last`` backups plus the newest of each of the last
``keep_daily`` days and of each of the last ``keep_weekly`` ISO weeks. Of the files restores set
aside (``…-before-restore.site.db``) the newest ``keep_before_restore`` are kept (default 5), by
each restore and by each rotation; the regular rule never counts them.

``restore_backup`` refuses a backup that fails its check, then (holding the live file's write lock
for the whole swap) copies the current file aside into the same backup folder, so it can be
restored in turn, and writes the backup's tables into the live file through SQLite — its
``-wal``/``-shm`` stay consistent and other connections see the restored content. A damaged live
file is kept aside byte for byte and replaced (:mod:`ora_desktop.core.restore`).

Backup folders are 0700 and every backup 0600; a symbolic link where a backup folder should be
is refused (``UnsafePath``), and ``list_backups`` counts only regular files named like backups.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from . import processes
from .config import Config
from .connection import BUSY_TIMEOUT_MS, connect_readonly, file_stamp, translate
from .errors import FileMissing, OraError
from .private import UnsafePath, open_private, private_dir
from .schema import check_shape, inspect, sniff_file

if TYPE_CHECKING:
    from .maintenance.context import JobContext, Outcome

SUFFIX = ".site.db"
ASIDE = "-before-restore"
PARTIAL = ".partial"
STEP_PAGES = 4096
MMAP_BYTES = 1 << 31
_NAME = re.compile(r"^(\d{8}T\d{6}Z)(?:-(\d+))?(-before-restore)?\.site\.db$")


class BackupError(OraError):
    """A backup could not be made, checked, listed or restored; the message names the file."""


@dataclass(frozen=True)
class BackupInfo:
    """One backup file."""

    path: Path
    created: datetime  # from the file name (UTC)
    size: int
    site: str
    agent: str
    before_restore: bool = False  # set aside by a restore: rotated only by keep_before_restore


def default_dir(config: Config | None = None) -> Path:
    """The backup root from the config (default ``<user data dir>/backups``)."""
    return (config or Config.load()).backup_dir


def backup_folder(path: str | Path, dest_dir: str | Path | None = None, config: Config | None = None) -> Path:
    """``<backup dir>/<slug>/<agent>`` for the database ``path``."""
    path = Path(path).expanduser()
    agent = path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem
    root = Path(dest_dir).expanduser() if dest_dir else default_dir(config)
    return root / path.resolve().parent.name / agent


def ro_uri(path: Path, immutable: bool = True) -> str:
    """A read-only URI for a backup (a file of ours no program writes): ``immutable`` takes no
    locks and creates nothing beside it. A live database is read through
    :func:`~ora_desktop.core.connection.connect_readonly` instead, which keeps SQLite's locks."""
    from urllib.parse import quote

    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    return f"{uri}&immutable=1" if immutable else uri


def check_file(path: Path) -> list[str]:
    """``PRAGMA integrity_check`` of a file that no one else has open (empty list = sound).

    Also refuses files that are not SQLite or have no ``memories`` table.
    """
    sniff_file(path)
    conn = sqlite3.connect(ro_uri(path, immutable=True), uri=True)
    try:
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")  # read the copy through the page cache directly
        inspect(conn, path)
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()
    return [] if rows == ["ok"] else rows


def _copy_live(source: Path, target: Path, progress=None, cancel=None) -> None:
    """Online-backup ``source`` into a new file ``target`` (mode 0600), one consistent snapshot."""
    fd = open_private(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    os.close(fd)
    # SQLite's locks, not immutable: an agent's checkpoint must not rewrite pages under the copy.
    src = connect_readonly(source, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    dst = sqlite3.connect(target, isolation_level=None)
    try:
        # Hold one read transaction across every step: writers carry on (WAL), the backup never
        # restarts, and the copy is the database as of this moment.
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()

        def step(_status: int, remaining: int, total: int) -> None:
            if progress is not None:
                progress(total - remaining, total)
            if cancel is not None and cancel.is_set():
                from .maintenance.context import Cancelled

                raise Cancelled(f"{source}: backup cancelled; the partial copy was removed")

        src.backup(dst, pages=STEP_PAGES, progress=step)
        src.execute("COMMIT")
        dst.execute("PRAGMA journal_mode = DELETE")  # a backup is one self-contained file
    except sqlite3.Error as exc:
        raise translate(source, exc) from exc
    finally:
        dst.close()
        src.close()


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def new_name(folder: Path, when: datetime, aside: bool = False) -> Path:
    """A free backup name for ``when``; within one second, numbered past every name of that second
    (never one rotated away), so names sort as the backups were made."""
    stamp = when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    tail = ASIDE if aside else ""
    same = [m for m in (_NAME.match(p.name) for p in folder.glob(f"{stamp}*{SUFFIX}")) if m]
    n = max((int(m.group(2) or 1) for m in same if bool(m.group(3)) == aside), default=0) + 1
    candidate = folder / (f"{stamp}{tail}{SUFFIX}" if n == 1 else f"{stamp}-{n}{tail}{SUFFIX}")
    while candidate.exists():
        n += 1
        candidate = folder / f"{stamp}-{n}{tail}{SUFFIX}"
    return candidate


def _remove_partials(folder: Path) -> list[Path]:
    """Delete leftovers of interrupted backups whose process is gone (a crash or SIGKILL)."""
    removed = []
    for leftover in folder.glob(f".*{PARTIAL}-*"):
        match = re.search(rf"{re.escape(PARTIAL)}-(\d+)", leftover.name)
        if match and _alive(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            leftover.unlink()
            removed.append(leftover)
    return removed


def _alive(pid: int) -> bool:
    return pid == os.getpid() or processes.alive(pid)


def create_backup(path: str | Path, dest_dir: str | Path | None = None, *, config: Config | None = None,
                  progress=None, cancel=None, rotate: bool = True) -> BackupInfo:
    """Back up one database file; returns the new backup (see the module docstring).

    Raises ``BackupError`` (or a ``FileProblem``) naming the file when the source cannot be read
    or the copy fails its check; nothing that looks like a backup is left behind. The source is
    only read: a read-only file, folder or mount backs up like any other.
    """
    source = Path(path).expanduser()
    if not source.exists():
        raise FileMissing(source, "no such file to back up")
    check_shape(source)  # refuse a file that is not Ora, naming it (not our temporary copy)
    config = config or Config.load()
    folder = backup_folder(source, dest_dir, config)
    created = [d for d in (folder, folder.parent) if not d.exists()]  # removed again if no backup lands
    try:
        private_dir(folder.parent.parent, folder.parent.name, folder.name)
    except (OSError, UnsafePath) as exc:
        raise BackupError(f"{source}: cannot use the backup folder {folder} "
                          f"({getattr(exc, 'strerror', None) or exc})") from exc
    try:
        info = _write_backup(source, folder, progress, cancel)
    except BaseException:
        for directory in created:  # a failed first backup leaves no empty folders behind
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    if rotate:
        rotate_backups(source, dest_dir, config=config)
    return info


def _write_backup(source: Path, folder: Path, progress, cancel) -> BackupInfo:
    _remove_partials(folder)
    final = new_name(folder, datetime.now(UTC))
    for attempt in range(3):
        moved = file_stamp(source)
        try:
            problems = checked_copy(source, final, progress, cancel)
        except OSError as exc:
            raise BackupError(f"{source}: could not write the backup in {folder} ({exc.strerror or exc}); "
                              "no backup was kept") from exc
        # A copy read without locks (immutable: a file we may not add files beside) that fails its
        # check while another program changed the file is copied again, not called damaged.
        if not problems or attempt == 2 or file_stamp(source) == moved:
            break
    if problems:
        raise BackupError(f"{source}: the copy failed its integrity check ({'; '.join(problems[:3])}); "
                          "no backup was kept — the live file may be damaged, run 'ora-desktop run check'")
    return _info(final)


def checked_copy(source: Path, final: Path, progress=None, cancel=None) -> list[str]:
    """Copy ``source`` through SQLite to ``final`` the way every backup is written: to a temporary
    name beside it, checked with ``integrity_check``, made 0600, flushed, then renamed into place.

    Returns the check's problems (an empty list when ``final`` was written; otherwise nothing is
    kept). ``OSError`` and a cancel propagate; no temporary file is ever left behind."""
    folder = final.parent
    temp = folder / f".{final.name}{PARTIAL}-{os.getpid()}"
    try:
        _copy_live(source, temp, progress, cancel)
        problems = check_file(temp)
        if problems:
            return problems
        os.chmod(temp, 0o600)
        fsync_path(temp)
        os.replace(temp, final)
        fsync_path(folder)
        return []
    finally:
        for leftover in (temp, *(Path(f"{temp}{s}") for s in ("-journal", "-wal", "-shm"))):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def rewrite_backup(backup_path: str | Path, edit: Callable[[Path], None]) -> BackupInfo:
    """Rewrite one backup in place, written as backups are: ``edit(work_file)`` changes a private
    copy, which is then compacted (``VACUUM INTO``: no free pages, no leftover text), checked with
    ``integrity_check``, made mode 0600, flushed and renamed over the backup. On any failure the
    backup is left as it was and ``BackupError`` says why."""
    backup_path = Path(backup_path).expanduser()
    if not backup_path.is_file():
        raise FileMissing(backup_path, "no such backup file")
    folder = backup_path.parent
    work = folder / f".{backup_path.name}.work{PARTIAL}-{os.getpid()}"
    temp = folder / f".{backup_path.name}{PARTIAL}-{os.getpid()}"
    try:
        _vacuum_into(ro_uri(backup_path, immutable=True), work)
        edit(work)
        _vacuum_into(str(work), temp)
        problems = check_file(temp)
        if problems:
            raise BackupError(f"{backup_path}: the rewritten copy failed its integrity check "
                              f"({'; '.join(problems[:3])}); the backup was left as it was")
        os.chmod(temp, 0o600)
        fsync_path(temp)
        os.replace(temp, backup_path)
        fsync_path(folder)
    except (OSError, sqlite3.Error) as exc:
        raise BackupError(f"{backup_path}: could not rewrite the backup ({exc}); it was left as it was") from exc
    finally:
        for leftover in (work, temp):
            for suffix in ("", "-journal", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    Path(f"{leftover}{suffix}").unlink()
    return _info(backup_path)


def _vacuum_into(source: str, target: Path) -> None:
    conn = sqlite3.connect(source, uri=True, isolation_level=None)
    try:
        conn.execute("VACUUM INTO ?", (str(target),))
    finally:
        conn.close()


def _info(path: Path) -> BackupInfo:
    match = _NAME.match(path.name)
    if not match:
        raise BackupError(f"{path}: not a backup file name (expected <YYYYMMDDTHHMMSSZ>.site.db)")
    created = datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return BackupInfo(path, created, path.stat().st_size, path.parent.parent.name, path.parent.name,
                      bool(match.group(3)))


def list_backups(path: str | Path, dest_dir: str | Path | None = None, *,
                 config: Config | None = None) -> list[BackupInfo]:
    """Backups of the database ``path``, newest first (the file itself need not exist any more).

    Only regular files named like a backup count: links and anything else in the folder do not.
    """
    folder = backup_folder(path, dest_dir, config)
    if folder.is_symlink() or not folder.is_dir():
        return []
    found = [_info(p) for p in folder.iterdir() if _NAME.match(p.name) and stat.S_ISREG(os.lstat(p).st_mode)]
    return sorted(found, key=_order, reverse=True)


def _order(backup: BackupInfo) -> tuple[datetime, int]:
    """Time, then the ``-N`` suffix of backups made within the same second."""
    match = _NAME.match(backup.path.name)
    return backup.created, int(match.group(2) or 1) if match else 0


def backups_to_keep(backups: list[BackupInfo], keep_last: int, keep_daily: int, keep_weekly: int,
                    now: datetime | None = None, keep_before_restore: int | None = None) -> set[Path]:
    """The rotation rule: the newest ``keep_last``, plus the newest of each recent day and week;
    of the copies restores set aside, the newest ``keep_before_restore`` (``None``: all).

    The newest backup is always kept, whatever the settings (a rotation never leaves none).
    """
    now = now or datetime.now(UTC)
    regular = sorted((b for b in backups if not b.before_restore), key=_order, reverse=True)
    aside = sorted((b for b in backups if b.before_restore), key=_order, reverse=True)
    keep = {b.path for b in regular[:max(1, keep_last)]}
    keep |= {b.path for b in (aside if keep_before_restore is None else aside[:max(1, keep_before_restore)])}
    days: set = set()
    weeks: set = set()
    for b in regular:
        day = b.created.date()
        if day not in days and now - b.created < timedelta(days=keep_daily) and len(days) < keep_daily:
            days.add(day)
            keep.add(b.path)
        week = b.created.isocalendar()[:2]
        if week not in weeks and now - b.created < timedelta(weeks=keep_weekly) and len(weeks) < keep_weekly:
            weeks.add(week)
            keep.add(b.path)
    return keep


def rotate_backups(path: str | Path, dest_dir: str | Path | None = None, *, config: Config | None = None,
                   now: datetime | None = None) -> list[Path]:
    """Delete backups of ``path`` that the rotation rule no longer keeps; returns them."""
    config = config or Config.load()
    backups = list_backups(path, dest_dir, config=config)
    keep = backups_to_keep(backups, *(config.backup_setting(k).value for k in ("keep_last", "keep_daily",
                                                                               "keep_weekly")), now=now,
                           keep_before_restore=config.backup_setting("keep_before_restore").value)
    return _remove([b for b in backups if b.path not in keep])


def rotate_before_restore(path: str | Path, *, config: Config | None = None) -> list[Path]:
    """Delete the oldest copies restores set aside of ``path`` beyond ``[backup]
    keep_before_restore`` (the newest are kept); returns them."""
    config = config or Config.load()
    keep = max(1, config.backup_setting("keep_before_restore").value)
    aside = sorted((b for b in list_backups(path, config=config) if b.before_restore), key=_order, reverse=True)
    return _remove(aside[keep:])


def _remove(backups: list[BackupInfo]) -> list[Path]:
    """Delete backups (with the ``-wal`` a damaged file's kept bytes may have beside them)."""
    removed = []
    for b in backups:
        with contextlib.suppress(FileNotFoundError):
            b.path.unlink()
            removed.append(b.path)
        with contextlib.suppress(FileNotFoundError):
            Path(f"{b.path}-wal").unlink()
    return removed


def run(ctx: JobContext) -> Outcome:
    """The ``backup`` job: one backup of ``ctx.path``, then rotation."""
    from .maintenance.context import Outcome

    before = {b.path for b in list_backups(ctx.path, config=ctx.config)}
    info = create_backup(ctx.path, config=ctx.config, progress=ctx.progress, cancel=ctx.cancel, rotate=False)
    removed = rotate_backups(ctx.path, config=ctx.config)
    kept = len(before | {info.path}) - len(removed)
    return Outcome({"bytes": info.size, "rotated_away": len(removed), "backups": kept},
                   f"backed up to {info.path} ({info.size / 1e6:.1f} MB, integrity ok); "
                   f"{len(removed)} old backup(s) rotated away, {kept} kept")
