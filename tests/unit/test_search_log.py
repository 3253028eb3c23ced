"""The search index's cursor in the write-ahead log: changed rowids since it, and refresh using it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from ora_desktop.core import btree, wallog
from ora_desktop.core.search import search
from ora_desktop.core.search.index import get_index
from tests.unit.log_support import agent, index_header, write_index_header
from tests.unit.search_support import ids, make_file


@pytest.fixture
def db(ora_home: Path) -> Path:
    rows = [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 20} for i in range(1, 401)]
    return make_file(ora_home / "wal.site.db", rows)


def test_leaf_rowids_of_a_real_page(db: Path) -> None:
    page_size = 4096
    data = db.read_bytes()
    found: list[int] = []
    for page in range(1, len(data) // page_size):  # page 0 (file page 1) is the schema
        found += btree.leaf_rowids(data[page * page_size:(page + 1) * page_size])
    with sqlite3.connect(db) as conn:
        rowids = {r[0] for r in conn.execute("SELECT rowid FROM memories")}
    assert rowids <= set(found)


def test_garbage_pages_give_no_rowids() -> None:
    assert btree.leaf_rowids(b"") == []
    assert btree.leaf_rowids(b"\x0d" + b"\xff" * 4095) == []
    assert btree.leaf_rowids(b"\x0a" + b"\x00" * 4095) == []


def test_changes_since_a_position(db: Path) -> None:
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("UPDATE memories SET content = 'warm up' WHERE rowid = 1")
    start = wallog.cursor_now(db)
    assert start is not None
    writer.execute("UPDATE memories SET content = 'changed' WHERE rowid IN (5, 300)")
    changes = wallog.rows_since(db, start)
    assert changes is not None and {5, 300} <= changes.rowids
    assert changes.cursor.offset > start.offset
    again = wallog.rows_since(db, changes.cursor)
    assert again is not None and again.rowids == set()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.execute("UPDATE memories SET content = 'after restart' WHERE rowid = 7")
    assert wallog.rows_since(db, changes.cursor) is None  # a restarted log cannot vouch
    writer.close()
    assert wallog.rows_since(db, None) is None


def test_refresh_through_the_log(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ids(search(db, "giraffe")) == []
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("UPDATE memories SET content = 'a warm-up edit' WHERE rowid = 2")
    search(db, "giraffe")  # records the log position
    used: list[bool] = []
    real = wallog.rows_since

    def spy(path: Path, since: wallog.Cursor | None, whole: bool = False) -> wallog.LeafRows | None:
        result = real(path, since, whole)
        used.append(result is not None)
        return result

    monkeypatch.setattr(wallog, "rows_since", spy)
    writer.execute("UPDATE memories SET content = 'a giraffe appears', updated_at = datetime('now') WHERE id = 'm10'")
    assert ids(search(db, "giraffe")) == ["m10"]
    # Two edits in the same second keep updated_at: the log still shows the page changed.
    writer.execute("UPDATE memories SET content = 'a zebra instead' WHERE id = 'm10'")
    assert ids(search(db, "giraffe")) == [] and ids(search(db, "zebra")) == ["m10"]
    writer.execute("DELETE FROM memories WHERE id IN ('m1', 'm200', 'm400')")
    writer.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                   "VALUES ('n1', 'new giraffe', '2001-01-01', '2001-01-01')")
    assert ids(search(db, "giraffe")) == ["n1"]
    assert used and all(used)
    index = get_index(db)
    assert index.meta()["rows"] == 398
    writer.close()


def test_one_restart_keeps_the_unread_old_frames(db: Path) -> None:
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("UPDATE memories SET content = 'one' WHERE rowid BETWEEN 1 AND 300")  # a long log
    start = wallog.cursor_now(db)
    writer.execute("UPDATE memories SET content = 'two' WHERE rowid = 250")  # after our position
    busy, frames, done = writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert busy == 0 and frames == done
    writer.execute("UPDATE memories SET content = 'three' WHERE rowid = 3")  # restarts the log
    assert wallog.cursor_now(db).seq == start.seq + 1
    changes = wallog.rows_since(db, start)
    assert changes is not None and {3, 250} <= changes.rowids
    writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
    writer.execute("UPDATE memories SET content = 'four' WHERE rowid = 4")  # a second restart
    assert wallog.rows_since(db, start) is None
    writer.close()


def test_refresh_survives_a_checkpoint_restart(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("UPDATE memories SET content = 'warm up ' || content WHERE rowid <= 200")
    search(db, "okapi")
    writer.execute("UPDATE memories SET content = 'an okapi', updated_at = '2001-01-01' WHERE id = 'm150'")
    writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
    writer.execute("UPDATE memories SET content = 'another okapi', updated_at = '2001-01-01' WHERE id = 'm7'")
    scans: list[bool] = []
    real = wallog.rows_since
    monkeypatch.setattr(wallog, "rows_since",
                        lambda p, s, whole=False: scans.append(real(p, s, whole) is None) or real(p, s, whole))
    assert set(ids(search(db, "okapi"))) == {"m150", "m7"}
    assert scans == [False]  # read from the log, no table scan
    writer.close()


def test_a_log_that_appeared_after_the_build_is_read_whole(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    search(db, "okapi")  # built while the file had no log (the index's own reader makes an empty one)
    get_index(db).close()  # the last connection: its empty log goes
    assert not Path(str(db) + "-wal").exists()
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("UPDATE memories SET content = 'an okapi', updated_at = '2001-01-01' WHERE id = 'm9'")
    scans: list[bool] = []
    real = wallog.rows_since
    monkeypatch.setattr(wallog, "rows_since",
                        lambda p, s, whole=False: scans.append(real(p, s, whole) is None) or real(p, s, whole))
    assert ids(search(db, "okapi")) == ["m9"]
    assert scans == [False]
    writer.close()


@pytest.mark.parametrize("log", ["appended to", "restarted by"])
def test_an_edit_in_the_log_but_not_yet_published_is_found_once_it_is(ora_home: Path, log: str) -> None:
    """A writer appends a commit's frames to the log before the wal-index publishes them; a
    refresh in between must not take that commit as read (SQL showed the old text, and an edit of
    an existing memory was then missed by search for good). Replayed exactly: the index header is
    put back as it was before the edit, then restored. The edit either follows other frames in
    the log or is the first of a log it restarts."""
    rows = [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 20} for i in range(1, 301)]
    rows[9]["content"] = "an okapi grazes"
    db = make_file(ora_home / "agent.site.db", rows)
    assert ids(search(db, "okapi")) == ["m10"]  # built; its reader keeps the log from now on
    if log == "appended to":
        agent(db, "UPDATE memories SET content = 'a warm-up edit' WHERE id = 'm2'")
        assert ids(search(db, "okapi")) == ["m10"]  # the log read to its end
    before = index_header(db)
    agent(db, "UPDATE memories SET content = 'a giraffe grazes' WHERE id = 'm10'")  # updated_at kept
    after = index_header(db)
    write_index_header(db, before)  # the edit's frames are in the log, not yet published
    assert ids(search(db, "giraffe")) == []
    write_index_header(db, after)  # now it is
    assert ids(search(db, "giraffe")) == ["m10"]
    assert ids(search(db, "okapi")) == []


def test_a_commit_landing_while_the_table_is_read_is_read_next_time(ora_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The log is read before the table: an edit committed once the refresh's read of the table
    has begun (so it shows the old text) is left for the next refresh, not stepped over."""
    from ora_desktop.core.search.refresh import RefreshMixin

    rows = [{"id": f"m{i}", "content": f"memory {i} " + "padding " * 20} for i in range(1, 301)]
    rows[9]["content"] = "an okapi grazes"
    db = make_file(ora_home / "agent.site.db", rows)
    assert ids(search(db, "okapi")) == ["m10"]
    real = RefreshMixin._renumbered
    landed: list[bool] = []

    def then_an_edit_lands(self: RefreshMixin, conn: sqlite3.Connection, meta: dict) -> bool:
        answer = real(self, conn, meta)  # the table's snapshot is taken
        if not landed:
            agent(db, "UPDATE memories SET content = 'a giraffe grazes' WHERE id = 'm10'")
            landed.append(True)
        return answer

    monkeypatch.setattr(RefreshMixin, "_renumbered", then_an_edit_lands)
    agent(db, "UPDATE memories SET content = 'a warm-up edit' WHERE id = 'm2'")
    assert ids(search(db, "okapi")) == ["m10"]  # the edit landed during this refresh
    assert landed
    assert ids(search(db, "giraffe")) == ["m10"]
    assert ids(search(db, "okapi")) == []


@pytest.fixture(params=["NONE", "FULL"], ids=["plain", "auto-vacuum"])
def long_file(ora_home: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A file whose first memory spills to overflow pages, with its last word in that tail (not
    the last row: that one is always read again), then 500 short ones; the index built, its
    cursor in the log past an agent's first edit, and another program holding the file open (so
    the log survives). Also as an auto-vacuum file (pointer-map pages written with each page
    allocated or moved)."""
    filler = " ".join(f"word{i}" for i in range(2000))
    rows = [{"id": "big", "content": filler + " zebrafish"}]
    rows += [{"id": f"m{i}", "content": f"memory {i}"} for i in range(1, 501)]
    db = ora_home / "long.site.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA auto_vacuum = {request.param}")
    make_file(db, rows)
    assert ids(search(db, "zebrafish")) == ["big"]
    agent(db, "UPDATE memories SET content = 'a warm-up edit' WHERE id = 'm2'")
    assert ids(search(db, "zebrafish")) == ["big"]
    keeper = sqlite3.connect(db)
    keeper.execute("SELECT count(*) FROM memories").fetchone()
    yield db


def _count_table_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the refreshes that compared every memory's text (the log could not vouch)."""
    from ora_desktop.core.search import refresh

    calls: list[int] = []
    real = refresh._text_differs
    monkeypatch.setattr(refresh, "_text_differs", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_a_same_length_edit_in_a_long_memory_s_overflow_is_found(long_file: Path) -> None:
    """An agent's same-length edit in the overflowing tail of a long memory: SQLite rewrites
    only that overflow page (no table leaf), so the log names no row. The cursor must not step
    past it: the new word is found and the old one is gone (before, both stayed wrong for good)."""
    start = wallog.cursor_now(long_file)
    agent(long_file, "UPDATE memories SET content = replace(content, 'zebrafish', 'swordfish') WHERE id = 'big'")
    assert wallog.rows_since(long_file, start) is None  # no leaf page names the row: the log cannot vouch
    assert ids(search(long_file, "swordfish")) == ["big"]
    assert ids(search(long_file, "zebrafish")) == []


def test_the_same_edit_is_found_with_a_store_of_the_file_open_here(long_file: Path) -> None:
    """With a store open in this process (the window, the MCP server), whose change feed cannot
    name the row either: the search still compares the texts, and finds the new word."""
    from ora_desktop.core import open_store

    store = open_store(long_file)
    try:
        assert ids(search(long_file, "zebrafish")) == ["big"]  # the feed's reader starts
        agent(long_file, "UPDATE memories SET content = replace(content, 'zebrafish', 'swordfish') WHERE id = 'big'")
        assert ids(search(long_file, "swordfish")) == ["big"]
        assert ids(search(long_file, "zebrafish")) == []
    finally:
        store.close()


@pytest.mark.parametrize("secure_delete", ["ON", "OFF"])
def test_deleting_a_long_memory_is_still_read_from_the_log(long_file: Path, monkeypatch: pytest.MonkeyPatch,
                                                           secure_delete: str) -> None:
    """Deleting a long memory frees its overflow pages (the freelist's trunk page is written, and
    with secure_delete the zeroed pages it lists; an auto-vacuum file moves its last pages into
    them and cuts the file): the freelist explains them, so the log still names the changed rows
    and no text is compared."""
    compared = _count_table_comparisons(monkeypatch)
    agent(long_file, f"PRAGMA secure_delete = {secure_delete}", "DELETE FROM memories WHERE id = 'big'")
    with closing(sqlite3.connect(long_file)) as conn:  # the overflow pages were freed (or moved and cut off)
        freed, vacuumed = (conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("freelist_count", "auto_vacuum"))
    assert freed > 0 or vacuumed
    assert ids(search(long_file, "zebrafish")) == []
    agent(long_file, "UPDATE memories SET content = 'memory 7 swordfish' WHERE id = 'm7'")
    assert ids(search(long_file, "swordfish")) == ["m7"]
    assert compared == []


@pytest.mark.parametrize(("sql", "memory"), [
    ("UPDATE memories SET content = replace(content, 'memory 250', 'marlin 250') WHERE id = 'm250'", "m250"),
    ("REPLACE INTO memories (id, content, type, importance, created_at, updated_at) "
     "SELECT id, 'marlin 250', type, importance, created_at, updated_at FROM memories WHERE id = 'm250'", "m250"),
    ("UPDATE memories SET content = replace(content, 'zebrafish', 'a marlin') WHERE id = 'big'", "big"),
    ("INSERT INTO memories (id, content, created_at, updated_at) VALUES "
     "('long2', replace(hex(zeroblob(2000)), '0', 'word ') || 'marlin', '2001-01-01', '2001-01-01')", "long2"),
], ids=["short, same length in place", "short, replace", "long, new length", "long, new"])
def test_edits_that_write_the_row_s_leaf_are_read_from_the_log(long_file: Path, monkeypatch: pytest.MonkeyPatch,
                                                               sql: str, memory: str) -> None:
    """An edit that writes the row's leaf — a short memory's, in place or by REPLACE, a long
    memory's new length (a new overflow chain), a new long memory — is named by the log: its
    overflow pages are its row's, and no text is compared whole."""
    compared = _count_table_comparisons(monkeypatch)
    agent(long_file, sql)
    assert ids(search(long_file, "marlin")) == [memory]
    assert ids(search(long_file, "zebrafish")) == ([] if memory == "big" else ["big"])
    assert compared == []
