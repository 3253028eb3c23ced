"""Undo, redo and restores of many memories in short transactions (core/operations/chunked_undo.py).

Each stays one step whatever happens between its chunks: an agent's write to a memory a later
chunk would touch refuses the step and takes back the chunks already written (the file as before,
the step still there to undo); listeners hear the step once; links come back as in one
transaction.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import Change, ChangeKind, Conflict, DatabaseLocked, Store, open_store
from ora_desktop.core import chunks as chunks_module
from ora_desktop.core.operations import chunked_undo, edits, journal
from ora_desktop.core.operations.undo import redo, undo
from ora_desktop.core.rawsql import run_sql

MANY = [(f"m{i:04d}", f"memory {i}", "fact", 5) for i in range(1500)]
IDS = [m[0] for m in MANY]


def rows(path: Path, table: str = "memories") -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
    finally:
        conn.close()


def between_chunks(monkeypatch: pytest.MonkeyPatch, db: Path, sql: str, after: int = 1) -> None:
    """Another program runs ``sql`` in the gap after the ``after``-th chunk of the next write in chunks."""
    sleep, gaps = chunks_module.time.sleep, [0]

    def agent_writes(seconds: float) -> None:
        gaps[0] += 1
        if gaps[0] == after:
            with sqlite3.connect(db) as agent:
                agent.execute(sql)
            monkeypatch.setattr(chunks_module.time, "sleep", sleep)
        sleep(seconds)

    monkeypatch.setattr(chunks_module.time, "sleep", agent_writes)


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db([*MANY, ("keep", "links to two of them", "fact", 5)])
    with sqlite3.connect(path) as conn:
        conn.execute("""UPDATE memories SET related_to = '["m0001", "m1498"]', sync_status = 'synced'
                        WHERE id = 'keep'""")
    return path


def test_an_undo_of_a_bulk_edit_meeting_an_agents_edit_between_chunks_changes_nothing(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(db) as store:
        done = edits.bulk_edit(store, IDS, {"importance": 9})
        between_chunks(monkeypatch, db, "UPDATE memories SET content = 'the agent was here' WHERE id = 'm1499'")
        expected = [r if r[0] != "m1499" else (*r[:1], "the agent was here", *r[2:]) for r in rows(db)]
        chunks_module.new_sizer()
        with pytest.raises(Conflict, match="m1499.*was changed.*nothing undone.*taken back"):
            undo(store)
        assert chunks_module.last_sizer.chunks > 1  # (it did go in chunks)
        assert rows(db) == expected
        assert [(e.id, e.undone) for e in journal.entries(store, limit=1)] == [(done.entry, False)]  # still undoable
        assert chunked_undo.stopped(store) is None and rows(db, "ora_desktop_state") == [
            r for r in rows(db, "ora_desktop_state") if not r[0].startswith("undo.pending")]


def test_an_undo_of_a_delete_meeting_an_id_added_again_between_chunks_changes_nothing(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(db) as store:
        before = rows(db)
        done = edits.delete(store, IDS)
        trash = rows(db, "ora_desktop_trash")
        between_chunks(monkeypatch, db, "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                       "VALUES ('m1499', 'the agent again', 'fact', 5, datetime('now'), datetime('now'))")
        deleted = rows(db)
        with pytest.raises(Conflict, match="m1499.*was added again.*taken back"):
            undo(store)
        assert rows(db) == sorted([*deleted, *[r for r in rows(db) if r[0] == "m1499"]])
        assert len(rows(db)) == len(deleted) + 1 and rows(db, "ora_desktop_trash") == trash  # the trash as it was
        with sqlite3.connect(db) as agent:
            agent.execute("DELETE FROM memories WHERE id = 'm1499'")
        assert undo(store).entry.id == done.entry  # the same step, undone once the memory is out of the way
        assert rows(db) == before


def test_a_chunked_undo_and_redo_are_heard_once_each_with_their_ids(db: Path) -> None:
    heard: list[Change] = []
    with open_store(db) as store:
        edits.delete(store, IDS)
        store.subscribe(heard.append)
        undone = undo(store)
        assert [(c.kind, c.added, c.changed) for c in heard] == [(ChangeKind.UNDONE, frozenset(IDS),
                                                                   frozenset({"keep"}))]
        assert undone.change.added == frozenset(IDS)
        heard.clear()
        redo(store)
        assert [(c.kind, c.removed, c.changed) for c in heard] == [(ChangeKind.UNDONE, frozenset(IDS),
                                                                     frozenset({"keep"}))]


def test_restoring_many_from_the_trash_is_one_step_heard_once_with_links_back(db: Path) -> None:
    before = rows(db)
    heard: list[Change] = []
    with open_store(db) as store:
        deleted = edits.delete(store, IDS)
        store.subscribe(heard.append)
        chunks_module.new_sizer()
        restored = edits.restore(store, deleted.trash_ids)
        assert chunks_module.last_sizer.chunks > 1
        assert [r for r in rows(db) if r[0] != "keep"] == [r for r in before if r[0] != "keep"]
        assert store.get("keep").related_to == ("m0001", "m1498")  # its links back (as one restore puts them)
        assert set(restored.restored) == set(IDS) and restored.skipped == ()
        assert [(c.kind, c.added) for c in heard] == [(ChangeKind.RESTORED, frozenset(IDS))]
        assert journal.entries(store, limit=1)[0].id == restored.entry
        undo(store)  # one step: all of them back in the trash
        assert store.count() == 1 and store.trash_count() == len(IDS)


def test_a_restore_whose_trash_row_is_purged_between_chunks_puts_the_trash_back_as_it_was(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(db) as store:
        deleted = edits.delete(store, IDS)
        last = max(deleted.trash_ids)
        between_chunks(monkeypatch, db, f"DELETE FROM ora_desktop_trash WHERE id = {last}")
        memories = rows(db)
        trash = [r for r in rows(db, "ora_desktop_trash") if r[0] != last]
        entries = journal.entries(store)
        with pytest.raises(Conflict, match=f"trash row {last} is no longer in the trash.*nothing restored.*taken back"):
            edits.restore(store, deleted.trash_ids)
        assert rows(db) == memories
        assert rows(db, "ora_desktop_trash") == trash  # the same rows, ids, batch and times
        assert journal.entries(store) == entries and chunked_undo.stopped(store) is None


def test_a_step_begun_by_a_running_process_meanwhile_refuses_this_one_whole(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process's step (another OS user's: no lock of ours keeps it out) claims the file
    between this undo's look for a stopped step and its first chunk: the first chunk finds its
    mark, refuses, changes nothing, and leaves that step's mark as it is."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with open_store(db) as store:
            edits.delete(store, IDS)
            before = rows(db)
            mark = {"verb": "undo", "label": "bulk edit", "run": "theirs", "host": socket.gethostname(),
                    "pid": other.pid, "at": "2026-01-01 00:00:00"}
            looked = chunked_undo.recover

            def then_theirs_begins(store: Store) -> str | None:
                note = looked(store)
                with store.write():
                    run_sql(store, "INSERT INTO ora_desktop_state (key, value) VALUES ('undo.pending', ?)",
                            [json.dumps(mark)])
                return note

            monkeypatch.setattr(chunked_undo, "recover", then_theirs_begins)
            with pytest.raises(DatabaseLocked, match=f"running on this file.*process {other.pid}"):
                undo(store)
            assert rows(db) == before
            assert chunked_undo.stopped(store) == mark
    finally:
        other.kill()
        other.wait()
