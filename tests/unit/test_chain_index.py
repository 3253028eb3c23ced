"""Supersession chains read through the store's index of the file's edges: the same chains as a
scan of the file, no scan while the file is unchanged, and a fresh one after any write."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ora_desktop import open_store
from ora_desktop.core import connection, graph
from ora_desktop.core.backup import create_backup
from ora_desktop.core.restore import restore_backup
from ora_desktop.core.store import Store
from ora_desktop.core.supersession import EdgeIndex

ROWS = [(f"m{i:03}", f"memory {i}", "fact", 5) for i in range(200)]


def raw(path: Path, *statements: str) -> None:
    """Run statements through a second, plain sqlite3 connection, as another program would."""
    conn = sqlite3.connect(path)
    try:
        for sql in statements:
            conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def link(path: Path, old: str, new: str | None) -> None:
    raw(path, f"UPDATE memories SET superseded_by = {'NULL' if new is None else repr(new)} WHERE id = '{old}'")


def ids(store: Store, memory_id: str) -> list[str]:
    return [m.id for m in store.chain(memory_id).members]


def scanned(store: Store, read: Callable[[], object]) -> list[str]:
    """The statements that ``read`` ran on this thread which read every row of ``memories``
    (SQLite's query plan says SCAN for them), as another connection plans them."""
    statements: list[str] = []
    connection = store.db.connection()
    connection.set_trace_callback(statements.append)
    try:
        read()
    finally:
        connection.set_trace_callback(None)
    planner = sqlite3.connect(store.path)
    try:
        return [sql for sql in statements if not sql.startswith("--")  # (a virtual table's own reads)
                and any(row[3].startswith(("SCAN memories", "SCAN o", "SCAN n"))
                       for row in planner.execute(f"EXPLAIN QUERY PLAN {sql}"))]
    finally:
        planner.close()


@pytest.fixture(params=["wal", "delete"])
def db(request: pytest.FixtureRequest, seed_db: Callable[..., Path]) -> Path:
    """A seed file with a chain m000 <- m001 <- m002 and a branch m003 -> m001, in WAL or
    rollback-journal mode (their commit records live in different places)."""
    path = seed_db(ROWS)
    raw(path, "UPDATE memories SET created_at = '2025-01-01 00:00:00', updated_at = '2025-01-01 00:00:00'")
    link(path, "m000", "m001")
    link(path, "m001", "m002")
    link(path, "m003", "m001")
    if request.param == "delete":
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        conn.close()
    return path


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with open_store(db) as opened:
        yield opened


def test_a_second_chain_of_an_unchanged_file_reads_no_row_but_its_own(store: Store) -> None:
    assert scanned(store, lambda: store.chain("m100"))  # the first chain reads the file's edges once
    for memory_id in ("m100", "m000", "m002", "m003"):
        assert scanned(store, lambda memory_id=memory_id: store.chain(memory_id)) == [], memory_id
    assert ids(store, "m100") == ["m100"]
    assert ids(store, "m003") == ["m002", "m001", "m003", "m000"]


def test_our_own_edit_of_other_columns_keeps_the_index(store: Store, db: Path) -> None:
    """The change feed says which commits can leave the edges alone: an edit of an importance,
    ours or (with a write-ahead log) another program's, reads no row again; a supersede, ours
    or another program's, reads them anew."""
    assert ids(store, "m003") == ["m002", "m001", "m003", "m000"]
    store.update("m001", importance=9)
    assert scanned(store, lambda: store.chain("m003")) == []
    assert ids(store, "m003") == ["m002", "m001", "m003", "m000"]
    store.supersede("m040", "m003")
    assert ids(store, "m003") == ["m002", "m001", "m003", "m000", "m040"]
    raw(db, "UPDATE memories SET importance = 2 WHERE id = 'm001'")
    # With a write-ahead log the feed compares the row's stored values: only importance moved. A
    # rollback-journal file keeps no earlier version to compare with: the edges are read anew.
    wal = Path(f"{db}-wal").exists()
    assert bool(scanned(store, lambda: store.chain("m003"))) is not wal
    raw(db, "UPDATE memories SET superseded_by = 'm050' WHERE id = 'm040'")  # another program's edge
    assert scanned(store, lambda: store.chain("m003"))
    assert ids(store, "m003") == ["m002", "m001", "m003", "m000"] and ids(store, "m050") == ["m050", "m040"]


def test_an_agents_edit_of_a_long_memorys_importance_keeps_the_index(store: Store, db: Path) -> None:
    """A memory too long for its page: the feed reads its overflow pages to tell an importance
    edit (which rewrites one overflow page, not the row's leaf) from an edge moved. A
    rollback-journal file keeps no earlier version: there the edges are read anew."""
    raw(db, f"UPDATE memories SET content = '{'a long memory ' * 1500}' WHERE id = 'm001'")
    assert ids(store, "m003") == ["m002", "m001", "m003", "m000"]
    raw(db, "UPDATE memories SET importance = 9 WHERE id = 'm001'")
    wal = Path(f"{db}-wal").exists()
    assert bool(scanned(store, lambda: store.chain("m003"))) is not wal
    raw(db, "UPDATE memories SET superseded_by = 'm050' WHERE id = 'm001'")  # the long memory's edge moved
    assert scanned(store, lambda: store.chain("m003"))
    assert ids(store, "m050") == ["m050", "m001", "m003", "m000"]


def test_the_stores_own_write_is_seen_at_once(store: Store) -> None:
    assert ids(store, "m010") == ["m010"]
    store.supersede("m010", "m011")
    assert ids(store, "m011") == ["m011", "m010"]
    worker = threading.Thread(target=lambda: store.supersede("m011", "m012"))  # another thread's connection
    worker.start()
    worker.join()
    assert ids(store, "m010") == ["m012", "m011", "m010"]


def test_a_chain_read_inside_a_write_sees_that_writes_edges(store: Store) -> None:
    assert ids(store, "m021") == ["m021"]
    with store.write():
        store.supersede("m020", "m021")
        assert ids(store, "m021") == ["m021", "m020"]


def test_another_programs_write_is_seen_at_once(store: Store, db: Path) -> None:
    assert ids(store, "m002") == ["m002", "m001", "m003", "m000"]
    link(db, "m030", "m000")  # a new oldest member
    assert ids(store, "m002") == ["m002", "m001", "m003", "m000", "m030"]
    link(db, "m003", None)  # a branch taken away
    assert ids(store, "m002") == ["m002", "m001", "m000", "m030"]
    raw(db, "DELETE FROM memories WHERE id = 'm001'")  # the middle deleted: two pieces, one dangling
    assert ids(store, "m002") == ["m002"]
    assert ids(store, "m030") == ["m000", "m030"] and store.chain("m030").dangling == ("m001",)


def test_a_program_writing_while_the_store_stays_open_between_chains(store: Store, db: Path) -> None:
    """A writer that keeps its connection open (an agent) and commits between two chains."""
    agent = sqlite3.connect(db)
    try:
        assert ids(store, "m040") == ["m040"]
        agent.execute("UPDATE memories SET superseded_by = 'm041' WHERE id = 'm040'")
        agent.commit()
        assert ids(store, "m041") == ["m041", "m040"]
        agent.execute("UPDATE memories SET superseded_by = NULL WHERE id = 'm040'")
        agent.commit()
        assert ids(store, "m041") == ["m041"]
    finally:
        agent.close()


def test_a_restore_brings_back_the_backups_chains(store: Store, db: Path) -> None:
    store.supersede("m050", "m002")
    backup = create_backup(db)
    link(db, "m050", None)
    assert ids(store, "m002") == ["m002", "m001", "m003", "m000"]
    restore_backup(backup.path, db)
    assert ids(store, "m002") == ["m002", "m050", "m001", "m003", "m000"]


@pytest.mark.parametrize("may_add_files", [True, False], ids=["shared", "immutable"])
def test_a_read_only_store_sees_a_write_made_after_it_opened(seed_db: Callable[..., Path], may_add_files: bool,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # immutable: a folder we may not add files to, where the file is reopened when it moves
    monkeypatch.setattr(connection, "may_add_files", lambda path: may_add_files)
    path = seed_db(ROWS)
    with open_store(path, readonly=True) as store:
        assert store.immutable is not may_add_files
        assert ids(store, "m061") == ["m061"]
        link(path, "m060", "m061")
        assert ids(store, "m061") == ["m061", "m060"]


def test_chains_are_those_a_scan_of_the_file_finds(store: Store, db: Path) -> None:
    """Cycles, dangling ids, branches and a chain longer than the walk's limit, compared with
    the scan that chain() runs inside a write transaction (the index is never used there)."""
    statements = [f"UPDATE memories SET superseded_by = 'm{i + 1:03}' WHERE id = 'm{i:03}'" for i in range(100, 150)]
    statements += [
        "UPDATE memories SET superseded_by = 'm100' WHERE id = 'm150'",  # m100..m150 is a cycle
        "UPDATE memories SET superseded_by = 'gone' WHERE id = 'm160'",  # dangling
        "UPDATE memories SET superseded_by = 'm160' WHERE id = 'm161'",
        "UPDATE memories SET superseded_by = 'm160' WHERE id = 'm162'",
        "UPDATE memories SET superseded_by = 'm162' WHERE id = 'm163'",
        "UPDATE memories SET superseded_by = '' WHERE id = 'm170'",  # empty: no successor
        "UPDATE memories SET superseded_by = X'6D313731' WHERE id = 'm172'",  # the bytes of 'm171', as a blob
    ]
    raw(db, *statements)
    for memory_id in ("m002", "m100", "m125", "m150", "m161", "m163", "m170", "m171", "m172", "m199"):
        indexed = store.chain(memory_id)
        with store.write():
            scanned_chain = store.chain(memory_id)
        assert indexed == scanned_chain, memory_id
    assert store.chain("m125").cycle and len(store.chain("m125").members) == 51
    assert ids(store, "m171") == ["m171"]


def test_a_chain_longer_than_the_limit_stops_where_the_scan_stops(
        store: Store, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph, "MAX_CHAIN", 40)
    raw(db, *[f"UPDATE memories SET superseded_by = 'm{i + 1:03}' WHERE id = 'm{i:03}'" for i in range(100, 199)])
    raw(db, *[f"UPDATE memories SET superseded_by = 'm{i:03}' WHERE id = 'm{i + 50:03}'" for i in range(100, 140)])
    for memory_id in ("m199", "m150", "m180"):
        indexed = store.chain(memory_id)
        with store.write():
            assert indexed == store.chain(memory_id), memory_id


def test_an_edge_moved_after_the_version_was_read_sends_the_chain_to_the_file(
        store: Store, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write landing between the file's version and the walk (simulated by a version that never
    moves): the edges the index found are read back, and one that moved means a scan of the file."""
    monkeypatch.setattr(graph, "file_version", lambda path: ("always the same",))
    assert ids(store, "m002") == ["m002", "m001", "m003", "m000"]
    link(db, "m050", "m001")  # an edge the index does not know ...
    link(db, "m003", "m050")  # ... found because an edge it knows moved onto it
    assert ids(store, "m002") == ["m002", "m001", "m050", "m000", "m003"]


def test_the_index_finds_edges_whatever_order_the_scan_returned_them_in() -> None:
    """Rowids as the scan writes them (16 hex digits each, two's complement), out of order."""
    pairs = [(2, 9), (-5, 7), (2, 3), (9, 4)]
    row = (len(pairs), "".join(f"{newer & (2**64 - 1):016x}{older & (2**64 - 1):016x}" for newer, older in pairs))
    index = EdgeIndex.from_scan(row)
    assert index.walk_back(2, 100) == {9: 2, 3: 2, 4: 9}
    assert index.walk_back(-5, 100) == {7: -5}
    assert index.walk_back(2, 2) == {9: 2, 3: 2}  # the limit stops after the level that reached it
    assert EdgeIndex.from_scan((0, None)).walk_back(2, 100) == {}
