"""plan_refresh: after a write, a listed view repaints the changed rows in place, and reads the
row keys again exactly when membership or order can have changed."""

from __future__ import annotations

import random

import pytest

from ora_desktop.core import Change, ListQuery, open_store
from ora_desktop.views.refresh import MAX_CHANGED, merge_changes, plan_refresh

EVERYTHING = ListQuery(limit=None)


@pytest.fixture
def store(seed_db):
    path = seed_db()
    with open_store(path) as s:
        s.add_many({
            "id": f"m{i:02d}", "content": f"{'Zeta' if i % 4 == 0 else 'alpha'} memory {i}",
            "type": ("fact", "preference", "context")[i % 3], "importance": 1 + i % 10,
            "health_score": round((i % 11) / 10, 2), "created_at": f"2026-01-{1 + i:02d} 10:00:00",
        } for i in range(28))
        yield s


def changed(*ids: str) -> Change:
    return Change(changed=frozenset(ids), source="update")


def test_an_importance_edit_repaints_the_row_in_place(store):
    keys = store.row_keys(EVERYTHING)  # newest first
    target = store.by_rowids([keys[5]])[0]
    store.update(target.id, importance=9 if target.importance != 9 else 2)
    plan = plan_refresh(store, EVERYTHING, keys, changed(target.id))
    assert not plan.reload
    assert [(pos, m.id) for pos, m in plan.rows] == [(5, target.id)]
    assert plan.rows[0][1].importance == store.get(target.id).importance  # the fresh value
    assert store.row_keys(EVERYTHING) == keys


def test_unknown_rows_a_ranked_list_or_the_dirty_order_reload(store):
    keys = store.row_keys(EVERYTHING)
    external = plan_refresh(store, EVERYTHING, keys, Change(source="external"))
    assert external.reload and "another program" in external.reason
    gone = plan_refresh(store, EVERYTHING, keys, Change(removed=frozenset({"m01"})))  # no rowid known
    assert gone.reload and "not known" in gone.reason
    assert plan_refresh(store, EVERYTHING, keys, changed("m01"), ranked=True).reload
    assert plan_refresh(store, EVERYTHING.with_(order_by="dirty"), keys, changed("m01")).reload
    listed = plan_refresh(store, EVERYTHING, keys, Change(added=frozenset({"m01"})))  # keys read after the add
    assert not listed.reload and not listed.inserts


@pytest.mark.parametrize("query", [EVERYTHING, EVERYTHING.with_(order_by="importance", descending=True),
                                   EVERYTHING.with_(types=("fact",), order_by="health_score")],
                         ids=["newest first", "by importance", "facts by health"])
def test_new_rows_are_placed_where_a_key_read_would_list_them(store, query):
    keys = store.row_keys(query)
    store.add_many([{"id": "new-a", "content": "added", "type": "fact", "importance": 6, "health_score": 0.45},
                    {"id": "new-b", "content": "added", "type": "context", "importance": 3, "health_score": 0.05}])
    plan = plan_refresh(store, query, keys, Change(added=frozenset({"new-a", "new-b"})))
    assert not plan.reload
    placed = list(keys)
    for shift, (pos, memory) in enumerate(plan.inserts):
        placed.insert(pos + shift, memory.rowid)
    assert placed == list(store.row_keys(query))
    # Keys read after the write list the new rows already: nothing is inserted twice.
    again = plan_refresh(store, query, store.row_keys(query), Change(added=frozenset({"new-a", "new-b"})))
    assert not again.reload and not again.inserts


def test_removed_rows_with_known_rowids_are_removed_where_they_were(store):
    keys = store.row_keys(EVERYTHING)
    gone = store.by_rowids([keys[3], keys[17]])
    store.delete([m.id for m in gone])
    plan = plan_refresh(store, EVERYTHING, keys, Change(removed=frozenset(m.id for m in gone),
                                                        removed_rowids=frozenset(m.rowid for m in gone)))
    assert not plan.reload and plan.removes == (3, 17)


def test_an_edit_of_the_sort_column_reloads_only_when_the_row_moves(store):
    query = EVERYTHING.with_(order_by="importance", descending=True)
    keys = store.row_keys(query)
    rows = store.by_rowids(keys)
    # A row whose new importance equals its old one ties the same way: still in place.
    middle = rows[10]
    store.update(middle.id, importance=middle.importance)
    assert not plan_refresh(store, query, keys, changed(middle.id)).reload
    # The most important row becomes the least important: it moves to the end.
    store.update(rows[0].id, importance=1)
    plan = plan_refresh(store, query, keys, changed(rows[0].id))
    assert plan.reload and "sort order" in plan.reason
    assert store.row_keys(query) != keys


def test_content_sort_follows_sqlite_collation(store):
    query = EVERYTHING.with_(order_by="content", descending=False)
    keys = store.row_keys(query)
    first = store.by_rowids([keys[0]])[0]
    # Upper and lower case sort together (NOCASE): an edit that only changes case stays put.
    store.update(first.id, content=first.content.upper())
    assert not plan_refresh(store, query, keys, changed(first.id)).reload
    store.update(first.id, content="zzz last now")
    assert plan_refresh(store, query, keys, changed(first.id)).reload


def test_an_edit_of_a_filtered_column_reloads_when_membership_changes(store):
    query = EVERYTHING.with_(importance_min=7)
    keys = store.row_keys(query)
    listed = store.by_rowids(keys)
    unlisted = [m for m in store.list(EVERYTHING) if m.importance < 7]
    # A listed row that still matches: repaint only.
    store.update(listed[0].id, importance=8 if listed[0].importance != 8 else 9)
    assert not plan_refresh(store, query, keys, changed(listed[0].id)).reload
    # An unlisted row that still does not match: nothing at all.
    store.update(unlisted[0].id, importance=2 if unlisted[0].importance != 2 else 3)
    plan = plan_refresh(store, query, keys, changed(unlisted[0].id))
    assert not plan.reload and plan.rows == ()
    # A listed row that leaves the filter, and an unlisted row that enters it: reload.
    store.update(listed[1].id, importance=1)
    assert plan_refresh(store, query, keys, changed(listed[1].id)).reload
    keys = store.row_keys(query)
    store.update(unlisted[1].id, importance=10)
    assert plan_refresh(store, query, keys, changed(unlisted[1].id)).reload


def test_a_changed_id_that_is_gone_reloads(store):
    keys = store.row_keys(EVERYTHING)
    assert plan_refresh(store, EVERYTHING, keys, changed("no-such-memory")).reload


def test_a_bulk_edit_past_the_limit_reloads(store):
    keys = store.row_keys(EVERYTHING)
    ids = [f"x{i}" for i in range(MAX_CHANGED + 1)]
    assert plan_refresh(store, EVERYTHING, keys, changed(*ids)).reload


def test_a_repaint_is_only_ever_planned_when_the_keys_are_unchanged(store):
    """Random edits of random columns under random filters and orders: whenever the plan says
    "repaint in place", reading the keys again gives exactly the keys the view holds."""
    rng = random.Random(20261123)
    orders = ("created_at", "importance", "health_score", "content", "type", "updated_at", "access_count")
    queries = [EVERYTHING.with_(order_by=order, descending=desc) for order in orders for desc in (True, False)]
    queries += [EVERYTHING.with_(types=("fact",)), EVERYTHING.with_(health_min=0.5, order_by="health_score"),
                EVERYTHING.with_(importance_max=4, order_by="importance", descending=False)]
    ids = [m.id for m in store.list(EVERYTHING)]
    repaints = reloads = 0
    for _ in range(150):
        query = rng.choice(queries)
        keys = store.row_keys(query)
        targets = rng.sample(ids, rng.choice((1, 1, 2, 3)))
        field = rng.choice(("importance", "health_score", "type", "content"))
        for memory_id in targets:
            value = {"importance": rng.randint(1, 10), "health_score": rng.choice((0.0, 0.3, 0.5, 0.9, 1.0)),
                     "type": rng.choice(("fact", "context", "task")),
                     "content": rng.choice(("alpha", "Alpha", "beta", "zeta", "ZETA b"))}[field]
            store.update(memory_id, **{field: value})
        plan = plan_refresh(store, query, keys, changed(*targets))
        if plan.reload:
            reloads += 1
        else:
            repaints += 1
            assert store.row_keys(query) == keys, (query, field, targets)
            listed = set(keys)
            assert {m.id for _, m in plan.rows} == {i for i in targets if store.get(i).rowid in listed}
    assert repaints > 30 and reloads > 10  # both paths were exercised


def test_shift_facets_moves_an_edited_memory_between_values_as_a_fresh_count_would():
    from dataclasses import replace
    from datetime import UTC, datetime, timedelta

    from ora_desktop.core import Memory
    from ora_desktop.views.facets import shift_facets

    now = datetime(2026, 3, 1, tzinfo=UTC)
    old = Memory(id="a", content="x", type="fact", importance=5, health_score=0.55, sync_status="synced",
                 created_at=now - timedelta(days=3))
    groups = {
        "type": {"task": 3, "fact": 2},
        "sync": {"pending": 4, "synced": 1},
        "importance": {"7": 1, "5": 2, "2": 2},
        "health": {"0.9-1.0": 4, "0.5-0.6": 1},
        "created": {"1-7 days ago": 5},
        "tag:topic": {"deploy": 2},
    }
    new = replace(old, type="task", importance=9, health_score=1.0, sync_status="pending")
    shifted = shift_facets(groups, [old], [new], now=now)
    assert shifted["type"] == {"task": 4, "fact": 1}
    assert shifted["sync"] == {"pending": 5}
    assert list(shifted["importance"].items()) == [("9", 1), ("7", 1), ("5", 1), ("2", 2)]
    assert shifted["health"]["0.9-1.0"] == 5 and shifted["health"]["0.5-0.6"] == 0
    assert list(shifted["health"])[0] == "0.9-1.0" and "unknown" not in shifted["health"]
    assert shifted["created"] == {"1-7 days ago": 5} and shifted["tag:topic"] == {"deploy": 2}
    assert groups["type"] == {"task": 3, "fact": 2}  # the counts given are not changed
    # only counting again can tell: a content edit (tags), a status not counted yet, other counts
    assert shift_facets(groups, [old], [replace(new, content="y")], now=now) is None
    assert shift_facets(groups, [old], [replace(old, sync_status="local_only")], now=now) is None
    assert shift_facets({**groups, "type": {"task": 3}}, [old], [new], now=now) is None


@pytest.mark.parametrize("numpy_loaded", [True, False], ids=["numpy loaded", "no numpy"])
def test_positions_are_found_across_slices_and_key_borders(monkeypatch, numpy_loaded):
    import sys
    from array import array

    from ora_desktop.views import positions as found_in

    if numpy_loaded:
        import numpy  # noqa: F401
    else:
        monkeypatch.setitem(sys.modules, "numpy", None)  # the byte search, slice by slice
    monkeypatch.setattr(found_in, "SLICE_KEYS", 4)
    keys = array("q", [5, 1 << 40, 7, 256, -3, 9, 11, 256 << 8, 13])  # 1 << 40 and 256 share bytes across key borders
    few = [7, 256, -3, 4, 1 << 40, 13]
    expected = {7: 2, 256: 3, -3: 4, 1 << 40: 1, 13: 8}
    assert found_in.positions(keys, few) == expected
    assert found_in.positions(keys, few + list(range(1000, 1020))) == expected
    assert found_in.position(keys, 13) == 8 and found_in.position(keys, 4) is None


def test_an_edit_names_the_columns_it_wrote_and_only_a_health_edit_can_move_file_health(seed_db) -> None:
    from ora_desktop.core.operations.stats import health_may_change

    heard: list[Change] = []
    with open_store(seed_db()) as store:
        store.add_many({"id": f"m{i}", "content": f"memory {i}", "type": "fact"} for i in range(3))
        store.subscribe(heard.append)
        store.update("m0", importance=9)
        store.update_many(["m1", "m2"], health_score=0.5)
    importance, health = heard[-2:]
    assert importance.columns == {"importance", "updated_at", "sync_status"}
    assert not health_may_change(importance)
    assert "health_score" in health.columns and health_may_change(health)
    assert merge_changes([importance, health]).columns == importance.columns | health.columns
    assert merge_changes([importance, Change(changed=frozenset({"m0"}))]).columns is None  # one unknown
    assert health_may_change(Change(changed=frozenset({"m0"})))  # columns unknown: assume it can
    assert health_may_change(Change(added=frozenset({"m9"}), columns=frozenset({"importance"})))
