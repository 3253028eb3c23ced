"""``FirstRows``: the file the window shows first, opened and its first screenful read on a thread
while the window is still being imported (``ora-desktop FILE``)."""

from __future__ import annotations

from ora_desktop.core import ListQuery, open_store
from ora_desktop.core.operations.search import SearchRequest, listing_query
from ora_desktop.views.first_rows import FIRST_ROWS, FirstRows, default_query


def make_file(seed_db, n: int = 30):
    path = seed_db()
    with open_store(path) as store:
        store.add_many({"id": f"m{i:03d}", "content": f"memory {i}", "type": "fact", "importance": 5,
                        "created_at": f"2026-01-{1 + i % 28:02d} 10:{i % 60:02d}:00"} for i in range(n))
    return path


def test_the_query_read_ahead_is_the_windows_first_listing(seed_db) -> None:
    path = make_file(seed_db, 5)
    with open_store(path) as store:
        window_listing = listing_query(store, SearchRequest(sort="created_at", descending=True))
        assert default_query(store) == window_listing.with_(limit=None, after=None).with_(limit=FIRST_ROWS)


def test_it_reads_the_newest_rows_and_hands_them_out_once(seed_db) -> None:
    path = make_file(seed_db, 30)
    ahead = FirstRows(open_store, path, rows=10)
    store = ahead.opened(path, readonly=False)
    assert store is not None and ahead.opened(path, readonly=False) is None, "the store is adopted once"
    query = default_query(store, 10)
    keys = ahead.take(store, query).result(timeout=10)
    assert list(keys) == list(store.row_keys(query))
    assert len(keys) == 10 and ahead.take(store, query).result(timeout=10) is None, "taken once"
    ahead.close()
    store.close()


def test_another_query_or_file_gets_nothing_and_reads_itself(seed_db, tmp_path) -> None:
    path = make_file(seed_db, 5)
    ahead = FirstRows(open_store, path)
    assert ahead.opened(tmp_path / "other.site.db", readonly=False) is None
    assert ahead.opened(path, readonly=True) is None, "a read-only window opens its own read-only store"
    store = ahead.opened(path, readonly=False)
    assert ahead.take(store, ListQuery(order_by="importance", limit=FIRST_ROWS)).result(timeout=10) is None
    with open_store(path) as other:
        assert ahead.take(other, default_query(other)).result(timeout=10) is None
    ahead.close()
    store.close()


def test_a_file_that_cannot_be_opened_is_left_to_the_window(tmp_path) -> None:
    bad = tmp_path / "notes.site.db"
    bad.write_text("not a database")
    ahead = FirstRows(open_store, bad)
    assert ahead.opened(bad, readonly=False) is None
    missing = FirstRows(open_store, tmp_path / "gone.site.db")
    assert missing.opened(tmp_path / "gone.site.db", readonly=False) is None
    assert not (tmp_path / "gone.site.db").exists(), "reading ahead creates nothing"
    ahead.close()
    missing.close()


def test_closing_waits_for_a_read_still_running_before_closing_its_store(seed_db) -> None:
    """A window closed (or a test ending) while the read-ahead still reads: the store is closed
    after the read, never under it (closing a connection mid-query can crash SQLite's module)."""
    import threading

    path = make_file(seed_db, 5)
    reading, release = threading.Event(), threading.Event()
    events: list[str] = []

    def opener(p, readonly=False):
        store = open_store(p, readonly=readonly)
        real_keys, real_close = store.row_keys, store.close

        def slow_row_keys(query):
            reading.set()
            release.wait(10)
            keys = real_keys(query)
            events.append("read")
            return keys

        def close():
            events.append("closed")
            real_close()
        store.row_keys, store.close = slow_row_keys, close
        return store

    ahead = FirstRows(opener, path)
    assert reading.wait(10)
    closer = threading.Thread(target=ahead.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive() and events == [], "close() must not close the store under the read"
    release.set()
    closer.join(10)
    assert events == ["read", "closed"]


def test_the_memories_of_the_keys_handed_out_come_with_them(seed_db) -> None:
    path = make_file(seed_db, 30)
    ahead = FirstRows(open_store, path, rows=10)
    store = ahead.opened(path, readonly=False)
    assert ahead.taken_memories().result(timeout=10) is None, "nothing before the keys are handed out"
    keys = ahead.take(store, default_query(store, 10)).result(timeout=10)
    memories = ahead.taken_memories().result(timeout=10)
    assert [m.rowid for m in memories] == list(keys) and memories == store.by_rowids(keys)
    ahead.close()
    store.close()


def test_no_memories_when_the_keys_answered_another_query(seed_db) -> None:
    path = make_file(seed_db, 5)
    ahead = FirstRows(open_store, path)
    store = ahead.opened(path, readonly=False)
    assert ahead.take(store, ListQuery(order_by="importance", limit=FIRST_ROWS)).result(timeout=10) is None
    assert ahead.taken_memories().result(timeout=10) is None
    ahead.close()
    store.close()
