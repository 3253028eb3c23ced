"""An agent that gives up quickly: ``python impatient_agent.py DB NAME REPORT STOP``.

It writes as agents do (the seed's INSERT in ``BEGIN IMMEDIATE`` transactions), with a busy
timeout of 1 s instead of SQLite's usual 5 s, and never retries: each "database is locked" is
counted. When the file STOP exists it writes a JSON report to REPORT — commits, locked errors,
the longest write (ms, waiting for the lock included) — and exits. ``REPORT.ready`` appears after
its first commit. Standard library only.
"""

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

BUSY_TIMEOUT_S = 1.0


def start(db: Path, name: str, report: Path, stop: Path) -> subprocess.Popen:
    """Start one impatient writer on ``db``."""
    return subprocess.Popen([sys.executable, __file__, str(db), name, str(report), str(stop)])


def wait_ready(process: subprocess.Popen, report: Path, timeout: float = 60) -> None:
    """Return once the writer has committed once (raise if it died or took too long)."""
    deadline = time.monotonic() + timeout
    while not Path(f"{report}.ready").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the agent did not start (exit {process.poll()})")
        time.sleep(0.02)


def finish(process: subprocess.Popen, report: Path, stop: Path) -> dict:
    """Stop the writer and return its report."""
    stop.touch()
    process.wait(timeout=60)
    return json.loads(report.read_text())


def main(path: str, name: str, report: str, stop: str) -> None:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    commits, locked, longest, errors = 0, 0, 0.0, []
    while not os.path.exists(stop):
        start = time.perf_counter()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                         "VALUES (?, 'an agent wrote this', 'fact', 5, datetime('now'), datetime('now'))",
                         (f"{name}-{commits}",))
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            locked += 1
            errors.append(str(exc))
            continue
        finally:
            longest = max(longest, time.perf_counter() - start)
        commits += 1
        if commits == 1:
            Path(f"{report}.ready").touch()
        time.sleep(0.005)
    Path(report).write_text(json.dumps({"commits": commits, "locked": locked, "longest_ms": round(longest * 1000),
                                        "errors": errors[:5]}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
