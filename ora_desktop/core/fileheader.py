"""Read a database file's first bytes without ever closing a descriptor of it.

POSIX releases *every* lock a process holds on a file when *any* descriptor of that file is
closed (sqlite.org/howtocorrupt.html §2.2). A header sniff that opens and closes a ``.site.db``
while a store of this process has it open silently drops SQLite's locks: another process then
believes it is the last user, checkpoints and deletes the WAL under our connections, and we read
stale data or fail with "disk I/O error". So the descriptor used for sniffing is kept open for
the life of the process (one per file) and read with ``pread``; only descriptors of files that no
longer exist (unlinked or replaced) are closed, which cannot affect the current file.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_FDS: dict[tuple[int, int], int] = {}
_LOCK = threading.Lock()


def read_header(path: str | Path, size: int = 100) -> bytes:
    """The first ``size`` bytes of ``path`` (raises ``OSError`` like ``open`` would)."""
    if not hasattr(os, "pread"):  # Windows: no POSIX lock semantics to protect
        with open(path, "rb") as handle:
            return handle.read(size)
    st = os.stat(path)
    key = (st.st_dev, st.st_ino)
    with _LOCK:
        fd = _FDS.get(key)
        if fd is None:
            _forget_gone()
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            _FDS[key] = fd
    return os.pread(fd, size, 0)


def _forget_gone() -> None:
    """Close descriptors whose file was unlinked (a replaced or deleted database)."""
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
