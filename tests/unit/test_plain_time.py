"""Plain-language time in a search: phrases become ``created:`` filters, said in a note, and the
remaining words are searched (a pure function of the text and an injected clock)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store, timestamps
from ora_desktop.core.search.plaintime import read_plain_time
from ora_desktop.core.search.query import parse_query
from tests.unit.test_cli_helpers import cli, sql

THURSDAY = datetime(2026, 11, 26, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(("text", "rest", "filters"), [
    ("deploy last week", "deploy", ("created:<7d",)),
    ("yesterday", "", ("created:=2026-11-25",)),
    ("Today deploy", "deploy", ("created:>=2026-11-26",)),
    ("this month invoices", "invoices", ("created:>=2026-11-01",)),
    ("since Monday", "", ("created:>=2026-11-23",)),
    ("since thursday", "", ("created:>=2026-11-26",)),  # today is that day: since today
    ("since Fri", "", ("created:>=2026-11-20",)),
    ("this week", "", ("created:>=2026-11-23",)),
    ("in November", "", ("created:2026-11-01..2026-11-30",)),
    ("in December", "", ("created:2025-12-01..2025-12-31",)),  # the latest December: last year's
    ("in march 2024 taxes", "taxes", ("created:2024-03-01..2024-03-31",)),
    ("last month", "", ("created:2026-10-01..2026-10-31",)),
    ("errors in the past 3 days", "errors in the", ("created:<3d",)),
    ("yesterday or today", "or", ("created:=2026-11-25", "created:>=2026-11-26")),
])
def test_phrases_become_created_filters(text: str, rest: str, filters: tuple[str, ...]) -> None:
    read = read_plain_time(text, THURSDAY)
    assert (read.text, read.filters) == (rest, filters)
    assert read.note.startswith("read “") and filters[0] in read.note


@pytest.mark.parametrize("text", ['"last week" notes', "tag:today", "todays menu", "deploy", "yesterdays",
                                  "lastweek", "src/today.py"])
def test_words_that_are_not_phrases_stay_words(text: str) -> None:
    assert read_plain_time(text, THURSDAY) == read_plain_time(text, THURSDAY).__class__(text)


def test_last_month_in_january_is_last_years_december() -> None:
    assert read_plain_time("last month", datetime(2027, 1, 10, tzinfo=UTC)).filters == (
        "created:2026-12-01..2026-12-31",)


def test_parse_query_searches_the_remaining_words_under_the_filter() -> None:
    parsed = parse_query("deploy yesterday", now=THURSDAY)
    assert parsed.terms == ("deploy",)
    assert parsed.times == (("created_at", ">=", "2026-11-25 00:00:00"), ("created_at", "<", "2026-11-26 00:00:00"))
    assert parsed.warnings[0] == "read “yesterday” as created:=2026-11-25"


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db([("recent", "Deploy the API gateway", "fact", 5), ("old", "Deploy the billing service", "fact", 5),
                    ("other", "Lunch order for the team", "fact", 5)])
    now = timestamps.now()
    for memory_id, age in (("recent", 2), ("old", 40), ("other", 1)):
        sql(path, "UPDATE memories SET created_at = ? WHERE id = ?",
            (timestamps.to_sql(now - timedelta(days=age)), memory_id))
    return path


def test_library_search_reads_last_week(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        result = store.search("deploy last week")
    assert [h.memory.id for h in result.hits] == ["recent"]
    assert "read “last week” as created:<7d" in result.warnings


def test_cli_search_reads_last_week_and_says_so(capsys, db: Path) -> None:
    result = cli(capsys, "search", "deploy last week", "--site", "anwe-sh", "--agent", "ora", "--json")
    assert result.code == 0, result
    data = result.json()
    assert [h["id"] for h in data["hits"]] == ["recent"]
    assert any("last week" in w and "created:<7d" in w for w in data["warnings"])
    plain = cli(capsys, "search", "deploy last week", "--site", "anwe-sh", "--agent", "ora")
    assert "note: read “last week” as created:<7d" in plain.err
