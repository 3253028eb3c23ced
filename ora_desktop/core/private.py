"""The app's own files: private by default (0600 files, 0700 folders), and never through a link.

Everything Ora Desktop creates for itself — search sidecars, the jobs history, locks, logs,
backups, config folders — may hold the full text of memories, so it is readable by its owner
only. A symbolic link inside one of our folders (placed there by accident or by someone else)
would make us write into, chmod or append to a file outside them: such links are refused with
:class:`UnsafePath`, and files are opened with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import logging.handlers
import os
import stat
from pathlib import Path
from typing import Any

import filelock

from .errors import OraError

FILE_MODE = 0o600
DIR_MODE = 0o700
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafePath(OraError, OSError):
    """One of the app's own paths is a symbolic link (or not the kind of file expected).

    Also an ``OSError``: code that copes with a folder it cannot write copes with this the same way.
    """


def refuse_link(path: str | Path, what: str = "file") -> Path:
    """Raise :class:`UnsafePath` if ``path`` exists as a symbolic link; returns it as a ``Path``."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return path
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"{path}: refused, this {what} is a symbolic link (to {os.readlink(path)}); "
                         "Ora Desktop does not follow links in its own folders — remove the link")
    return path


def private_dir(base: str | Path, *parts: str) -> Path:
    """``base/part/...`` created as needed with mode 0700, refusing a link at any of these levels.

    ``base`` is one of our folders (cache, data, log, config, backup root); the folders above it
    are the user's business and are not checked. Existing folders are made 0700 too (they may
    predate this rule).
    """
    folder = Path(base)
    for level in (None, *parts):
        if level is not None:
            folder = folder / level
        refuse_link(folder, "folder")
        if level is None:
            make_dirs(folder)
        else:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, DIR_MODE)
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafePath(f"{folder}: refused, expected a folder here")
        if stat.S_IMODE(st.st_mode) != DIR_MODE:
            with contextlib.suppress(OSError):
                os.chmod(folder, DIR_MODE)
    return folder


def make_dirs(folder: str | Path) -> Path:
    """``mkdir -p`` where the folders we create are 0700 whatever the umask; existing ones are left
    as they are (they may be the user's). Returns ``folder`` as a ``Path``."""
    folder = Path(folder)
    missing = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(created, DIR_MODE)
            with contextlib.suppress(OSError):
                os.chmod(created, DIR_MODE)
    return folder


def open_private(path: str | Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    """``os.open`` with ``O_NOFOLLOW`` and mode 0600; a link gives :class:`UnsafePath`.

    A file that already existed with looser bits is tightened to 0600.
    """
    path = Path(path)
    try:
        fd = os.open(path, flags | NOFOLLOW | CLOEXEC, FILE_MODE)
    except OSError:
        if os.path.islink(path):
            refuse_link(path)
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{path}: refused, expected a regular file here")
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def touch_private(path: str | Path) -> Path:
    """Create ``path`` empty with mode 0600 (not through a link) if missing, before another
    library (SQLite, a writer) opens it; its missing folders are made 0700.

    An existing file is never opened — closing a descriptor of a database this process holds
    connections to would drop SQLite's POSIX locks — only checked (no link) and tightened to
    0600 by name. SQLite gives a database's ``-wal``/``-shm``/``-journal`` the mode of the
    database itself, so a database created this way keeps all its files private.
    """
    path = Path(path)
    make_dirs(path.parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, FILE_MODE)
    except FileExistsError:
        st = os.lstat(refuse_link(path))
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{path}: refused, expected a regular file here") from None
        if stat.S_IMODE(st.st_mode) & 0o077:
            with contextlib.suppress(OSError):
                os.chmod(path, FILE_MODE)
        return path
    try:
        os.fchmod(fd, FILE_MODE)  # a created file is ours: exactly 0600, whatever the umask took away
    finally:
        os.close(fd)  # just created (O_EXCL): no connection of ours can hold a lock on it
    return path


def private_lock(path: str | Path, **options: Any) -> filelock.FileLock:
    """A ``filelock.FileLock`` on ``path`` whose file is 0600 and whose missing folders are 0700
    (a link in its place is refused); ``options`` go to ``FileLock``."""
    path = refuse_link(path)
    make_dirs(path.parent)
    return filelock.FileLock(str(path), mode=FILE_MODE, **options)


def is_private(path: str | Path) -> bool:
    """Whether only the owner can read ``path`` (no group/other bits)."""
    return not stat.S_IMODE(os.stat(path).st_mode) & 0o077


class PrivateLogHandler(logging.handlers.RotatingFileHandler):
    """A rotating log file opened 0600 and never through a link (logs name files and memories)."""

    def _open(self):  # noqa: ANN202 (logging's own signature)
        fd = open_private(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        return os.fdopen(fd, self.mode, encoding=self.encoding, errors=self.errors)
