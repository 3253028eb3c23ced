"""An agent process for integration tests: ``python agent_writer.py DB NAME LOG STOP [PER_SECOND]``.

The seed's INSERT in its own ``BEGIN IMMEDIATE`` transactions (a few hundred commits a second),
each committed id (``NAME-n``) appended to LOG only after its COMMIT returned, until the file STOP
exists. A lock it cannot get within its busy timeout is retried, as an agent's write path does;
nothing is logged for a write that did not commit. Standard library only.

With PER_SECOND (:func:`start_reopening`) it writes as short-lived agent processes do: open,
insert one row, close, PER_SECOND times a second, ids ``NAME-000000`` upwards in order. Its
close is the last one when no one else has the file open: SQLite then checkpoints the -wal into
the file and deletes -wal and -shm, so the next write rewrites pages of the file itself.
"""

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def start(db: Path, name: str, log: Path, stop: Path) -> subprocess.Popen:
    """Start one writer process on ``db``."""
    return subprocess.Popen([sys.executable, __file__, str(db), name, str(log), str(stop)])


def start_reopening(db: Path, name: str, log: Path, stop: Path, per_second: float = 10) -> subprocess.Popen:
    """Start one writer that opens, inserts one row and closes ``per_second`` times a second."""
    return subprocess.Popen([sys.executable, __file__, str(db), name, str(log), str(stop), str(per_second)])


def reopening(path: str, name: str, log: str, stop: str, per_second: float) -> None:
    out = open(log, "a", buffering=1)  # noqa: SIM115 (kept open for the life of the process)
    n = 0
    while not os.path.exists(stop):
        started = time.monotonic()
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                         "VALUES (?, 'an agent wrote this', 'fact', 5, datetime('now'), datetime('now'))",
                         (f"{name}-{n:06d}",))
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            continue
        finally:
            conn.close()
        out.write(f"{name}-{n:06d}\n")
        n += 1
        time.sleep(max(0.0, 1 / per_second - (time.monotonic() - started)))


def main(path: str, name: str, log: str, stop: str) -> None:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    out = open(log, "a", buffering=1)  # noqa: SIM115 (kept open for the life of the process)
    n = 0
    while not os.path.exists(stop):
        memory_id = f"{name}-{n}"
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                         "VALUES (?, 'an agent wrote this', 'fact', 5, datetime('now'), datetime('now'))",
                         (memory_id,))
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            continue
        out.write(memory_id + "\n")
        n += 1
        time.sleep(0.003)


if __name__ == "__main__":
    if len(sys.argv) > 5:
        reopening(*sys.argv[1:5], float(sys.argv[5]))
    else:
        main(*sys.argv[1:5])
