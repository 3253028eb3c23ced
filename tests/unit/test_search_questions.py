"""Questions typed as sentences: any-word partial matches, context relevance, paths kept whole."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.context import keywords
from ora_desktop.core.demo import write_agent
from ora_desktop.core.search import parse_query, search, search_many
from ora_desktop.core.search.words import any_word_query, keyword_terms
from tests.unit.search_support import ids, make_file
from tests.unit.test_cli_helpers import cli

ROWS = [
    {"id": "token", "content": "Keep the auth token in an httpOnly cookie, never in localStorage", "importance": 8},
    {"id": "store", "content": "The store front is built with Astro", "importance": 4},
    {"id": "deploy", "content": "Deploy the shop with make deploy", "importance": 6},
    {"id": "path", "content": "TypeError thrown in src/app.ts when the cart is empty", "type": "context",
     "importance": 5},
    {"id": "scattered", "content": "The src folder of the mobile app has ts files", "type": "context",
     "importance": 6},
]
QUESTION = "how should I store the auth token?"


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "anwe-sh" / "ora.site.db", ROWS)


def test_a_question_gets_ranked_partial_matches_with_a_note(db: Path) -> None:
    strict = search(db, QUESTION, any_word=False)
    assert strict.hits == [] and not strict.partial
    result = search(db, QUESTION)
    assert result.partial
    assert ids(result)[0] == "token"  # holds two of the words (auth, token): ranked first
    assert set(ids(result)) == {"token", "store"}
    assert "no memory holds every word" in result.note and "auth" in result.note and "should" not in result.note
    assert result.query == QUESTION


def test_partial_only_when_every_word_finds_nothing(db: Path) -> None:
    full = search(db, "auth token")
    assert ids(full) == ["token"] and not full.partial and full.note == ""
    nothing = search(db, "zebra giraffe")
    assert nothing.hits == [] and not nothing.partial and nothing.note == ""
    assert any_word_query(parse_query("checkout")) is None  # one word: nothing looser to try
    assert any_word_query(parse_query("the is of")) is None  # only stop words


def test_partial_keeps_filters_and_works_in_the_text_fallback(db: Path) -> None:
    assert search(db, QUESTION + " importance:<=5").memories[0].id == "store"
    fallback = search(db, QUESTION, fallback=True)
    assert fallback.partial and fallback.fallback and "token" in ids(fallback)


def test_partial_across_files_and_on_the_command_line(capsys, db: Path, ora_home: Path) -> None:
    make_file(ora_home / "sites" / "shop-eu" / "ora.site.db", [{"id": "other", "content": "auth service notes"}])
    merged = search_many(None, QUESTION)
    assert merged.partial and {"token", "other"} <= set(ids(merged))
    got = cli(capsys, "search", "--all", QUESTION, "--json")
    assert got.code == 0
    data = json.loads(got.out)
    assert data["partial"] is True and data["hits"][0]["id"] in ("token", "other")
    text = cli(capsys, "search", "--db", db, QUESTION)
    assert text.code == 0 and "partial matches" in text.out and "no memory holds every word" in text.err


def test_context_includes_an_any_word_match_among_demo_memories(tmp_path: Path, isolated_dirs: Path) -> None:
    path = tmp_path / "ora.site.db"
    write_agent(path, 3000, seed=11, now=datetime(2026, 6, 1, tzinfo=UTC))
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO memories (id, content, type, importance, health_score, created_at, updated_at) "
                 "VALUES ('jwt', 'User prefers JWT auth stored in httpOnly cookies', 'preference', 9, 0.9, "
                 "'2025-03-01 10:00:00', '2025-03-01 10:00:00')")
    conn.commit()
    conn.close()
    with open_store(path, readonly=True) as store:
        bundle = store.context("auth cookies deploy", token_budget=2000)
    assert "jwt" in [m.id for m in bundle.memories]
    assert "httpOnly cookies" in bundle.text


def test_keywords_keep_paths_and_urls_whole() -> None:
    assert keywords("why does src/app.ts throw TypeError") == ["src/app.ts", "throw", "typeerror"]
    assert keywords("see https://docs.anwe.sh/guide/setup and ./scripts/migrate.sh") == [
        "https://docs.anwe.sh/guide/setup", "./scripts/migrate.sh", "see"]
    terms = keyword_terms("why does src/app.ts throw")
    assert [(t.text, t.kind) for t in terms] == [("src/app.ts", "phrase"), ("throw", "word")]


def test_a_path_in_a_question_matches_the_path_not_scattered_words(db: Path) -> None:
    result = search(db, "why does src/app.ts throw")
    assert ids(result) == ["path"] and result.partial  # "throw" is not there; the path is
    with open_store(db, readonly=True) as store:
        bundle = store.context("why does src/app.ts throw", token_budget=500)
        relevant = bundle.section("relevant")
    # the path ranks first (memories close in meaning may follow it: context retrieves by meaning too)
    assert relevant is not None and [m.id for m in relevant.memories][:1] == ["path"]
    tagged = search(db, "tag:file=src/app.ts")
    assert ids(tagged) == ["path"]


def test_all_files_search_and_reindex_skip_a_broken_file_naming_it(capsys, db: Path, ora_home: Path) -> None:
    broken = ora_home / "sites" / "broken-site" / "empty.site.db"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"")
    got = cli(capsys, "search", "deploy", "--all", "--json")
    assert got.code == 0
    data = json.loads(got.out)
    assert ids_of(data) == ["deploy"]
    assert any("empty.site.db" in w and "skipped" in w for w in data["warnings"])
    warnings = [line for line in got.err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "empty.site.db" in warnings[0] and "empty (0 bytes)" in warnings[0]
    text = cli(capsys, "search", "deploy")  # no target: every file
    assert text.code == 0 and "deploy" in text.out and "empty.site.db" in text.err
    again = cli(capsys, "reindex", "--all")
    assert again.code == 0
    assert "5 memories indexed" in again.out and "empty.site.db" in again.err and "Traceback" not in again.err
    assert broken.read_bytes() == b""


def ids_of(data: dict) -> list[str]:
    return [hit["id"] for hit in data["hits"]]
