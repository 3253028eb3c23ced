"""The write operations (core.operations.edits / merge) and their undo through the file's journal.

Every operation is checked for its effect, its ``Change`` (kind, exact ids, initiator) and that
its undo puts every row of ``memories`` back exactly as it was (every column, byte for byte).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ora_desktop.core import ChangeKind, Conflict, Initiator, NotFound, Store, open_store
from ora_desktop.core.operations import edits, journal
from ora_desktop.core.operations.merge import merge_duplicates, merge_into_new, unmerge
from ora_desktop.core.operations.undo import drop_latest, redo, undo

ROWS = [
    ("a", "Deploys go out from the main branch", "fact", 8),
    ("b", "The cache lives in src/lib/cache.py", "fact", 3),
    ("c", "User prefers short answers", "preference", 6),
    ("d", "Background: the site runs on one VPS", "context", 5),
]


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db(ROWS)
    with sqlite3.connect(path) as conn:  # links and a sync state an undo must give back exactly
        conn.execute("""UPDATE memories SET related_to = '["c"]', sync_status = 'synced',
                        updated_at = '2025-01-14T10:30:00.000Z' WHERE id = 'a'""")
        conn.execute("""UPDATE memories SET related_to = '["a"]', sync_status = 'local_only' WHERE id = 'c'""")
        conn.execute("UPDATE memories SET health_score = 0.123456789012345 WHERE id = 'b'")
    return path


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with open_store(db) as s:
        yield s


def rows(path: Path) -> list[tuple]:
    """Every column of every memory, as stored."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


def undone(store: Store, db: Path, before: list[tuple]) -> None:
    """Undo the latest operation and check the rows are back exactly; then redo it (the rows read
    as the operation left them) and undo it again."""
    after = rows(db)
    undo(store)
    assert rows(db) == before
    redo(store)
    assert rows(db) == after
    undo(store)
    assert rows(db) == before


def test_edit_changes_one_row_and_its_undo_restores_it_exactly(store: Store, db: Path) -> None:
    before = rows(db)
    done = edits.edit(store, "a", {"content": "Deploys go out from release branches", "importance": 9})
    assert done.memory.content.startswith("Deploys go out from release") and done.memory.sync_status == "pending"
    assert (done.change.changed, done.change.added, done.change.removed) == ({"a"}, set(), set())
    assert done.change.kind is ChangeKind.EDITED and done.change.initiator is Initiator.USER
    assert not done.change.membership_changed  # a view repaints row a, no key reload
    undone(store, db, before)  # updated_at and sync_status 'synced' back too


def test_bulk_edit_and_undo_give_each_memory_its_own_values_back(store: Store, db: Path) -> None:
    before = rows(db)
    done = edits.bulk_edit(store, ["a", "b", "c"], {"importance": 1, "type": "context"})
    assert done.change.changed == {"a", "b", "c"} and not done.change.membership_changed
    assert [r[3] for r in rows(db)[:3]] == [1, 1, 1]
    undone(store, db, before)


def test_delete_returns_its_batch_and_undo_brings_rows_and_links_back(store: Store, db: Path) -> None:
    before = rows(db)
    done = edits.delete(store, ["c"], "tidy")
    assert done.change.removed == {"c"} and done.change.changed == {"a"}  # a's link to c went with it
    assert done.change.kind is ChangeKind.DELETED and done.change.membership_changed
    assert [d.memory.id for d in store.trash(batch=done.batch)] == ["c"] and len(done.trash_ids) == 1
    undone(store, db, before)
    assert store.trash_count() == 0


def test_store_delete_returns_the_trash_batch_with_the_records(store: Store) -> None:
    removed = store.delete(["b", "d"], "gone")
    assert sorted(m.id for m in removed) == ["b", "d"] and removed.count == 2
    assert {d.memory.id for d in store.trash(batch=removed.batch)} == {"b", "d"}
    assert removed.change.removed == {"b", "d"}
    assert not hasattr(store, "last_trash_batch")


def test_restore_from_the_trash_and_its_undo(store: Store, db: Path) -> None:
    deleted = edits.delete(store, ["b"], "tidy", journal_it=False)
    before = rows(db)
    done = edits.restore(store, deleted.trash_ids)
    assert done.restored == ("b",) and done.change.kind is ChangeKind.RESTORED and done.change.added == {"b"}
    undone(store, db, before)  # b is in the trash again
    assert [d.memory.id for d in store.trash()] == ["b"]


def test_add_and_undo_moves_the_new_memory_to_the_trash(store: Store, db: Path) -> None:
    before = rows(db)
    done = edits.add(store, "Staging mirrors production", "fact", 4)
    assert done.change.added == {done.memory.id} and done.change.kind is ChangeKind.ADDED
    undone(store, db, before)
    assert [d.memory.id for d in store.trash()] == [done.memory.id]  # recoverable, not lost


@pytest.mark.parametrize("new", ["b", None])
def test_supersede_and_clear_then_undo(store: Store, db: Path, new: str | None) -> None:
    if new is None:
        edits.supersede(store, "d", "b", journal_it=False)
    before = rows(db)
    done = edits.supersede(store, "d", new)
    assert done.change.changed == {"d"} and done.change.kind is ChangeKind.SUPERSEDED
    assert store.get("d").superseded_by == new
    undone(store, db, before)


@pytest.mark.parametrize("remove", [False, True])
def test_link_and_unlink_then_undo(store: Store, db: Path, remove: bool) -> None:
    before = rows(db)
    a, b = ("a", "c") if remove else ("b", "d")
    done = edits.link(store, a, b, remove=remove)
    assert done.change.changed == {a, b} and done.change.kind is ChangeKind.LINKED
    undone(store, db, before)


def test_merge_duplicates_and_unmerge(store: Store, db: Path) -> None:
    before = rows(db)
    done = merge_duplicates(store, ["a", "b"], text="Deploys go out from main; the cache is in src/lib")
    assert done.kept.id == "a" and done.superseded == ("b",) and store.get("b").superseded_by == "a"
    assert done.change.kind is ChangeKind.MERGED and done.change.changed == {"a", "b"}
    unmerge(store, done)
    assert rows(db) == before


def test_merge_into_a_new_memory_and_undo(store: Store, db: Path) -> None:
    before = rows(db)
    done = merge_into_new(store, ["b", "d"], {"content": "Cache in src/lib on the one VPS", "importance": 6})
    assert done.change.added == {done.kept.id} and done.change.changed == {"b", "d"}
    assert done.change.membership_changed
    assert {store.get(i).superseded_by for i in ("b", "d")} == {done.kept.id}
    undone(store, db, before)


def test_a_second_undo_undoes_the_step_before(store: Store, db: Path) -> None:
    first = rows(db)
    edits.edit(store, "a", {"importance": 2})
    second = rows(db)
    edits.delete(store, ["d"])
    undone(store, db, second)
    undone(store, db, first)
    with pytest.raises(NotFound, match="nothing to undo"):
        undo(store)


def test_redo_takes_the_step_undone_last_and_a_new_write_ends_the_redo_branch(store: Store, db: Path) -> None:
    edits.edit(store, "a", {"importance": 2})
    edits.edit(store, "b", {"importance": 7})
    undo(store)
    undo(store)
    assert [e.label for e in journal.redoable(store)] == ["edit importance of a", "edit importance of b"]
    assert redo(store).entry.label == "edit importance of a" and store.get("a").importance == 2
    assert [e.label for e in journal.entries(store)] == ["edit importance of a"]
    edits.edit(store, "c", {"importance": 1})  # a new step: "edit importance of b" can no longer be redone
    assert journal.redoable(store) == []
    with pytest.raises(NotFound, match="nothing to redo"):
        redo(store)
    assert store.get("b").importance == 3
    assert [e.label for e in journal.entries(store)] == ["edit importance of c", "edit importance of a"]


def test_redo_is_refused_when_the_memory_changed_since_the_undo(store: Store, db: Path) -> None:
    edits.edit(store, "a", {"importance": 2})
    undo(store)
    with sqlite3.connect(db) as conn:  # an agent edits it after the undo
        conn.execute("UPDATE memories SET content = 'agent text' WHERE id = 'a'")
    after_agent = rows(db)
    with pytest.raises(Conflict, match="cannot redo .*'a' was changed by another program.*nothing redone"):
        redo(store)
    assert rows(db) == after_agent and len(journal.redoable(store)) == 1


def test_undo_is_refused_when_the_memory_changed_since_and_changes_nothing(store: Store, db: Path) -> None:
    edits.edit(store, "a", {"importance": 2})
    with sqlite3.connect(db) as conn:  # an agent edits it underneath
        conn.execute("UPDATE memories SET content = 'agent text' WHERE id = 'a'")
    after_agent = rows(db)
    with pytest.raises(Conflict, match="'a' was changed by another program"):
        undo(store)
    assert rows(db) == after_agent
    assert len(journal.entries(store)) == 1  # still there: refused, not consumed
    assert drop_latest(store).label.startswith("edit importance")
    assert journal.entries(store) == []


def test_undo_of_a_delete_is_refused_once_the_trash_was_purged(store: Store, db: Path) -> None:
    edits.delete(store, ["d"])
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM ora_desktop_trash")
    before = rows(db)
    with pytest.raises(Conflict, match="no longer in the trash"):
        undo(store)
    assert rows(db) == before


def test_undo_of_a_deleted_memory_that_was_added_again_is_refused(store: Store, db: Path) -> None:
    edits.delete(store, ["d"])
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                     "VALUES ('d', 'someone else''s d', datetime('now'), datetime('now'))")
    with pytest.raises(Conflict, match="'d' was added again"):
        undo(store)


def test_a_refused_operation_journals_nothing_and_creates_no_table(store: Store, db: Path) -> None:
    before = rows(db)
    with pytest.raises(NotFound):
        edits.edit(store, "nope", {"importance": 2})
    with pytest.raises(NotFound):
        edits.delete(store, ["a", "nope"])
    with pytest.raises(Conflict):
        edits.edit(store, "a", {"importance": 2}, expected_version="0" * 40)  # not its version
    assert rows(db) == before
    assert journal.TABLE not in tables(db) and "ora_desktop_trash" not in tables(db)


def test_reading_and_undoing_nothing_leave_the_file_alone(store: Store, db: Path) -> None:
    before = db.read_bytes()
    assert journal.entries(store) == []
    with pytest.raises(NotFound, match="nothing to undo"):
        undo(store)
    assert db.read_bytes() == before and journal.TABLE not in tables(db)


def test_the_journal_keeps_only_the_last_entries(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "KEEP", 3)
    for n in range(1, 6):
        edits.edit(store, "b", {"importance": n})
    assert [e.label for e in journal.entries(store)] == ["edit importance of b"] * 3
    for _ in range(3):
        undo(store)
    assert store.get("b").importance == 2  # the two oldest edits can no longer be undone
    with pytest.raises(NotFound):
        undo(store)


def test_journal_false_writes_no_entry(store: Store, db: Path) -> None:
    edits.edit(store, "a", {"importance": 2}, journal_it=False)
    assert journal.TABLE not in tables(db)


def test_repair_links_keeps_the_ids_named_and_undo_brings_the_text_back(seed_db) -> None:
    """related_to holding prose ('see m1 and m2, also nothing') becomes ["m1", "m2"]; undo restores it."""
    import sqlite3

    from ora_desktop.core import InvalidValue, open_store
    from ora_desktop.core.operations import edits, undo

    path = seed_db([("m1", "one", "fact", 5), ("m2", "two", "fact", 5), ("m3", "three", "fact", 5)])
    original = "see m1 and m2, also m3-gone; m3"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET related_to = ? WHERE id = 'm3'", (original,))
    with open_store(path) as store:
        assert store.get("m3").related_malformed
        done = edits.repair_links(store, "m3")
        assert done.kept == ("m1", "m2") and done.original == original
        repaired = store.get("m3")
        assert repaired.related_to == ("m1", "m2") and not repaired.related_malformed
        assert repaired.sync_status == "pending"
        try:
            edits.repair_links(store, "m3")
        except InvalidValue as exc:
            assert "already a list of ids" in str(exc)
        else:
            raise AssertionError("a sound related_to was 'repaired'")
        undo.undo(store)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT related_to FROM memories WHERE id = 'm3'").fetchone() == (original,)


def test_stored_values_show_every_column_as_stored(seed_db) -> None:
    """Raw values with their storage class: a foreign writer's ISO time and an integer as text."""
    import sqlite3

    from ora_desktop.core import open_store
    from ora_desktop.core.operations.stored import stored_values

    path = seed_db([("m1", "one", "fact", 5)])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET synced_at = '2026-01-14T10:30:00.000Z', related_to = 'oops', "
                     "health_score = 1 WHERE id = 'm1'")
    with open_store(path, readonly=True) as store:
        values = {v.column: v for v in stored_values(store, "m1")}
        assert list(values) == list(store.columns)
    assert (values["synced_at"].storage, values["synced_at"].value) == ("text", "2026-01-14T10:30:00.000Z")
    assert (values["related_to"].value, values["related_to"].editable) == ("oops", True)
    assert (values["health_score"].storage, values["health_score"].value) == ("real", 1.0)  # REAL affinity
    assert not values["id"].editable and not values["created_at"].editable


def test_a_chunked_delete_is_one_undo_step_and_its_last_chunk_reads_no_deleted_row(
        seed_db: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A delete of thousands goes in short transactions; the journal entry, written with the last
    of them (holding the write lock), looks up the versions of the memories that lost a link
    only: the deleted ones are known gone (it took 1.3 s of lock for 100,000 ids)."""
    db = seed_db([(f"m{i:04d}", f"memory {i}", "fact", 5) for i in range(3000)] + [("keep", "links", "fact", 5)])
    with sqlite3.connect(db) as conn:
        conn.execute("""UPDATE memories SET related_to = '["m0001", "m2999"]' WHERE id = 'keep'""")
    before = rows(db)
    looked_up: list[set[str]] = []
    with open_store(db) as store:
        versions = store.versions
        monkeypatch.setattr(store, "versions", lambda ids: (looked_up.append(set(ids)), versions(ids))[1])
        done = edits.delete(store, [f"m{i:04d}" for i in range(3000)])
        monkeypatch.undo()
        assert done.change.removed == {f"m{i:04d}" for i in range(3000)} and done.change.changed == {"keep"}
        assert looked_up == [{"keep"}]
        entry = journal.entries(store, limit=1)[0]
        assert entry.after == {"keep": store.get("keep").version, **dict.fromkeys(done.change.removed)}
        undone(store, db, before)


MANY = [(f"m{i:04d}", f"memory {i}", "fact", 5) for i in range(1500)]


def test_a_bulk_edit_of_many_goes_in_chunks_and_is_one_undo_step(seed_db: Callable[..., Path]) -> None:
    """Each chunk its own short transaction (an agent beside it waits little for the lock), one
    journal entry for them all: one undo gives every memory its own values back."""
    from ora_desktop.core import chunks

    db = seed_db(MANY)
    before = rows(db)
    with open_store(db) as store:
        versions = store.versions([m[0] for m in MANY])
        chunks.new_sizer()  # (what an earlier test left there is not this edit's)
        done = edits.bulk_edit(store, [m[0] for m in MANY], {"importance": 9}, expected_versions=versions)
        assert chunks.last_sizer.chunks > 1
        assert done.change.changed == {m[0] for m in MANY} and {r[3] for r in rows(db)} == {9}
        assert len(journal.entries(store)) == 1
        undone(store, db, before)


def test_a_chunked_bulk_edit_that_meets_a_memory_moved_on_changes_nothing(
        seed_db: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program edits a memory of a later chunk between two chunks: the edit stops, the
    chunks already written are undone, and only the other program's change remains."""
    from ora_desktop.core import chunks

    db = seed_db(MANY)
    sleep = chunks.time.sleep

    def agent_writes_between_chunks(seconds: float) -> None:
        with sqlite3.connect(db) as agent:
            agent.execute("UPDATE memories SET content = 'the agent was here' WHERE id = 'm1499'")
        monkeypatch.setattr(chunks.time, "sleep", sleep)
        sleep(seconds)

    with open_store(db) as store:
        versions = store.versions([m[0] for m in MANY])
        monkeypatch.setattr(chunks.time, "sleep", agent_writes_between_chunks)
        expected = [r if r[0] != "m1499" else (*r[:1], "the agent was here", *r[2:]) for r in rows(db)]
        with pytest.raises(Conflict, match="m1499"):
            edits.bulk_edit(store, [m[0] for m in MANY], {"importance": 9}, expected_versions=versions)
        assert rows(db) == expected
        assert journal.entries(store) == []
