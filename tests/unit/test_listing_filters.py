"""A listing's filters travel as a parsed query (``ListQuery.filters``), never as SQL text: the
rows listed are those the search language names, SQL is rendered only in core, and a filter a
listing cannot answer (tags, which need the search index) is refused in one line."""

from __future__ import annotations

import dataclasses

import pytest

from ora_desktop.core import InvalidValue, ListQuery, open_store
from ora_desktop.core.operations.search import SearchRequest, listing_query
from ora_desktop.core.search import parse_query

ROWS = [(f"m{i:02d}", f"memory {i}", ("fact", "preference", "context")[i % 3], 1 + i % 10) for i in range(30)]


def test_parsed_filters_list_what_the_search_language_names(seed_db):
    with open_store(seed_db(ROWS)) as store:
        query = ListQuery(limit=None, superseded="show", filters=parse_query("type:fact importance:>=7 -type:context"))
        listed = store.list(query)
        assert {m.id for m in listed} == {f"m{i:02d}" for i in range(30)
                                          if i % 3 == 0 and 1 + i % 10 >= 7}
        either = store.list(ListQuery(limit=None, filters=parse_query("importance:2,10")))
        assert {m.importance for m in either} == {2, 10}


def test_is_pinned_on_a_file_nobody_pinned_in_lists_nothing_and_its_negation_everything(seed_db):
    with open_store(seed_db(ROWS)) as store:
        pinned = listing_query(store, SearchRequest(text="is:pinned"))
        assert store.row_keys(pinned) == store.row_keys(pinned.with_(ids=()))
        assert len(store.row_keys(listing_query(store, SearchRequest(text="-is:pinned")))) == 30


def test_a_tag_filter_in_a_listing_is_refused_in_one_line_and_nothing_is_listed(seed_db):
    with open_store(seed_db(ROWS)) as store:
        with pytest.raises(InvalidValue, match="tag: filters need the search index"):
            store.list(ListQuery(filters=parse_query("tag:deploy")))


def test_no_sql_text_travels_in_a_list_query():
    names = {f.name for f in dataclasses.fields(ListQuery)}
    assert "extra_where" not in names and "filters" in names


def test_is_pinned_asked_of_the_store_itself_on_a_file_without_pins_is_answered(seed_db):
    with open_store(seed_db(ROWS)) as store:
        assert store.list(ListQuery(filters=parse_query("is:pinned"))) == []
        assert store.count(ListQuery(filters=parse_query("-is:pinned type:fact"))) == 10
