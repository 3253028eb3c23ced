"""One search request, one core call: facet ticks are query-language filters, applied before
ranking, so a tick and the typed filter list the same rows and counts agree with results."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.health_buckets import HEALTH_BUCKETS, bucket_filter
from ora_desktop.core.operations.search import (
    QUICK_FILTERS,
    Cancelled,
    SearchRequest,
    facet_filter,
    search_memories,
)
from ora_desktop.core.search import ensure_index, parse_query

from .search_support import make_file


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """A 50,000-memory demo file (seeded, fixed clock) and the cache folder holding its index."""
    folder = tmp_path_factory.mktemp("big")
    path = folder / "agent.site.db"
    write_agent(path, memories=50_000, seed=11, now=datetime(2026, 1, 1, tzinfo=UTC))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        ensure_index(path)
    return path, folder / "cache"


@pytest.fixture
def big(big_file, monkeypatch):
    path, cache = big_file
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    with open_store(path, readonly=True) as store:
        yield store


TICKS = [
    ("type", ("fact",)),
    ("type", ("fact", "task")),
    ("sync", ("pending",)),
    ("importance", ("7", "9")),
    ("health", ("0.0-0.1",)),
    ("health", ("0.3-0.4", "0.9-1.0")),
    ("created", ("1-12 months ago", "over a year ago")),
]


@pytest.mark.slow
@pytest.mark.parametrize("words", ["", "deploy"])
@pytest.mark.parametrize("group,values", TICKS)
def test_a_facet_tick_lists_what_the_typed_filter_lists_on_50000_memories(big, words, group, values):
    ticked = search_memories(big, SearchRequest(text=words, ticks=((group, values),)))
    typed = search_memories(big, SearchRequest(text=f"{words} {facet_filter(group, values)}".strip()))
    assert list(ticked.keys) == list(typed.keys)
    assert ticked.total == typed.total
    # The count the facet panel showed for those values, before ticking, is what ticking lists.
    before = search_memories(big, SearchRequest(text=words))
    assert sum(before.facets[group].get(v, 0) for v in values) == ticked.total
    assert ticked.total > 0


@pytest.mark.slow
def test_ticks_apply_before_the_limit_not_to_the_best_thousand(big):
    """Ticking 'preference' with a broad word finds preferences beyond the best 1,000 of all hits."""
    everything = search_memories(big, SearchRequest(text="deploy", limit=1000))
    assert everything.total > 1000
    ticked = search_memories(big, SearchRequest(text="deploy", ticks=(("type", ("preference",)),), limit=1000))
    listed = big.by_rowids(list(ticked.keys))
    assert {m.type for m in listed} == {"preference"}
    among_best = sum(1 for m in big.by_rowids(list(everything.keys)) if m.type == "preference")
    assert len(listed) == min(1000, ticked.total) > among_best


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(QUICK_FILTERS))
def test_quick_filters_are_query_language_words(big, name):
    quick = search_memories(big, SearchRequest(text="deploy", quick=(name,)))
    typed = search_memories(big, SearchRequest(text=f"deploy {QUICK_FILTERS[name][2]}"))
    assert list(quick.keys) == list(typed.keys)


@pytest.mark.slow
def test_a_ticked_group_counts_as_if_nothing_in_it_were_ticked(big):
    plain = search_memories(big, SearchRequest())
    ticked = search_memories(big, SearchRequest(ticks=(("type", ("fact",)),)))
    assert ticked.facets["type"] == plain.facets["type"]  # other types stay offered, with their counts
    assert sum(ticked.facets["sync"].values()) == ticked.total == plain.facets["type"]["fact"]


def test_health_buckets_count_and_filter_by_one_rule_at_the_edges(tmp_path):
    values = [0.0, 0.09999, 0.1, 0.3, 0.30000000000000004, 0.7, 0.8999, 0.9, 1.0, None]
    path = make_file(tmp_path / "edges.site.db",
                     [{"id": f"m{i}", "content": f"edge {i}", "health_score": v} for i, v in enumerate(values)])
    import sqlite3

    # A foreign writer's NULL health (the seed's CHECK allows it only through a table rebuild).
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET health_score = NULL WHERE id = 'm9'")
    conn.commit()
    conn.close()
    with open_store(path, readonly=True) as store:
        counts = search_memories(store, SearchRequest()).facets["health"]
        for label in (*HEALTH_BUCKETS, "unknown"):
            listed = search_memories(store, SearchRequest(ticks=(("health", (label,)),)))
            assert len(listed.keys) == counts.get(label, 0), label
        assert counts["0.0-0.1"] == 2 and counts["0.1-0.2"] == 1 and counts["0.3-0.4"] == 2
        assert counts["0.9-1.0"] == 2 and counts["unknown"] == 1
    assert bucket_filter("0.3-0.4") == "0.3..<0.4"


def test_either_or_filters_parse_and_never_raise():
    parsed = parse_query("importance:7,9 health:<0.1,none created:<1d,>=365d")
    assert len(parsed.any_of) == 3
    assert parsed.has_filters
    assert parse_query("health:0.3..<0.4").health == ((">=", 0.3), ("<", 0.4))
    assert parse_query("importance:7").importance == (("=", 7.0),)  # one value: as before
    assert len(parse_query("created:1d..<7d").times) == 2 and not parse_query("created:1d..<7d").warnings
    assert parse_query("importance:7,x").warnings  # a bad item is named, the rest kept
    assert len(parse_query("importance:7,x").importance) == 1


def test_stemmed_matches_are_highlighted_from_the_answer(tmp_path):
    path = make_file(tmp_path / "stem.site.db", [
        {"id": "a", "content": "The worker runs nightly and ran twice yesterday"},
        {"id": "b", "content": "Nothing about it here"},
    ])
    with open_store(path, readonly=True) as store:
        answer = search_memories(store, SearchRequest(text="running"))
        assert answer.ids == ("a",)
        text = store.get("a").content
        marked = [text[s:e] for s, e in answer.spans(text)]
        assert "runs" in marked
        snippet, inside = answer.snippet(store.get("a"))
        assert [snippet[s:e] for s, e in inside] == marked


def test_a_cancelled_request_stops_with_a_clear_error(tmp_path):
    path = make_file(tmp_path / "c.site.db", [{"id": "a", "content": "deploy notes"}])
    stop = threading.Event()
    stop.set()
    with open_store(path, readonly=True) as store, pytest.raises(Cancelled, match="newer"):
        search_memories(store, SearchRequest(text="deploy"), cancel=stop)


@pytest.mark.parametrize("text", ['"unbalanced', "NEAR(a b", "a AND OR", "*", "'; DROP TABLE memories; --"])
def test_fts_syntax_in_the_box_answers_without_raising(tmp_path, text):
    path = make_file(tmp_path / "f.site.db", [{"id": "a", "content": "unbalanced quote near a table"}])
    with open_store(path, readonly=True) as store:
        answer = search_memories(store, SearchRequest(text=text))
        assert answer.total is not None or answer.keys is not None
        assert store.count() == 1  # nothing changed


def test_bad_request_values_name_what_is_wrong(tmp_path):
    path = make_file(tmp_path / "b.site.db", [{"id": "a", "content": "x"}])
    from ora_desktop.core import InvalidValue

    with open_store(path, readonly=True) as store:
        with pytest.raises(InvalidValue, match="mode"):
            search_memories(store, SearchRequest(text="x", mode="psychic"))
        with pytest.raises(InvalidValue, match="health bucket"):
            search_memories(store, SearchRequest(ticks=(("health", ("0.35-0.4",)),)))
        with pytest.raises(InvalidValue, match="not one of"):
            search_memories(store, SearchRequest(quick=("nonsense",)))


def test_an_obsolete_facet_count_is_interrupted_inside_sqlite(tmp_path):
    """The count over every match stops mid-statement when its request is superseded, so it
    neither holds the index lock the next keystroke needs nor keeps a core busy."""
    rows = [{"id": f"m{i}", "content": f"deploy note {i}"} for i in range(3000)]
    path = make_file(tmp_path / "many.site.db", rows)
    ensure_index(path)
    with open_store(path, readonly=True) as store:
        answer = search_memories(store, SearchRequest(text="deploy", limit=10, facets=False))
        from ora_desktop.core.operations.search import count_answer_facets

        polled = []

        def superseded() -> bool:
            polled.append(1)
            return True  # a newer keystroke came as soon as SQLite first asked

        with pytest.raises(Cancelled):
            count_answer_facets(store, answer, superseded)
        assert polled  # asked while the statement ran, not only between steps
        counted = count_answer_facets(store, answer)  # the connection is usable afterwards
        assert counted.total == 3000


def test_a_facet_count_checks_for_cancel_rarely_but_stops_when_asked(tmp_path, monkeypatch):
    """The count's cancel check is a call into Python (it takes the GIL the window's thread needs
    for every cell it paints): a count over a few thousand matches checks only a few times, and a
    cancel seen at a check still stops it with a clear error."""
    from ora_desktop.core.search import ensure_index, parse_query
    from ora_desktop.core.search.counting import Interrupted, match_facets

    path = make_file(tmp_path / "n.site.db",
                     [{"id": f"m{i}", "content": f"deploy note {i} about the pipeline"} for i in range(4000)])
    ensure_index(path)
    checks: list[int] = []

    def never() -> bool:
        checks.append(1)
        return False

    with open_store(path, readonly=True) as store:
        counted = match_facets(store, parse_query("deploy"), never)
        assert counted is not None and sum(counted[0].values()) == 4000
        assert len(checks) <= 5, f"{len(checks)} cancel checks for one count of 4,000 matches"
        monkeypatch.setattr("ora_desktop.core.search.counting.CANCEL_CHECK_STEPS", 1000)  # a long count's pace
        with pytest.raises(Interrupted):
            match_facets(store, parse_query("deploy"), lambda: True)
