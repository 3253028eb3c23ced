"""Helpers for tests of reading another program's commits from the log: an agent's commit from
a second process, and the wal-index header put back to replay a commit not yet published."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def agent(path: Path, *statements: str, params: list | None = None) -> None:
    """Commit ``statements`` in one transaction from another process, as an agent does."""
    code = ("import json, sqlite3, sys\n"
            "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "conn.execute('BEGIN IMMEDIATE')\n"
            "for sql, args in json.loads(sys.argv[2]):\n"
            "    conn.execute(sql, args)\n"
            "conn.execute('COMMIT')\n")
    plan = [[sql, (params or [[]] * len(statements))[i]] for i, sql in enumerate(statements)]
    subprocess.run([sys.executable, "-c", code, str(path), json.dumps(plan)], check=True)


def index_header(path: Path) -> bytes:
    """The start of the file's ``-shm``: the wal-index header's two copies and the checkpoint info."""
    from ora_desktop.core.fileheader import read_at

    return read_at(f"{path}-shm", 136, 0)


def write_index_header(path: Path, header: bytes) -> None:
    """Put ``header`` at the start of the file's ``-shm`` from another process (this one keeps its
    descriptors: closing one would drop its locks)."""
    code = ("import os, sys\n"
            "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
            "os.pwrite(fd, bytes.fromhex(sys.argv[2]), 0)\n"
            "os.close(fd)\n")
    subprocess.run([sys.executable, "-c", code, f"{path}-shm", header.hex()], check=True)


def checkpoint(path: Path, mode: str = "PASSIVE") -> tuple[int, int, int]:
    """Run ``wal_checkpoint(mode)`` from another process: (busy, frames in the log, frames copied)."""
    code = ("import sqlite3, sys\n"
            "print(*sqlite3.connect(sys.argv[1]).execute(f'PRAGMA wal_checkpoint({sys.argv[2]})').fetchone())\n")
    out = subprocess.run([sys.executable, "-c", code, str(path), mode], check=True, capture_output=True, text=True)
    busy, frames, copied = map(int, out.stdout.split())
    return busy, frames, copied
