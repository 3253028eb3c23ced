"""Reading a file's bytes never drops this process's POSIX locks on it.

A lock taken here (as SQLite takes its own) must still bind another process after each of the
engine's byte readers ran on the file: a reader that opened and closed its own descriptor of the
file would have released it (POSIX drops all of a process's locks on a file at any close).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import fileheader, residue, wallog
from ora_desktop.core.private import touch_private

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks")

PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("free")
except OSError:
    print("held")
"""


def held_by_us(path: Path) -> bool:
    """Whether another process finds ``path`` locked."""
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "held"


def _wal(path: Path) -> None:
    db = str(path)[: -len("-wal")]
    wallog.rows_since(db, None, whole=True)
    wallog.cursor_now(db)


def _copy(path: Path) -> None:
    fd = os.open(path.with_name("copy.bin"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        assert fileheader.copy_into(path, fd) == path.stat().st_size
    finally:
        os.close(fd)


READERS: dict[str, Callable[[Path], None]] = {
    "header": lambda p: fileheader.read_header(p, 100),
    "byte-scan": lambda p: residue.file_holds(p, [b"needle in the file"]),
    "wal-reader": _wal,
    "byte-copy": _copy,
    "touch-private": touch_private,
}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_reader_leaves_our_locks_in_place(reader: str, tmp_path: Path) -> None:
    path = tmp_path / "ora.site.db-wal"
    path.write_bytes(b"\x37\x7f\x06\x82" + bytes(28) + b"a needle in the file" * 5000)
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        assert held_by_us(path)
        READERS[reader](path)
        assert held_by_us(path), f"the {reader} closed a descriptor of the file and dropped our lock"
    finally:
        os.close(fd)


def test_a_scan_finds_a_needle_that_straddles_two_reads(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    needle = b"the-purged-secret-text"
    cut = fileheader.CHUNK - 7
    path.write_bytes(bytes(cut) + needle + bytes(100))
    assert residue.file_holds(path, [needle])
    assert not residue.file_holds(path, [b"something-never-written"])


def test_a_replaced_file_is_read_anew_and_its_old_descriptor_closed(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    path.write_bytes(b"first version")
    assert fileheader.read_header(path, 5) == b"first"
    replacement = tmp_path / "g.db"
    replacement.write_bytes(b"second version")
    os.replace(replacement, path)
    assert fileheader.read_header(path, 6) == b"second"
    fileheader.forget_gone()
    assert not [link for link in _links() if link.startswith(str(path)) and link.endswith("(deleted)")]


def _links() -> list[str]:
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the descriptor listdir itself used
            pass
    return out
