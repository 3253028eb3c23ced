"""Time filters (created:/updated:/accessed:/expires:, list --created-after) and notes on
mistyped filter names."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.errors import InvalidValue
from ora_desktop.core.listing import ListQuery
from ora_desktop.core.search import parse_query, search
from ora_desktop.core.timefilter import after, before, time_bounds
from tests.unit.search_support import ids, make_file
from tests.unit.test_cli_helpers import assert_one_line_error, cli

NOW = datetime.now(UTC).replace(microsecond=0)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%d %H:%M:%S")


ROWS = [
    # in the past whatever today is; created in three formats a foreign writer uses; the filters compare them as time
    {"id": "nov1", "content": "deploy the shop", "created_at": "2024-11-01 08:00:00"},
    {"id": "nov1z", "content": "deploy the blog", "created_at": "2024-11-01T23:30:00.000Z"},
    {"id": "nov2", "content": "deploy the docs", "created_at": "2024-11-02T01:30:00+02:00"},  # Nov 1, 23:30 UTC
    {"id": "nov3", "content": "deploy the api", "created_at": "2024-11-03 00:00:00"},
    {"id": "oct", "content": "deploy the cdn", "created_at": "2024-10-15 12:00:00"},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "anwe-sh" / "ora.site.db", ROWS)


@pytest.mark.parametrize(("query", "expected"), [
    ("created:>2024-11-01 deploy", {"nov3"}),
    ("created:>=2024-11-01 deploy", {"nov1", "nov1z", "nov2", "nov3"}),
    ("created:<2024-11-01 deploy", {"oct"}),
    ("created:<=2024-11-01 deploy", {"oct", "nov1", "nov1z", "nov2"}),
    ("created:2024-11-01 deploy", {"nov1", "nov1z", "nov2"}),
    ("created:2024-11-02..2024-11-03", {"nov3"}),
    ("created:2024-10-01..2024-11-01", {"oct", "nov1", "nov1z", "nov2"}),
    ("created:>=2024-11-01T20:00", {"nov1z", "nov2", "nov3"}),
])
def test_absolute_dates_compare_as_time_in_every_format(db: Path, query: str, expected: set[str]) -> None:
    result = search(db, query)
    assert set(ids(result)) == expected
    assert result.warnings == ()


def test_relative_ages_for_each_time_field(ora_home: Path) -> None:
    db = make_file(ora_home / "sites" / "s" / "a.site.db", [
        {"id": "fresh", "content": "note", "created_at": ago(2), "updated_at": ago(1)},
        {"id": "week", "content": "note", "created_at": ago(10), "updated_at": ago(10)},
        {"id": "old", "content": "note", "created_at": ago(400), "updated_at": ago(40)},
    ])
    conn = __import__("sqlite3").connect(db)
    conn.execute("UPDATE memories SET last_accessed_at = ? WHERE id = 'old'", (ago(3),))
    conn.execute("UPDATE memories SET expires_at = ? WHERE id = 'week'", ((NOW + timedelta(days=3)).isoformat(),))
    conn.execute("UPDATE memories SET expires_at = ? WHERE id = 'fresh'", ((NOW + timedelta(days=60)).isoformat(),))
    conn.commit()
    conn.close()
    assert set(ids(search(db, "created:<7d"))) == {"fresh"}
    assert set(ids(search(db, "created:>=7d"))) == {"week", "old"}
    assert set(ids(search(db, "created:>1y"))) == {"old"}
    assert set(ids(search(db, "updated:<=2w"))) == {"fresh", "week"}
    assert set(ids(search(db, "accessed:<30d"))) == {"old"}  # never-accessed rows match no accessed: filter
    assert set(ids(search(db, "expires:<7d"))) == {"week"}
    assert set(ids(search(db, "expires:>1mo"))) == {"fresh"}
    assert set(ids(search(db, "note created:<72h"))) == {"fresh"}


def test_time_filters_work_in_the_text_fallback_too(db: Path) -> None:
    result = search(db, "created:>2024-11-01 deploy", fallback=True)
    assert result.fallback and set(ids(result)) == {"nov3"}


def test_a_bad_time_value_is_a_note_and_the_rest_still_searches(db: Path) -> None:
    result = search(db, "created:lastweek deploy")
    assert len(ids(result)) == 5
    assert result.warnings == ("created:lastweek ignored: expected a date such as created:>=2026-11-01 "
                               "or an age such as created:<7d",)
    with pytest.raises(InvalidValue, match="created: 'soon' is neither a date nor an age"):
        time_bounds("created", "soon")


def test_mistyped_filter_names_get_a_did_you_mean_note(db: Path) -> None:
    result = search(db, "improtance:>=7 deploy")
    assert len(ids(result)) == 5  # the mistyped filter is ignored, the word still searched
    assert result.warnings == ("improtance:>=7 ignored: 'improtance' is not a filter (did you mean importance?)",)
    assert parse_query("crated:>2026-11-01").warnings == (
        "crated:>2026-11-01 ignored: 'crated' is not a filter (did you mean created?)",)
    assert "did you mean tag:file=src/app.ts?" in parse_query("file:src/app.ts").warnings[0]
    words = parse_query("tpye:banana")
    assert words.terms == ("tpye:banana",) and words.warnings == (
        "tpye:banana: 'tpye' is not a filter, so it was searched as words (did you mean type?)",)
    assert parse_query("priority:>=5").warnings[0].startswith("priority:>=5 ignored: 'priority' is not a filter")
    mixed = parse_query("page:2 sycn:pending TODO:fix")
    assert mixed.terms == ("page:2", "TODO:fix") and mixed.sync == ()  # page:2 is not an agent name
    assert mixed.warnings == (
        "page:2: 'page' is not a filter, so it was searched as words (did you mean agent?)",
        "sycn:pending ignored: 'sycn' is not a filter (did you mean sync?)",
    )
    # URLs and ordinary text with colons are not filters and get no note
    assert parse_query("see https://anwe.sh/blog").warnings == ()
    assert parse_query("note: deploy").warnings == ()


def test_cli_prints_the_note_for_an_unknown_field(capsys, db: Path) -> None:
    result = cli(capsys, "search", "--db", db, "improtance:>=7 deploy")
    assert result.code == 0
    assert "did you mean importance?" in result.err
    assert "no memories match" not in result.out and "nov1" in result.out


def test_list_created_after_and_before(capsys, db: Path) -> None:
    got = cli(capsys, "list", "--db", db, "--created-after", "2024-11-01", "--created-before", "2024-11-03", "--json")
    assert got.code == 0
    assert {m["id"] for m in json.loads(got.out)["memories"]} == {"nov1", "nov1z", "nov2"}
    got = cli(capsys, "list", "--db", db, "--created-before", "2024-11-01", "--json")
    assert {m["id"] for m in json.loads(got.out)["memories"]} == {"oct"}
    got = cli(capsys, "list", "--db", db, "--created-after", "1d", "--count")
    assert got.out.strip() == "0"
    bad = cli(capsys, "list", "--db", db, "--created-after", "yesterdayish")
    assert_one_line_error(bad, "--created-after", "'yesterdayish' is neither a date nor an age")


def test_list_query_times_through_the_store(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        later = store.list(ListQuery(times=tuple(after("created", "2024-11-02")), limit=None))
        older = store.count(ListQuery(times=tuple(before("created", "30d"))))
    assert [m.id for m in later] == ["nov3"]
    assert older == 5
