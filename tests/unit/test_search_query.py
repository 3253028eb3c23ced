"""The search-box language: parsed into safe FTS5 expressions and filters, never raising."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ora_desktop.core.search import Term, parse_query


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t(c) VALUES ('the user was running a NEAR query on src/app.ts')")
    return conn


def test_words_phrases_prefixes_and_exclusions() -> None:
    parsed = parse_query('running "exact phrase" deplo* -secret -"old name"')
    assert parsed.groups == ((Term("running"),), (Term("exact phrase", "phrase"),), (Term("deplo", "prefix"),))
    assert parsed.excluded == (Term("secret"), Term("old name", "phrase"))
    assert parsed.fts_expression() == '("running" AND "exact phrase" AND "deplo"*) NOT "secret" NOT "old name"'
    assert parsed.terms == ("running", "exact phrase", "deplo")


def test_or_binds_tighter_than_the_implicit_and() -> None:
    parsed = parse_query("cat OR dog food")
    assert parsed.fts_expression() == '("cat" OR "dog") AND "food"'
    assert parse_query("NOT cat dog").excluded == (Term("cat"),)
    assert parse_query("cat AND dog").fts_expression() == '"cat" AND "dog"'


def test_unbalanced_quote_runs_to_the_end() -> None:
    parsed = parse_query('deploy "blue whale')
    assert parsed.groups[-1] == (Term("blue whale", "phrase"),)


@pytest.mark.parametrize("text", ["", "   ", "*", '"', '""', "-", "OR", "AND", "NOT", "NEAR(", "(((", "\x00\x01\x7f"])
def test_nothing_to_search_for_is_empty(text: str) -> None:
    parsed = parse_query(text)
    assert parsed.fts_expression() is None or parsed.groups


def test_field_filters() -> None:
    parsed = parse_query(
        "type:fact,task importance:>=7 health:<0.3 sync:pending tag:error=TypeError tag:file=src/app.ts "
        "tag:ENOENT site:anwe-sh agent:ora is:expired"
    )
    assert parsed.types == ("fact", "task")
    assert parsed.importance == ((">=", 7.0),)
    assert parsed.health == (("<", 0.3),)
    assert parsed.sync == ("pending",)
    assert parsed.tags == (("error", "TypeError"), ("file", "src/app.ts"), (None, "ENOENT"))
    assert parsed.sites == ("anwe-sh",) and parsed.agents == ("ora",)
    assert parsed.expired is True
    assert not parsed.groups and parsed.has_filters and not parsed.warnings


def test_ranges_negations_and_state_filters() -> None:
    parsed = parse_query("importance:5..8 -type:task -sync:synced -tag:url=x is:superseded sync:dirty")
    assert parsed.importance == ((">=", 5.0), ("<=", 8.0))
    assert parsed.not_types == ("task",) and parsed.not_sync == ("synced",)
    assert parsed.not_tags == (("url", "x"),)
    assert parsed.superseded == "only" and parsed.dirty is True
    assert parse_query("is:any").superseded == "show"
    assert parse_query("-is:expired").expired is False


def test_bad_filter_values_become_warnings_not_errors() -> None:
    parsed = parse_query("type:banana importance:>=lots sync:maybe tag:error= is:weird words")
    assert len(parsed.warnings) == 5
    assert "type:banana" in parsed.warnings[0]
    assert parsed.groups == ((Term("words"),),) and not parsed.has_filters


def test_unknown_fields_are_words() -> None:
    parsed = parse_query("http://example.com note:this")
    assert parsed.terms == ("http://example.com", "note:this")


def test_many_terms_are_capped_with_a_warning() -> None:
    parsed = parse_query(" ".join(f"w{i}" for i in range(100)))
    assert len(parsed.groups) == 32 and "ignored" in parsed.warnings[0]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300) | st.lists(st.sampled_from(
    ['"', "*", "-", "OR", "AND", "NOT", "NEAR(", ")", "(", "type:", "tag:", "importance:>=", "'", ";",
     "DROP TABLE memories;--", "\x00", "^", ":", "=", "word", "running", "é", "🙂"]), max_size=30).map(" ".join))
def test_any_input_parses_into_a_valid_fts5_expression(fts: sqlite3.Connection, text: str) -> None:
    parsed = parse_query(text)
    for expr in (parsed.fts_expression(), parsed.positive_expression()):
        if expr is not None:
            fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expr,)).fetchone()


def test_huge_input() -> None:
    parsed = parse_query("x" * 10000 + " " + "y " * 5000)
    assert parsed.groups and len(parsed.groups[0][0].text) <= 200


def test_non_string_input() -> None:
    assert parse_query(None).is_empty
    assert parse_query(12345).terms == ("12345",)
