"""An undo in chunks whose process is killed part-way never leaves a silently half-undone file.

A real process undoes a 3,000-memory delete in chunks and is killed (SIGKILL) after a few of them:
while it ran, another process's undo was refused; afterwards the file says a step stopped
part-way (on opening, ``run check``, ``undo --list``), and the next ``ora-desktop undo`` (or
``run check --repair``) takes back what the killed one wrote, says so, and the step is undone
whole (one step, redo working).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import DatabaseLocked, open_store
from ora_desktop.core.operations import chunked_undo, edits, journal
from ora_desktop.core.operations.undo import redo, undo
from tests.unit.test_operations_undo import rows

ROOT = Path(__file__).resolve().parents[2]
IDS = [f"m{i:04d}" for i in range(3000)]
# Chunks of 300 rows, 0.3 s apart: slow enough to be killed part-way.
SLOW_UNDO = """
import sys
from ora_desktop.core import chunks, open_store
from ora_desktop.core.operations.undo import undo
chunks.GAP, chunks.SMALLEST, chunks.LARGEST = 0.3, 300, 300
with open_store(sys.argv[1]) as store:
    undo(store)
"""


def parts_written(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'undo.pending.%'").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("finder", ["next undo", "check --repair"])
def test_a_killed_undo_is_taken_back_by_the_next_and_the_step_undone_whole(seed_db: Callable[..., Path],
                                                                         finder: str) -> None:
    db = seed_db([*[(i, f"memory {i}", "fact", 5) for i in IDS], ("keep", "links", "fact", 5)])
    with sqlite3.connect(db) as conn:
        conn.execute("""UPDATE memories SET related_to = '["m0001", "m2999"]' WHERE id = 'keep'""")
    before = rows(db)
    with open_store(db) as store:
        deleted = edits.delete(store, IDS)
        after = rows(db)
    process = subprocess.Popen([sys.executable, "-c", SLOW_UNDO, str(db)], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while parts_written(db) < 3:
            assert process.poll() is None and time.monotonic() < deadline, "the undo ended before it was killed"
            time.sleep(0.02)
        with open_store(db) as store, pytest.raises(DatabaseLocked, match="running on this file"):
            undo(store)  # one step at a time: refused while the other process takes it back
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    half = rows(db)
    assert len(after) < len(half) < len(before)  # what the killed undo left: part of the memories back
    with open_store(db) as store:
        mark = chunked_undo.stopped(store)
        assert mark is not None and mark["verb"] == "undo" and mark["label"] == "delete 3,000 memories"
        assert [(e.id, e.undone) for e in journal.entries(store, limit=1)] == [(deleted.entry, False)]
        assert any("“undo delete 3,000 memories” was written in chunks and has not finished" in w
                   for w in store.warnings)  # (what the window says on opening the file)
    checked = ora("run", "check", "--db", db)
    assert "“undo delete 3,000 memories” stopped part-way (its process is gone)" in checked
    listed = ora("undo", "--list", "--db", db)
    assert "“undo delete 3,000 memories” (in chunks, process" in listed and "has not finished" in listed
    if finder == "check --repair":
        repaired = ora("run", "check", "--repair", "--db", db)
        assert "repaired: 1 undos, redos or restores stopped part-way" in repaired, repaired
        assert rows(db) == after  # as before the killed undo
    said = ora("undo", "--db", db)  # a person's next undo, from a terminal
    taken_back = "had stopped part-way (its process ended); what it had written was taken back" in said
    assert taken_back == (finder == "next undo") and "undid “delete 3,000 memories”" in said
    assert rows(db) == before
    with open_store(db) as store:
        assert store.trash_count() == 0 and chunked_undo.stopped(store) is None
        assert [e.id for e in journal.redoable(store)] == [deleted.entry]  # one step, now redoable
        redo(store)
        assert rows(db) == after


def ora(*argv: object) -> str:
    result = subprocess.run([sys.executable, "-m", "ora_desktop", *map(str, argv)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout
