"""An agent process for integration tests: ``python agent_writer.py DB NAME LOG STOP``.

The seed's INSERT in its own ``BEGIN IMMEDIATE`` transactions (a few hundred commits a second),
each committed id (``NAME-n``) appended to LOG only after its COMMIT returned, until the file STOP
exists. A lock it cannot get within its busy timeout is retried, as an agent's write path does;
nothing is logged for a write that did not commit. Standard library only.
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
    main(*sys.argv[1:5])
