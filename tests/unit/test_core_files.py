"""Opening files: bad files refused by name, odd-but-usable files opened with warnings,
read-only sessions that leave no trace, locked databases, and stores used from threads."""

from __future__ import annotations

import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ora_desktop import (
    CorruptFile,
    DatabaseLocked,
    EmptyFile,
    FileMissing,
    FileProblem,
    NotSQLite,
    OraError,
    WrongSchema,
    open_store,
)
from ora_desktop.core import connection
from ora_desktop.core.fileheader import read_header
from ora_desktop.core.rawsql import run_sql
from ora_desktop.core.schema import INIT_SQL
from tests.conftest import raw_seed_db
from tests.unit.core_support import copy_mid_write, legacy_memories

ROWS = [(f"m{i}", f"memory number {i}", ("fact", "task", "context")[i % 3], 1 + i % 10) for i in range(60)]


@pytest.fixture
def unwritable_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read-only opens behave as in a folder this process may not add files to (tests run as
    root, so permission bits would not bind): a WAL file with nothing beside it is read immutable."""
    monkeypatch.setattr(connection, "may_add_files", lambda path: False)


def listing(folder: Path) -> dict[str, bytes]:
    """Every file in a folder with its bytes."""
    return {p.name: (b"<folder>" if p.is_dir() else p.read_bytes()) for p in sorted(folder.iterdir())}


# ------------------------------------------------------------------------------ bad files
def _without_rowid(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL) WITHOUT ROWID")
    conn.commit()
    conn.close()


def _without_content(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()


def _sqlite_without_memories(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id TEXT, body TEXT)")
    conn.commit()
    conn.close()


def _truncated(path: Path) -> None:
    raw_seed_db(path.with_suffix(".full"), ROWS * 1)
    data = path.with_suffix(".full").read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _header_only(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + b"\x10\x00")


def _encrypted(path: Path) -> None:
    path.write_bytes(os.urandom(8192))  # what an SQLCipher file looks like: no plain header


def _garbage_after_header(path: Path) -> None:
    raw_seed_db(path.with_suffix(".full"), ROWS)
    data = bytearray(path.with_suffix(".full").read_bytes())
    data[100:4096] = os.urandom(4096 - 100)  # the schema page destroyed
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda p: None, FileMissing, "no such file"),
        (lambda p: p.write_bytes(b""), EmptyFile, "empty"),
        (lambda p: p.write_text("id,content\n1,hello\n"), NotSQLite, "not an SQLite database"),
        (_encrypted, NotSQLite, "encrypted"),
        (_header_only, CorruptFile, "truncated"),
        (_truncated, CorruptFile, "truncated"),
        (_garbage_after_header, FileProblem, ""),
        (_sqlite_without_memories, WrongSchema, "no 'memories' table"),
        (_without_content, WrongSchema, "lacks required columns: content"),
        (_without_rowid, WrongSchema, "WITHOUT ROWID"),
        (lambda p: p.mkdir(), NotSQLite, "directory"),
    ],
    ids=["missing", "empty", "text", "encrypted", "header-only", "truncated", "damaged", "no-memories",
         "no-content", "without-rowid", "folder"],
)
@pytest.mark.parametrize("readonly", [False, True], ids=["rw", "ro"])
def test_bad_files_are_refused_by_name(tmp_path, make, error, words, readonly):
    path = tmp_path / "bad.site.db"
    make(path)
    before = listing(tmp_path)
    with pytest.raises(error) as caught:
        open_store(path, readonly=readonly)
    assert isinstance(caught.value, OraError)
    message = str(caught.value)
    assert str(path) in message and words in message
    assert listing(tmp_path) == before  # refusing a file changes nothing


# ------------------------------------------------------------------------------ odd but usable
def test_missing_task_context_and_indexes_are_warnings(tmp_path):
    path = tmp_path / "bare.site.db"
    conn = sqlite3.connect(path)
    table = INIT_SQL.split("CREATE TABLE IF NOT EXISTS memories")[1].split(";")[0]
    conn.execute("CREATE TABLE memories" + table)
    conn.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES ('a', 'x', datetime('now'), "
                 "datetime('now'))")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert any("task_context" in w for w in store.warnings)
        assert any("missing indexes" in w and "idx_memories_type" in w for w in store.warnings)
        assert store.tasks() == []
        assert store.get("a").content == "x"
        assert store.recall("fact")[0].id == "a"


def test_legacy_file_without_checks_shows_out_of_range_values(tmp_path):
    path = tmp_path / "legacy.site.db"
    conn = legacy_memories(path, not_null=False)
    conn.executemany(
        "INSERT INTO memories (id, content, type, importance, health_score, sync_status, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [("zero", "importance zero", "fact", 0, 1.0, "pending", "2024-05-01 10:00:00", "2024-05-01 10:00:00"),
         ("eleven", "importance eleven", "note", 11, 1.5, "uploaded", "yesterday", None),
         ("nulls", None, None, None, None, None, None, None)],
    )
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert any("CHECK" in w for w in store.warnings)
        zero, eleven, nulls = store.get("zero"), store.get("eleven"), store.get("nulls")
        assert zero.importance == 0
        assert (eleven.importance, eleven.health_score, eleven.type, eleven.sync_status) == (11, 1.5, "note",
                                                                                            "uploaded")
        assert eleven.created_at is None and eleven.unparsed == (("created_at", "yesterday"),)
        assert nulls.content == "" and nulls.created_at is None
        assert store.count() == 3
        facets = store.facets()
        assert facets.types == {"fact": 1, "note": 1, "None": 1}
        assert facets.importance == {0: 1, 11: 1, None: 1}
        assert facets.health_buckets["unknown"] == 1
        assert {m.id for m in store.list(order_by="importance")} == {"zero", "eleven", "nulls"}
        # Editing such a row still validates what the user types.
        with pytest.raises(OraError, match="importance"):
            store.update("eleven", importance=12)
        assert store.update("eleven", importance=10).importance == 10


# ------------------------------------------------------------------------------ read-only
def test_read_only_session_leaves_bytes_and_folder_unchanged(seed_db):
    path = seed_db(ROWS)
    folder = path.parent
    before = listing(folder)
    assert set(before) == {path.name}  # WAL file, no -wal/-shm beside it
    with open_store(path, readonly=True) as store:
        # SQLite's locks (no torn view while an agent writes): its -wal/-shm exist while open...
        assert store.readonly and not store.immutable
        assert store.report.journal_mode == "wal"
        assert store.count() == len(ROWS)
        assert [m.id for m in store.iter_all(page=7)] == [m.id for m in store.list(limit=None)]
        store.facets()
        store.recall("fact")
        store.important()
        store.chain("m1")
        store.neighbors("m1", hops=2)
        store.trash()
        store.tasks()
        store.row_keys()
        store.cursor_at(10)
        assert not store.changed_externally()
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(lambda _: store.count(), range(4))) == [len(ROWS)] * 4
    assert listing(folder) == before  # ...and the last connection to close removed them


def test_read_only_session_in_a_folder_it_may_not_write_reads_immutable(seed_db, unwritable_folder):
    path = seed_db(ROWS)
    before = listing(path.parent)
    with open_store(path, readonly=True) as store:
        assert store.immutable and store.count() == len(ROWS)
        assert listing(path.parent) == before
    assert listing(path.parent) == before


def test_read_only_store_follows_another_writer_that_comes_and_goes(seed_db):
    path = seed_db(ROWS)
    with open_store(path, readonly=True) as store:
        assert not store.immutable and store.count() == len(ROWS)
        assert not store.changed_externally()
        for n in range(3):  # another program opens, writes and closes
            writer = sqlite3.connect(path)
            writer.execute("DELETE FROM memories WHERE id = ?", (f"m{n}",))
            writer.commit()
            writer.close()
            assert store.changed_externally()
            assert store.count() == len(ROWS) - 1 - n and store.find(f"m{n}") is None
            assert not store.changed_externally()


def test_read_only_session_beside_an_open_writer(seed_db):
    path = seed_db(ROWS)
    folder = path.parent
    writer = sqlite3.connect(path)
    writer.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES ('w1', 'by writer', "
                   "datetime('now'), datetime('now'))")
    writer.commit()
    # Read through a descriptor kept open: closing any descriptor of the file would drop the
    # POSIX locks of the writer's connection in this process (see core/fileheader.py).
    before = {p.name for p in folder.iterdir()}
    db_bytes = read_header(path, 1 << 24)
    assert {path.name + "-wal", path.name + "-shm"} <= before
    with open_store(path, readonly=True) as store:
        assert not store.immutable
        assert store.get("w1").content == "by writer"  # sees the writer's WAL
        writer.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES ('w2', 'later', "
                       "datetime('now'), datetime('now'))")
        writer.commit()
        assert store.changed_externally()
        assert store.get("w2").content == "later"
        assert not store.changed_externally()
    assert read_header(path, 1 << 24) == db_bytes
    assert {p.name for p in folder.iterdir()} == before
    writer.close()


def test_immutable_read_only_store_follows_another_writer(seed_db, unwritable_folder):
    path = seed_db(ROWS)
    with open_store(path, readonly=True) as store:
        assert store.immutable and store.count() == len(ROWS)
        assert not store.changed_externally()
        raw_write = sqlite3.connect(path)
        raw_write.execute("DELETE FROM memories WHERE id = 'm0'")
        raw_write.commit()
        raw_write.close()  # checkpoints into the main file and removes -wal
        assert store.changed_externally()
        assert store.count() == len(ROWS) - 1 and store.find("m0") is None
        assert not store.changed_externally()
        # Reads notice too, without anyone calling changed_externally().
        raw_write = sqlite3.connect(path)
        raw_write.execute("DELETE FROM memories WHERE id = 'm1'")
        raw_write.commit()
        assert store.find("m1") is None  # a writer still open: read through its WAL
        raw_write.close()
        assert store.count() == len(ROWS) - 2


def test_read_only_rollback_journal_file(tmp_path):
    path = tmp_path / "delete-mode.site.db"
    raw_seed_db(path, ROWS)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = listing(tmp_path)
    with open_store(path, readonly=True) as store:
        assert not store.immutable
        assert store.count() == len(ROWS)
    assert listing(tmp_path) == before


# ------------------------------------------------------------------------------ locks
def test_locked_database_gives_a_clear_error_and_changes_nothing(seed_db):
    path = seed_db(ROWS)
    with open_store(path, timeout=0.2) as store:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("UPDATE memories SET content = 'held' WHERE id = 'm2'")
        try:
            with pytest.raises(DatabaseLocked) as caught:
                store.add("blocked write")
            assert str(path) in str(caught.value) and "locked" in str(caught.value)
            with pytest.raises(DatabaseLocked):
                store.delete(["m3"])
            with pytest.raises(DatabaseLocked):
                store.update("m3", content="x")
            assert store.count() == len(ROWS)  # WAL: reading still works
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert store.get("m3").content == "memory number 3"
        assert not store.has_table("ora_desktop_trash")  # the failed delete created nothing
        store.add("after the lock")
        assert store.count() == len(ROWS) + 1


def test_exclusively_locked_rollback_file_refused_at_open(tmp_path):
    path = tmp_path / "locked.site.db"
    raw_seed_db(path, ROWS)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DatabaseLocked, match="locked"):
            open_store(path, readonly=True, timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# ------------------------------------------------------------------------------ threads
def test_store_used_from_worker_threads(seed_db):
    path = seed_db(ROWS)
    with open_store(path) as store:
        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(20):
                    store.add(f"thread {n} memory {i}", type="task")
                    store.list(types=("task",), limit=5)
                    store.touch("m1")
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert store.count(types=("task",)) == 20 + 80
        assert store.get("m1").access_count == 80
        assert store.db.open_connections >= 1
        # Threads that ended are pruned as new ones connect: a long session does not pile them up.
        for _ in range(5):
            worker = threading.Thread(target=store.count)
            worker.start()
            worker.join()
        assert store.db.open_connections <= 2
    assert store.db.open_connections == 0  # close() closed every thread's connection


def test_store_opened_on_a_copy_with_wal_sidecars(tmp_path, seed_db):
    """A file copied together with its -wal (a writer was running) opens and shows every commit."""
    copy = copy_mid_write(seed_db(ROWS), tmp_path / "copy", "m5", ("-wal", "-shm"))
    with open_store(copy, readonly=True) as store:
        assert store.find("m5") is None and store.count() == len(ROWS) - 1


def test_wal_left_without_its_shm_is_read_and_the_new_shm_reported(tmp_path, seed_db):
    # As a crashed writer leaves it: a -wal holding commits, no -shm.
    copy = copy_mid_write(seed_db(ROWS), tmp_path / "crashed", "m7", ("-wal",))
    db_bytes = copy.read_bytes()
    with open_store(copy, readonly=True) as store:
        assert store.find("m7") is None  # the commit in the -wal is seen
        assert any("-shm was created" in w for w in store.warnings)
    assert copy.read_bytes() == db_bytes


def test_browsing_a_writable_store_changes_nothing_on_disk(seed_db):
    path = seed_db(ROWS)
    before = listing(path.parent)
    with open_store(path) as store:
        store.list()
        store.facets()
        store.recall("fact")
        store.chain("m1")
        store.trash()
        list(store.iter_all(page=9))
        assert not store.changed_externally()
    assert listing(path.parent) == before  # no ora_desktop_* table, no leftover -wal/-shm


def test_immutable_reads_follow_a_writer_that_comes_and_goes(seed_db, unwritable_folder):
    path = seed_db(ROWS)
    with open_store(path, readonly=True) as store:
        cursor = run_sql(store, "SELECT id FROM memories ORDER BY rowid")
        cursor.fetchmany(10)
        for n in range(3):  # another program opens, writes and closes three times
            writer = sqlite3.connect(path)
            writer.execute("DELETE FROM memories WHERE id = ?", (f"m{50 + n}",))
            writer.commit()
            writer.close()
            assert store.count() == len(ROWS) - 1 - n
            assert len(store.list(limit=None)) == len(ROWS) - 1 - n
            if n == 0:
                cursor.fetchall()  # a cursor from before the reopen is not closed under its reader
        assert len(store._retired) == 1  # older connections were closed, not piled up
