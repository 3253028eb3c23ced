"""The window's search state without Qt (``views/search.py``): a new question selects its top
row while the same one asked again keeps the selection; the facet counts shown move by an edited
row's old and new values (and count added and removed rows in and out) without a recount; a
listing's counts come back after a search until a file is written."""

from __future__ import annotations

from dataclasses import replace

from ora_desktop.core.records import Memory
from ora_desktop.views.search import FacetCounts, SearchState

STORE = object()  # whatever the window passes for the file shown


def memory(importance: int, type_: str = "fact", health: float = 1.0) -> Memory:
    return Memory(id="m1", content="the same words", type=type_, importance=importance,
                  health_score=health, sync_status="pending")


def shown_counts() -> FacetCounts:
    return FacetCounts(3, {"type": {"fact": 2, "preference": 1}, "importance": {"5": 1, "7": 2},
                           "sync": {"pending": 3}, "health": {"0.9-1.0": 3}})


def test_a_new_question_selects_its_top_row_and_the_same_one_again_does_not():
    state = SearchState()
    first = state.request(sort="created_at", descending=True)
    assert state.ask(STORE, first) and state.selects_top(STORE)
    assert not state.ask(STORE, first)  # a refresh after a write: the selection stays
    state.text = "deploy"
    assert state.ask(STORE, state.request(sort="rank", descending=True))
    state.filters.toggle_facet("type", "fact", True)
    assert state.ask(STORE, state.request(sort="rank", descending=True))
    state.scope = "all"  # words searched across every site: the table does not show them
    assert state.ask(STORE, state.request(sort="rank", descending=True)) and not state.selects_top(STORE)
    assert not state.selects_top(None)


def test_facets_shift_by_an_edits_old_and_new_values():
    heard: list[FacetCounts] = []
    state = SearchState(facets_shown=heard.append)
    state.ask(STORE, state.request(sort="created_at", descending=True))
    state.show(STORE, state.generation, shown_counts())
    old = memory(5)
    assert state.shift(STORE, ((old,), (replace(old, importance=7, type="preference"),)))
    groups = heard[-1].groups
    assert groups["importance"] == {"7": 3} and groups["type"] == {"fact": 1, "preference": 2}
    assert heard[-1].total == 3
    assert state.shift(STORE, ((None,), (memory(5),)))  # a row added in view counts in
    assert heard[-1].total == 4 and heard[-1].groups["importance"] == {"5": 1, "7": 3}


def test_counts_of_another_request_or_a_content_edit_are_counted_again():
    state = SearchState()
    state.ask(STORE, state.request(sort="created_at", descending=True))
    state.show(STORE, state.generation, shown_counts())
    old = memory(5)
    assert not state.shift(STORE, ((old,), (replace(old, content="other words"),)))  # tags come from content
    state.ask(STORE, state.request(sort="importance", descending=True))  # the counts are of an older request
    assert not state.shift(STORE, ((old,), (replace(old, importance=7),)))


def test_a_listings_counts_come_back_after_a_search_until_a_file_is_written():
    state = SearchState()
    state.ask(STORE, state.request(sort="created_at", descending=True))
    listing = state.request(sort="created_at", descending=True).query_text()
    state.show(STORE, state.generation, shown_counts(), listing=listing, writes=state.writes)
    assert state.listing_counts(STORE, listing, 3) == shown_counts()
    assert state.listing_counts(STORE, listing, 4) is None  # another number of rows
    state.written()
    assert state.listing_counts(STORE, listing, 3) is None


def test_tag_groups_counted_later_join_the_counts_of_the_same_request_only():
    state = SearchState()
    state.ask(STORE, state.request(sort="created_at", descending=True))
    listing = state.request(sort="created_at", descending=True).query_text()
    state.show(STORE, state.generation, shown_counts(), listing=listing, writes=state.writes)
    tags = {"tag:session": {"sess-1": 2}}
    assert state.add_groups(STORE, state.generation, tags)
    assert state.shown[2].groups["tag:session"] == {"sess-1": 2}
    assert state.shown[2].groups["type"] == shown_counts().groups["type"]  # the others hold
    assert state.listing_counts(STORE, listing, 3).groups["tag:session"] == {"sess-1": 2}  # kept with them
    asked = state.generation
    state.ask(STORE, state.request(sort="importance", descending=True))
    assert not state.add_groups(STORE, asked, {"tag:topic": {"x": 1}})  # another request is shown now
    assert not state.add_groups(object(), state.generation, tags)
