"""The window's list state without Qt (``views/table.py``): a listing's keys and cached rows follow
an agent's commit as the change feed names it: rows inserted where SQLite sorts them, removed
where they were (the selection moving to the row that took their place), repainted in place, and
rows outside the view left alone. These run in the test environment that has no Qt."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from ora_desktop.core import ListQuery, open_store
from ora_desktop.views.refresh import plan_refresh
from ora_desktop.views.table import TableEvents, TableState, default_loader

from ..conftest import raw_seed_db
from .test_feed import agent, heard

ROWS = [(f"m{i:02d}", f"memory number {i}", ("fact", "preference")[i % 2], 1 + i % 10) for i in range(40)]
FACTS = ListQuery(types=("fact",), limit=None, order_by="importance", descending=True)


@pytest.fixture
def listed(tmp_path: Path):  # noqa: ANN201
    """``(path, store, state, events)``: the facts, most important first, every row cached."""
    path = raw_seed_db(tmp_path / "agent.site.db", ROWS)
    store = open_store(path)
    assert heard(store) == []
    events: list[tuple] = []
    state = TableState(page_size=8, events=TableEvents(
        removing=lambda row: events.append(("removing", row)), removed=lambda row: events.append(("removed", row)),
        inserting=lambda row: events.append(("inserting", row)), inserted=lambda row: events.append(("inserted", row)),
        changed=lambda first, last: events.append(("changed", first, last)),
    ))
    keys = store.row_keys(FACTS)
    state.replace_keys(keys, keep_rows=False, rows=store.by_rowids(keys))
    yield path, store, state, events
    store.close()


def follow(store, state: TableState):  # noqa: ANN001, ANN201
    """What the window does with the feed's one change: plan it, apply it."""
    [change] = heard(store)
    plan = plan_refresh(store, FACTS, state.keys, change)
    assert not plan.reload, plan.reason
    return change, state.apply(plan, every_change_listed=len(plan.rows) == len(change.changed))


def test_an_added_row_in_view_is_inserted_where_sqlite_sorts_it(listed):
    path, store, state, events = listed
    agent(path, "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                "VALUES ('new-1', 'an agent wrote this', 'fact', 6, datetime('now'), datetime('now'))")
    follow(store, state)
    assert list(state.keys) == list(store.row_keys(FACTS))
    at = state.row_of_key(store.get("new-1").rowid)
    assert events == [("inserting", at), ("inserted", at)]
    assert state.memory_at(at).id == "new-1"  # cached with its row: no page read to show it


def test_a_changed_row_outside_the_view_leaves_the_list_alone(listed):
    path, store, state, events = listed
    keys, cached = array("q", state.keys), state.fresh_rows()
    agent(path, "UPDATE memories SET importance = 9 WHERE id = 'm01'")  # a preference: not listed
    _change, edited = follow(store, state)
    assert state.keys == keys and state.fresh_rows() == cached
    assert events == [] and edited is None


def test_a_changed_row_in_view_is_repainted_with_its_old_and_new_values(listed):
    path, store, state, events = listed
    row = state.row_of_key(store.get("m10").rowid)
    agent(path, "UPDATE memories SET health_score = 0.05 WHERE id = 'm10'")
    _change, edited = follow(store, state)
    assert events == [("changed", row, row)]
    before, after = edited
    assert [m.health_score for m in before] == [1.0] and [m.health_score for m in after] == [0.05]
    assert state.memory_at(row).health_score == 0.05


def test_a_removed_selected_row_moves_the_selection_to_the_row_that_took_its_place(listed):
    path, store, state, events = listed
    selected = store.get("m10")
    place = state.row_of_key(selected.rowid)
    following = state.memory_at(place + 1)
    agent(path, "DELETE FROM memories WHERE id = 'm10'")
    follow(store, state)
    assert events == [("removing", place), ("removed", place)]
    assert state.row_to_select(selected.rowid, place) == place
    assert state.memory_at(place) == following
    last = state.memory_at(len(state.keys) - 1)
    agent(path, "DELETE FROM memories WHERE id = ?", params=[[last.id]])
    follow(store, state)
    assert state.row_to_select(last.rowid, len(state.keys)) == len(state.keys) - 1  # the one above


def test_the_row_of_a_key_is_found_even_where_its_bytes_straddle_two_keys():
    state = TableState()
    assert state.row_of_key(5) is None  # nothing listed
    state.replace_keys(array("q", [5 << 8, 0, 5, -1]), keep_rows=False)  # 5's bytes also span the first two keys
    assert state.row_of_key(5) == 2
    assert state.row_of_key(5 << 8) == 0 and state.row_of_key(-1) == 3
    assert state.row_of_key(7) is None


def test_a_sort_changes_only_the_order_and_the_same_sort_again_nothing():
    state = TableState()
    state.query = FACTS
    assert state.sort("created_at", descending=False)
    assert state.query == FACTS.with_(order_by="created_at", descending=False)  # the filters stay
    assert not state.sort("created_at", descending=False)


def test_the_rest_of_the_keys_after_a_first_screenful_marks_a_part_page_to_read_again(listed):
    _path, store, _state, _events = listed
    keys = store.row_keys(FACTS)
    state = TableState(page_size=8)
    state.replace_keys(keys[:12], keep_rows=False, rows=store.by_rowids(keys[:12]))  # a page and a half
    assert state.cached(10) == (store.by_rowids([keys[10]])[0], False) and state.memory_at(12) is None
    state.extend(keys)
    assert state.keys == keys
    assert state.cached(10)[1] and state.cached(13) == (None, True)  # the part page is read again, with its new rows
    assert not state.cached(3)[1]


def test_the_dirty_first_order_lists_what_awaits_a_sync_first(listed):
    path, store, _state, _events = listed
    agent(path, "UPDATE memories SET synced_at = datetime(updated_at, '+1 minute') WHERE id < 'm20'")
    keys = default_loader(store, FACTS.with_(order_by="dirty"))
    ids = [m.id for m in store.by_rowids(keys)]
    assert sorted(ids) == sorted(m.id for m in store.list(FACTS))
    synced = [i < "m20" for i in ids]
    assert synced == sorted(synced) and any(synced) and not all(synced)  # the unsynced first


def test_only_the_default_list_is_comparable_with_a_files_count():
    """The status bar explains the sidebar's larger count only for the whole-file list: any
    filter, a search's field filter or showing superseded memories makes the numbers unrelated."""
    from ora_desktop.core.listing import ListQuery
    from ora_desktop.core.search.query import parse_query
    from ora_desktop.views.table import hides_only_superseded

    assert hides_only_superseded(ListQuery())
    assert hides_only_superseded(ListQuery(superseded="show", filters=parse_query(""), order_by="importance"))
    assert not hides_only_superseded(ListQuery(superseded="show"))
    assert not hides_only_superseded(ListQuery(types=("fact",)))
    assert not hides_only_superseded(ListQuery(superseded="show", filters=parse_query("type:fact")))
    assert not hides_only_superseded(ListQuery(filters=parse_query("is:superseded")))
