"""Read a database file's bytes without ever closing a descriptor of it.

POSIX releases *every* lock a process holds on a file when *any* descriptor of that file is
closed (sqlite.org/howtocorrupt.html §2.2). A read that opens and closes a ``.site.db`` (or its
``-wal``/``-shm``/``-journal``) while a store of this process has it open silently drops
SQLite's locks: another process then believes it is the last user, checkpoints and deletes the
WAL under our connections, and our later writes go into deleted files. ``mmap`` is no way out:
it duplicates the descriptor and closes the duplicate when unmapped.

So every byte this engine reads from such a file goes through this module: one descriptor per
file (keyed by device and inode), opened on first use, kept open for the life of the process,
read with ``pread``. Only descriptors of files that no longer exist (unlinked or replaced) are
closed, which cannot affect the current file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

CHUNK = 1 << 22  # bytes per read of a whole-file scan or copy

_FDS: dict[tuple[int, int], int] = {}
_SPARE: list[int] = []  # opened in a race with another thread for the same file: never closed
_LOCK = threading.Lock()


def read_header(path: str | Path, size: int = 100) -> bytes:
    """The first ``size`` bytes of ``path`` (raises ``OSError`` like ``open`` would)."""
    return read_at(path, size, 0)


def read_at(path: str | Path, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes of ``path`` from ``offset`` (fewer at the end of the file)."""
    if not hasattr(os, "pread"):  # Windows: no POSIX lock semantics to protect
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read(size)
    return _pread_all(descriptor(path), size, offset)


def chunks(path: str | Path, size: int = CHUNK, overlap: int = 0) -> Iterator[bytes]:
    """The bytes of ``path`` in pieces of ``size`` (the last one shorter), each starting
    ``overlap`` bytes before the previous one ended: a search for anything up to ``overlap + 1``
    bytes long misses nothing that straddles two pieces. One file throughout, even if the path
    is replaced meanwhile."""
    if not hasattr(os, "pread"):
        with open(path, "rb") as handle:
            yield from _pieces(lambda n, at: (handle.seek(at), handle.read(n))[1], size, overlap)
        return
    fd = descriptor(path)
    yield from _pieces(lambda n, at: _pread_all(fd, n, at), size, overlap)


def _pieces(read: Callable[[int, int], bytes], size: int, overlap: int) -> Iterator[bytes]:
    offset = 0
    while True:
        data = read(size, offset)
        if data:
            yield data
        if len(data) < size:
            return
        offset += max(1, size - overlap)


def copy_into(path: str | Path, out_fd: int) -> int:
    """Append every byte of ``path`` to the open descriptor ``out_fd``; returns how many."""
    total = 0
    for data in chunks(path):
        view = memoryview(data)
        while view:
            view = view[os.write(out_fd, view):]
        total += len(data)
    return total


def descriptor(path: str | Path) -> int:
    """This process's kept-open read descriptor of ``path`` (opened on first use)."""
    st = os.stat(path)
    key = (st.st_dev, st.st_ino)
    with _LOCK:
        fd = _FDS.get(key)
        if fd is not None:
            return fd
        _forget_gone()
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        opened = os.fstat(fd)
        real = (opened.st_dev, opened.st_ino)  # the path may have been replaced since the stat
        if real in _FDS:
            _SPARE.append(fd)  # closing it would drop the locks of connections to that file
            return _FDS[real]
        _FDS[real] = fd
        return fd


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    parts = []
    while size > 0:
        data = os.pread(fd, size, offset)
        if not data:
            break
        parts.append(data)
        size -= len(data)
        offset += len(data)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def forget_gone() -> None:
    """Close the kept descriptors of files that were deleted or replaced since."""
    with _LOCK:
        _forget_gone()


def _forget_gone() -> None:
    for key, fd in list(_FDS.items()):
        try:
            gone = os.fstat(fd).st_nlink == 0
        except OSError:
            gone = True
        if gone:
            del _FDS[key]
            try:
                os.close(fd)
            except OSError:
                pass
