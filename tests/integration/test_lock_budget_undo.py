"""Restoring many memories from the trash, and undoing (and redoing) a large delete or bulk edit,
never lock an agent out, and stay one step.

A real agent process whose busy timeout is 1 s writes continuously while 100,000 memories come
back from the trash, a 100,000-memory delete is undone and a 100,000-memory bulk edit is undone
(each took the write lock for seconds in one transaction): the agent sees no "database is
locked", and the result is whole — every memory back exactly, one journal step, its redo working.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.operations import edits, journal
from ora_desktop.core.operations.undo import redo, undo
from tests.integration import impatient_agent
from tests.integration.test_lock_budget import big_file, one
from tests.unit.test_operations_undo import rows

pytestmark = pytest.mark.slow  # real processes, 100,000 rows

COUNT = 100_000
CHOSEN = [f"m-{i}" for i in range(COUNT)]


def every_row(db: Path) -> list[tuple]:
    return [r for r in rows(db) if r[0].startswith("m-")]


@pytest.fixture
def start_agent(tmp_path: Path):
    """start(db) -> stop-and-report: an impatient agent writing to ``db`` until stopped."""
    running: list = []

    def start(db: Path):
        report, stop = tmp_path / f"agent{len(running)}.json", tmp_path / f"stop{len(running)}"
        process = impatient_agent.start(db, f"agent{len(running)}", report, stop)
        running.append((process, stop))
        impatient_agent.wait_ready(process, report)
        return lambda: impatient_agent.finish(process, report, stop)

    yield start
    for process, stop in running:
        stop.touch()
        process.wait(timeout=60)


@pytest.fixture
def db(ora_home: Path) -> Path:
    return big_file(ora_home / "sites" / "s" / "ora.site.db", rows=COUNT + 20_000)


def test_restoring_100000_memories_from_the_trash_never_locks_out_an_agent(db: Path, start_agent) -> None:
    before = every_row(db)
    with open_store(db) as store:
        deleted = edits.delete(store, CHOSEN)
        finish = start_agent(db)
        restored = edits.restore(store, deleted.trash_ids)
        seen = finish()
        assert seen["locked"] == 0, seen
        assert len(restored.restored) == COUNT and restored.entry is not None
        assert every_row(db) == before and one(db, "SELECT count(*) FROM ora_desktop_trash") == 0
        assert journal.entries(store, limit=1)[0].id == restored.entry  # one step: its undo trashes them again
        undo(store)
    assert one(db, "SELECT count(*) FROM memories WHERE id LIKE 'm-%'") == 20_000


def test_undoing_and_redoing_a_100000_memory_delete_never_locks_out_an_agent(db: Path, start_agent) -> None:
    before = every_row(db)
    with open_store(db) as store:
        deleted = edits.delete(store, CHOSEN)
        finish = start_agent(db)
        undone = undo(store)
        seen = finish()
        assert seen["locked"] == 0, seen
        assert undone.change.added == frozenset(CHOSEN) and undone.entry.id == deleted.entry
        assert every_row(db) == before and one(db, "SELECT count(*) FROM ora_desktop_trash") == 0
        assert [e.id for e in journal.redoable(store)] == [deleted.entry]  # one step went to redo
        finish = start_agent(db)
        redone = redo(store)
        seen = finish()
        assert seen["locked"] == 0, seen
        assert redone.change.removed == frozenset(CHOSEN)
        assert one(db, "SELECT count(*) FROM memories WHERE id LIKE 'm-%'") == 20_000
        assert [e.id for e in journal.entries(store, limit=1)] == [deleted.entry]


def test_undoing_a_100000_memory_bulk_edit_never_locks_out_an_agent(db: Path, start_agent) -> None:
    with open_store(db) as store:
        before = store.versions(CHOSEN)
        edited = edits.bulk_edit(store, CHOSEN, {"importance": 9, "content": "edited in bulk"})
        after = every_row(db)
        finish = start_agent(db)
        undone = undo(store)
        seen = finish()
        assert seen["locked"] == 0, seen
        assert undone.change.changed == frozenset(CHOSEN) and undone.entry.id == edited.entry
        assert store.versions(CHOSEN) == before  # every column of every memory back as it was
        assert journal.entries(store) == [] and [e.id for e in journal.redoable(store)] == [edited.entry]
        redo(store)
        assert every_row(db) == after
