"""An undo in chunks whose process is killed part-way never leaves a silently half-undone file.

A real process undoes a 3,000-memory delete in chunks and is killed (SIGKILL) after a few of them:
while it ran, another process's undo was refused; afterwards the file says a step stopped
part-way (on opening, ``run check``, ``undo --list``), and the next ``ora-desktop undo`` (or
``run check --repair``) takes back what the killed one wrote, says so, and the step is undone
whole (one step, redo working).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import DatabaseLocked, open_store
from ora_desktop.core.operations import chunked_undo, edits, journal
from ora_desktop.core.operations.undo import redo, undo
from tests.integration import stopped_step
from tests.unit.test_operations_undo import rows

IDS = [f"m{i:04d}" for i in range(3000)]


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
    process = stopped_step.start_undo(db, len(IDS))
    try:
        with open_store(db) as store, pytest.raises(DatabaseLocked, match="running on this file"):
            undo(store)  # one step at a time: refused while the other process takes it back
    finally:
        stopped_step.kill(process)
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


def test_another_users_running_undo_is_never_taken_back_and_a_killed_one_is(seed_db: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """Another OS user (its own data folder, so its own lock files) undoes a delete in chunks. While
    its process runs, this user's undo is refused and its chunks are left alone, and ``run check``
    does not call it stopped; once the process is killed, the next undo takes back what it wrote
    and undoes the step whole."""
    db = seed_db([(i, f"memory {i}", "fact", 5) for i in IDS])
    before = rows(db)
    with open_store(db) as store:
        edits.delete(store, IDS)
    process = stopped_step.start_undo(db, len(IDS), gap=1.0, parts=2,
                                      env={"XDG_DATA_HOME": str(tmp_path / "another-user")})
    try:
        with open_store(db) as store:
            with pytest.raises(DatabaseLocked, match=f"running on this file.*process {process.pid}"):
                undo(store)
            assert stopped_step.parts_written(db) >= 2 and process.poll() is None  # its chunks kept; it runs on
            assert chunked_undo.stopped_elsewhere(store) is None
    finally:
        stopped_step.kill(process)
    with open_store(db) as store:
        assert chunked_undo.stopped_elsewhere(store) is not None
        done = undo(store)
    assert done.note is not None and "had stopped part-way (its process ended)" in done.note
    assert rows(db) == before


def ora(*argv: object) -> str:
    result = subprocess.run([sys.executable, "-m", "ora_desktop", *map(str, argv)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(stopped_step.ROOT)}, timeout=120,
                            cwd=stopped_step.ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout
