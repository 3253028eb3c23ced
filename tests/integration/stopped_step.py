"""An undo in chunks run by a real second process, slowed so that it can be caught part-way: to
test what a running step and a killed one look like to every other process and face."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Undo the file's latest step in chunks of 50 rows (300 for 3,000 memories or more), GAP s apart.
SLOW_UNDO = """
import sys
from ora_desktop.core import chunks, open_store
from ora_desktop.core.operations.undo import undo
size = 300 if int(sys.argv[3]) >= 3000 else 50
chunks.GAP, chunks.SMALLEST, chunks.LARGEST = float(sys.argv[2]), size, size
chunks.new_sizer = lambda: chunks.Sizer(size=size)  # (the first chunk too)
with open_store(sys.argv[1]) as store:
    undo(store)
"""


def parts_written(path: Path) -> int:
    """How many chunks the step under way (or stopped) in ``path`` has recorded."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'undo.pending.%'").fetchone()[0]
    except sqlite3.OperationalError:  # (no such table yet)
        return 0
    finally:
        conn.close()


def start_undo(path: Path, memories: int, gap: float = 0.3, parts: int = 3,
               env: Mapping[str, str] | None = None) -> subprocess.Popen:
    """Start ``undo`` of ``path``'s latest step (touching ``memories``) in another process, and
    return once it has written ``parts`` chunks (it is still running then). ``env``: more
    environment for it (another OS user's data folder, say)."""
    process = subprocess.Popen([sys.executable, "-c", SLOW_UNDO, str(path), str(gap), str(memories)], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    deadline = time.monotonic() + 60
    while parts_written(path) < parts:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait(timeout=30)
            raise AssertionError("the undo ended before it was caught part-way")
        time.sleep(0.02)
    return process


def kill(process: subprocess.Popen) -> None:
    """SIGKILL ``process`` and wait for it to be gone."""
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def leave_stopped_undo(path: Path, memories: int) -> None:
    """Leave ``path`` with an undo of its latest step stopped part-way: its process killed."""
    kill(start_undo(path, memories, parts=2))
