"""Searching one file: stemming, phrases, prefixes, exclusion, every filter, snippets, ranking."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ora_desktop.core import open_store
from ora_desktop.core.search import MARK_CLOSE, MARK_OPEN, index_state, match_spans, search, sidecar_path, tag_facets
from tests.unit.search_support import ids, make_file

ROWS = [
    {"id": "run", "content": "We run the deploy pipeline every Friday", "importance": 5},
    {"id": "running", "content": "The user was running pytest; TypeError in src/app.ts from createUser()",
     "type": "task", "importance": 8, "health_score": 0.9, "sync_status": "synced",
     "synced_at": "2025-02-01 00:00:00"},
    {"id": "whale", "content": "Exact phrase: the blue whale swims north", "type": "context", "importance": 3,
     "health_score": 0.2},
    {"id": "old", "content": "Old note about whales and krill", "superseded_by": "new"},
    {"id": "new", "content": "New note about whales and krill", "importance": 6},
    {"id": "expired", "content": "Temporary whales survey link", "expires_at": "2020-01-01 00:00:00",
     "sync_status": "local_only"},
    {"id": "pref", "content": "Prefers dark mode and concise answers ```python\nprint(1)\n```",
     "type": "preference", "importance": 9},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "anwe-sh" / "ora.site.db", ROWS)


def test_stemming_finds_run_for_running(db: Path) -> None:
    assert set(ids(search(db, "running"))) == {"run", "running"}
    assert set(ids(search(db, "runs"))) == {"run", "running"}


def test_phrase_prefix_exclusion_and_or(db: Path) -> None:
    assert ids(search(db, '"blue whale"')) == ["whale"]
    assert ids(search(db, '"whale blue"')) == []
    assert set(ids(search(db, "kri*"))) == {"new"}
    assert set(ids(search(db, "whales -krill"))) == {"whale", "expired"}
    assert set(ids(search(db, "krill OR pytest"))) == {"new", "running"}


def test_superseded_hidden_expired_flagged(db: Path) -> None:
    result = search(db, "whales")
    assert "old" not in ids(result)
    flags = {h.memory.id: h.expired for h in result.hits}
    assert flags["expired"] is True and flags["new"] is False
    assert ids(search(db, "whales is:superseded")) == ["old"]
    assert "old" in ids(search(db, "whales is:any"))
    assert ids(search(db, "whales is:expired")) == ["expired"]
    assert "expired" not in ids(search(db, "whales -is:expired"))


@pytest.mark.parametrize(("query", "expected"), [
    ("type:task", {"running"}),
    ("type:context,preference", {"whale", "pref"}),
    ("-type:fact", {"running", "whale", "pref"}),
    ("importance:>=8", {"running", "pref"}),
    ("importance:>8", {"pref"}),
    ("importance:3", {"whale"}),
    ("importance:5..6", {"run", "new", "expired"}),
    ("health:<0.3", {"whale"}),
    ("health:>=0.9", {"running", "run", "new", "expired", "pref"}),
    ("sync:synced", {"running"}),
    ("sync:local_only", {"expired"}),
    ("-sync:pending", {"running", "expired"}),
    ("sync:dirty", {"run", "whale", "new", "pref"}),
    ("tag:error=TypeError", {"running"}),
    ("tag:file=src/app.ts", {"running"}),
    ("tag:function=createUser", {"running"}),
    ("tag:language=python", {"pref"}),
    ("tag:typeerror", {"running"}),
    ("-tag:error=TypeError type:task", set()),
    ("site:anwe-sh type:task", {"running"}),
    ("site:elsewhere type:task", set()),
    ("agent:ora type:task", {"running"}),
    ("agent:writer type:task", set()),
    ("whales type:fact", {"new", "expired"}),
])
def test_every_field_filter(db: Path, query: str, expected: set[str]) -> None:
    assert set(ids(search(db, query))) == expected


def test_snippets_mark_matched_terms(db: Path) -> None:
    hit = search(db, "running").hits[0]
    assert f"{MARK_OPEN}running{MARK_CLOSE}" in hit.snippet or f"{MARK_OPEN}run{MARK_CLOSE}" in hit.snippet
    for start, end in hit.spans:
        assert hit.memory.content[start:end].lower().startswith("run")
    for start, end in hit.snippet_spans:
        assert hit.snippet_text[start:end].lower().startswith("run")
    assert search(db, "running").terms == ("running",)


def test_long_content_snippet_is_a_window_around_the_match(ora_home: Path) -> None:
    text = "filler " * 200 + "the needle is here " + "tail " * 200
    db = make_file(ora_home / "long.site.db", [{"id": "a", "content": text}])
    hit = search(db, "needle").hits[0]
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…") and len(hit.snippet_text) < 200
    assert f"{MARK_OPEN}needle{MARK_CLOSE}" in hit.snippet


def test_match_spans_in_any_text() -> None:
    text = "He kept running; she runs. See src/app.ts"
    assert [text[s:e] for s, e in match_spans(text, 'run "src/app.ts"')] == ["running", "runs", "src/app.ts"]


def test_facets_count_tags_of_hits(db: Path) -> None:
    result = search(db, "pytest OR dark")
    assert result.facets["error"] == {"TypeError": 1}
    assert result.facets["language"] == {"python": 1}
    facets = tag_facets(db)
    assert facets["file"] == {"src/app.ts": 1}
    assert tag_facets(db, "dark") == {"language": {"python": 1}, "function": {"print": 1}}


def test_ranking_prefers_importance_between_equal_matches(ora_home: Path) -> None:
    db = make_file(ora_home / "rank.site.db", [
        {"id": "low", "content": "invoice number alpha", "importance": 1},
        {"id": "high", "content": "invoice number beta", "importance": 10},
    ])
    result = search(db, "invoice")
    assert ids(result) == ["high", "low"]
    assert result.hits[0].score > result.hits[1].score
    assert all(h.bm25 is not None and h.bm25 < 0 for h in result.hits)


def test_limit_and_nothing_typed(db: Path) -> None:
    assert len(search(db, "whales OR run OR dark", limit=2).hits) == 2
    assert search(db, "").hits == []
    assert search(db, "whales", limit=0).hits == []


@pytest.mark.parametrize("text", ['"', "NEAR(", "AND", "*", "'; DROP TABLE memories; --", "\x00\x1f",
                                  "a" * 10000, "tag:", "importance:>=x", "((((", "-"])
def test_hostile_input_returns_results_or_nothing(db: Path, text: str) -> None:
    result = search(db, text)
    assert isinstance(result.hits, list)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == len(ROWS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80))
def test_search_never_raises_on_any_text(db: Path, text: str) -> None:
    search(db, text)
    search(db, text, fallback=True)


def test_fallback_has_the_same_api_and_a_note(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORA_DESKTOP_NO_FTS5", "1")
    result = search(db, "running")
    assert result.fallback and "ranking is reduced" in result.note
    assert set(ids(result)) == {"run", "running"}
    assert ids(search(db, '"blue whale"')) == ["whale"]
    assert set(ids(search(db, "whales -krill"))) == {"whale", "expired"}
    assert set(ids(search(db, "type:task"))) == {"running"}
    tagged = search(db, "tag:error=TypeError")
    assert ids(tagged) == ["running"] and any("plain text" in w for w in tagged.warnings)
    hit = search(db, "running").hits[0]
    assert MARK_OPEN in hit.snippet and hit.spans
    assert not sidecar_path(db).exists()
    assert index_state(db).fts5 is False


def test_fallback_forced_by_argument(db: Path) -> None:
    result = search(db, "krill", fallback=True)
    assert result.fallback and ids(result) == ["new"]


def test_the_agent_file_is_never_written(db: Path) -> None:
    before = db.read_bytes()
    with sqlite3.connect(db) as conn:
        tables = conn.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall()
    search(db, "whales")
    tag_facets(db)
    assert db.read_bytes() == before
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall() == tables
    side = sidecar_path(db)
    assert side.exists() and str(side).startswith(os.environ["XDG_CACHE_HOME"])


def test_read_only_file_in_read_only_folder_is_searchable(ora_home: Path) -> None:
    folder = ora_home / "sites" / "ro"
    db = make_file(folder / "ora.site.db", ROWS)
    db.chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        listing = sorted(p.name for p in folder.iterdir())
        with open_store(db, readonly=True) as store:
            assert set(ids(store.search("whales"))) == {"new", "whale", "expired"}
        assert set(ids(search(db, "running"))) == {"run", "running"}
        assert sorted(p.name for p in folder.iterdir()) == listing
    finally:
        folder.chmod(stat.S_IRWXU)
        db.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_store_delegate(db: Path) -> None:
    with open_store(db) as store:
        assert set(ids(store.search("krill OR pytest", limit=5))) == {"new", "running"}


def test_unwritable_cache_falls_back_with_a_note(db: Path, isolated_dirs: Path) -> None:
    (isolated_dirs / "cache" / "ora-desktop").write_text("a file where the cache folder should be")
    result = search(db, "running")
    assert result.fallback and "cannot be written" in result.note
    assert set(ids(result)) == {"run", "running"}


@pytest.mark.parametrize(("content", "words"), [(b"", "empty"), (b"not a database at all" * 20, "not an SQLite")])
def test_a_broken_file_is_named_in_the_error(ora_home: Path, content: bytes, words: str) -> None:
    from ora_desktop.core import OraError

    bad = ora_home / "bad.site.db"
    bad.write_bytes(content)
    with pytest.raises(OraError) as caught:
        search(bad, "anything")
    assert "bad.site.db" in str(caught.value) and words in str(caught.value)
    assert bad.read_bytes() == content


def test_total_when_every_match_was_seen(db: Path) -> None:
    assert search(db, "whales", limit=1).total == 3
    assert search(db, "type:task").total == 1


def test_filter_only_queries_on_a_larger_file(ora_home: Path) -> None:
    rows = [{"id": f"f{i}", "content": f"filler note {i} about src/app.ts", "importance": 1 + i % 10}
            for i in range(400)]
    rows += [{"id": "rare", "content": "a KeyError in parse()", "type": "task", "importance": 2},
             {"id": "other", "content": "plain words only", "type": "task", "importance": 3}]
    db = make_file(ora_home / "big.site.db", rows)
    assert ids(search(db, "tag:error=KeyError")) == ["rare"]  # a rare tag drives the query
    common = search(db, "tag:file=src/app.ts", limit=10)  # a common tag: walk by importance
    assert len(common.hits) == 10 and all(h.memory.importance == 10 for h in common.hits)
    assert set(ids(search(db, "-filler type:task"))) == {"rare", "other"}
    assert ids(search(db, "-filler -plain")) == ["rare"]
    top = search(db, "type:fact", limit=5)
    assert [h.memory.importance for h in top.hits] == [10] * 5


TOKENS = ["whales", "run*", '"blue whale"', "-krill", "OR", "AND", "NOT", "NEAR(", "*", '"', "type:fact,task",
          "type:", "-type:task", "importance:>=99999999999999999999999", "importance:5..", "health:<-1",
          "health:0.5..0.1", "sync:dirty", "-sync:pending", "tag:file=\"", "tag:error=TypeError", "-tag:x",
          "tag:=", "site:anwe-sh", "agent:", "is:expired", "-is:expired", "is:superseded", "is:any", "is:",
          "'; DROP TABLE memories; --", "ünïcödé", "🙂", "\x00"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.sampled_from(TOKENS), max_size=8))
def test_any_mix_of_words_and_filters_never_raises(db: Path, tokens: list[str]) -> None:
    query = " ".join(tokens)
    result = search(db, query)
    assert all(not h.superseded for h in result.hits) or "is:superseded" in query or "is:any" in query
    search(db, query, fallback=True)


@pytest.mark.parametrize("fallback", [False, True])
def test_memories_the_caller_holds_are_left_out(db: Path, fallback: bool) -> None:
    """``exclude``: a caller that has some hits already (context's any-word pass) gets only the
    others, in the order it would have seen them."""
    everything = ids(search(db, "whales is:any", fallback=fallback))
    assert {"old", "new", "whale"} <= set(everything)
    rest = ids(search(db, "whales is:any", fallback=fallback, exclude={"new", "whale"}))
    assert rest == [i for i in everything if i not in {"new", "whale"}]
    assert ids(search(db, "whales is:any", fallback=fallback, exclude=set(everything))) == []
