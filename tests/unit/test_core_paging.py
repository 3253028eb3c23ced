"""Keyset paging visits every row exactly once, in order, for random data and sort orders
(NULLs, ties, both timestamp formats, unparseable text), and cursor_at/row_keys agree with it."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ora_desktop import ListQuery, open_store
from ora_desktop.core.schema import INIT_SQL

SORTS = ["created_at", "updated_at", "expires_at", "last_accessed_at", "importance", "health_score",
         "access_count", "type", "id", "content", "sync_status", "superseded_by", "rowid"]

stamps = st.one_of(
    st.none(),
    st.sampled_from(["2025-01-14 10:30:00", "2025-01-14T10:30:00.000Z", "2025-01-14T12:30:00+02:00",
                     "2024-12-31 23:59:59", "2025-01-14T10:30:00.500Z", "not a date", ""]),
    st.datetimes(min_value=__import__("datetime").datetime(2020, 1, 1),
                 max_value=__import__("datetime").datetime(2026, 1, 1)).map(
        lambda d: d.strftime("%Y-%m-%d %H:%M:%S") if d.microsecond % 2 else d.strftime("%Y-%m-%dT%H:%M:%S.000Z")),
)
rows = st.lists(
    st.tuples(
        st.sampled_from(["fact", "task", "context"]),
        st.one_of(st.none(), st.integers(1, 10)),
        st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
        st.sampled_from(["pending", "synced", "local_only"]),
        st.text(alphabet="abAB é", min_size=1, max_size=3),
        st.integers(0, 3),
        stamps, stamps, stamps,
        st.sampled_from([None, None, "", "x"]),
    ),
    max_size=40,
)


def make_file(path, data):
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    conn.executemany(
        "INSERT INTO memories (id, type, importance, health_score, sync_status, content, access_count, "
        "created_at, updated_at, expires_at, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, "
        "coalesce(?, '2025-06-01 00:00:00'), coalesce(?, '2025-06-01 00:00:00'), ?, ?)",
        [(f"id{i % 7}-{i}", *row) for i, row in enumerate(data)],
    )
    conn.commit()
    conn.close()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows, order_by=st.sampled_from(SORTS), descending=st.booleans(), page=st.integers(1, 7),
       superseded=st.sampled_from(["hide", "show", "only"]))
def test_keyset_pages_visit_every_row_once_in_order(tmp_path, data, order_by, descending, page, superseded):
    path = tmp_path / "paging.site.db"
    make_file(path, data)
    with open_store(path, readonly=True) as store:
        query = ListQuery(order_by=order_by, descending=descending, superseded=superseded, limit=None)
        everything = [m.id for m in store.list(query)]
        assert len(everything) == store.count(query)
        seen, cursor = [], None
        while True:
            chunk = store.list(query.with_(limit=page, after=cursor))
            seen += [m.id for m in chunk]
            if len(chunk) < page:
                break
            cursor = store.cursor_for(chunk[-1], order_by)
        assert seen == everything
        assert [m.id for m in store.iter_all(query, page=page)] == everything
        assert store.by_rowids(store.row_keys(query)) == store.list(query)
        for offset in {0, len(everything) // 2, len(everything) - 1} if everything else ():
            after = store.cursor_at(offset, query)
            rest = [m.id for m in store.list(query.with_(after=after))]
            assert rest == everything[offset + 1:]
        assert store.cursor_at(len(everything), query) is None


def expected_facets(memories):
    """Facet counts computed in Python from the records themselves."""
    from collections import Counter

    def bucket(h):
        return "unknown" if h is None else ("0.0-0.1", "0.1-0.2", "0.2-0.3", "0.3-0.4", "0.4-0.5", "0.5-0.6",
                                            "0.6-0.7", "0.7-0.8", "0.8-0.9", "0.9-1.0")[max(0, min(9, int(h * 10)))]

    return (len(memories), Counter(str(m.type) for m in memories), Counter(str(m.sync_status) for m in memories),
            Counter(m.importance for m in memories), Counter(bucket(m.health_score) for m in memories))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=rows, superseded=st.sampled_from(["hide", "show", "only"]),
       types=st.sampled_from([(), ("fact",), ("task", "context")]))
def test_facets_match_the_rows_listed(tmp_path, data, superseded, types):
    path = tmp_path / "facets.site.db"
    make_file(path, data)
    with open_store(path, readonly=True) as store:
        query = ListQuery(superseded=superseded, types=types, limit=None)
        facets = store.facets(query)
        total, types_, syncs, importance, buckets = expected_facets(store.list(query))
    assert facets.total == total == store.count(query)
    assert facets.types == dict(types_) and facets.sync_statuses == dict(syncs)
    assert facets.importance == dict(importance)
    assert {k: v for k, v in facets.health_buckets.items() if v} == dict(buckets)


def test_cursor_for_a_row_deleted_meanwhile_still_continues_the_order(seed_db):
    path = seed_db([(f"m{i:02d}", f"memory {i}", "fact", 1 + i % 10) for i in range(30)])
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET created_at = datetime('2025-01-01', '+' || rowid || ' hours'), "
                 "updated_at = datetime('2025-01-01', '+' || rowid || ' hours')")
    conn.commit()
    with open_store(path) as store:
        for order_by in ("created_at", "updated_at", "importance", "id"):
            everything = [m.id for m in store.list(order_by=order_by, limit=None)]
            page = store.list(order_by=order_by, limit=10)
            store.delete(page[-1].id)
            cursor = store.cursor_for(page[-1], order_by)
            rest = [m.id for m in store.list(order_by=order_by, limit=None, after=cursor)]
            assert rest == everything[10:], order_by
            store.restore_deleted([t.trash_id for t in store.trash()])
    conn.close()


def test_content_sorts_without_regard_to_case(seed_db):
    path = seed_db([("b-2", "banana", "fact", 5), ("A-1", "Apple", "fact", 5), ("c-3", "Cherry", "fact", 5),
                    ("a-0", "apricot", "fact", 5)])
    with open_store(path, readonly=True) as store:
        assert [m.content for m in store.list(order_by="content", descending=False)] == \
            ["Apple", "apricot", "banana", "Cherry"]
