"""Both timestamp formats read as aware UTC, compare and sort as time (in lists and recall)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ora_desktop import InvalidValue, open_store
from ora_desktop.core import timestamps

aware = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2999, 12, 31),
                     timezones=st.just(UTC)).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-01-14 10:30:00", datetime(2025, 1, 14, 10, 30, tzinfo=UTC)),
        ("2025-01-14T10:30:00.000Z", datetime(2025, 1, 14, 10, 30, tzinfo=UTC)),
        ("2025-01-14T10:30:00Z", datetime(2025, 1, 14, 10, 30, tzinfo=UTC)),
        ("2025-01-14T12:30:00+02:00", datetime(2025, 1, 14, 10, 30, tzinfo=UTC)),
        ("2025-01-14T05:30:00-05:00", datetime(2025, 1, 14, 10, 30, tzinfo=UTC)),
        ("2025-01-14 10:30:00.123456", datetime(2025, 1, 14, 10, 30, 0, 123456, tzinfo=UTC)),
        ("2025-01-14 10:30", datetime(2025, 1, 14, 10, 30, tzinfo=UTC)),
        ("2025-01-14 10:30+01:00", datetime(2025, 1, 14, 9, 30, tzinfo=UTC)),
        ("2025-01-14", datetime(2025, 1, 14, tzinfo=UTC)),
    ],
)
def test_parse_every_format(text, expected):
    value = timestamps.parse(text)
    assert value == expected and value.tzinfo is UTC


@pytest.mark.parametrize("text", ["", "yesterday", "2025-13-01 00:00:00", "2025-01-14 25:00:00", "14/01/2025"])
def test_parse_refuses_non_timestamps(text):
    assert timestamps.parse(text) is None
    if text:
        with pytest.raises(InvalidValue, match="expires_at"):
            timestamps.coerce(text, "expires_at")


@given(aware)
def test_sql_format_round_trips(value):
    text = timestamps.to_sql(value)
    assert len(text) == 19 and text[10] == " "
    assert timestamps.parse(text) == value.replace(microsecond=0)


@given(aware, st.integers(min_value=-14 * 60, max_value=14 * 60))
def test_iso_with_offsets_round_trips(value, minutes):
    zone = timezone(timedelta(minutes=minutes))
    text = value.astimezone(zone).isoformat(timespec="milliseconds")
    assert timestamps.parse(text) == value
    zulu = value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    assert timestamps.parse(zulu) == value


@settings(max_examples=60)
@given(aware, aware)
def test_parse_orders_like_sqlite_julianday(a, b):
    """What Python shows and what SQL sorts by agree, across the two formats."""
    iso = a.strftime("%Y-%m-%dT%H:%M:%S.") + f"{a.microsecond // 1000:03d}Z"
    sql = timestamps.to_sql(b)
    conn = sqlite3.connect(":memory:")
    ja, jb = conn.execute("SELECT julianday(?), julianday(?)", (iso, sql)).fetchone()
    pa, pb = timestamps.parse(iso), timestamps.parse(sql)
    if abs((pa - pb).total_seconds()) > 0.01:
        assert (ja < jb) == (pa < pb)


def test_naive_datetimes_are_taken_as_utc_and_written_in_sql_format():
    assert timestamps.coerce(datetime(2025, 1, 14, 10, 30)) == "2025-01-14 10:30:00"
    assert timestamps.coerce(datetime(2025, 1, 14, 12, 30, tzinfo=timezone(timedelta(hours=2)))) == \
        "2025-01-14 10:30:00"
    assert timestamps.coerce("2025-01-14T10:30:00.000Z") == "2025-01-14 10:30:00"


@pytest.fixture
def mixed(seed_db):
    """A seed file where another writer used ISO 'T…Z' text beside datetime('now') rows."""
    path = seed_db([("now-a", "written by datetime('now')", "fact", 5)])
    future = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO memories (id, content, type, importance, created_at, updated_at) VALUES (?, ?, 'fact', 5, ?, ?)",
        [("iso-old", "ISO, January 2025", "2025-01-14T10:30:00.000Z", "2025-01-14T10:30:00.000Z"),
         ("sql-mid", "SQL, 2025-01-14 evening", "2025-01-14 20:00:00", "2025-01-14 20:00:00"),
         ("iso-mid", "ISO, same day, 15:00 +02:00", "2025-01-14T15:00:00+02:00", "2025-01-14T15:00:00+02:00"),
         ("iso-new", "ISO, two days in the future", future, future)],
    )
    conn.commit()
    conn.close()
    return path


def test_both_formats_read_as_aware_utc(mixed):
    with open_store(mixed) as store:
        now_row, iso_row = store.get("now-a"), store.get("iso-old")
    assert now_row.created_at.tzinfo is UTC and iso_row.created_at.tzinfo is UTC
    assert iso_row.created_at == datetime(2025, 1, 14, 10, 30, tzinfo=UTC)
    assert iso_row.created_at < now_row.created_at
    assert store.get("iso-mid").created_at == datetime(2025, 1, 14, 13, 0, tzinfo=UTC)


def test_both_formats_sort_as_time_in_lists_and_recall(mixed):
    by_time = ["iso-new", "now-a", "sql-mid", "iso-mid", "iso-old"]  # newest first
    with open_store(mixed) as store:
        assert [m.id for m in store.list()] == by_time
        assert [m.id for m in store.list(descending=False)] == by_time[::-1]
        assert [m.id for m in store.recall("fact")] == by_time
        paged, cursor = [], None
        while True:
            page = store.list(limit=2, after=cursor)
            paged += [m.id for m in page]
            if len(page) < 2:
                break
            cursor = store.cursor_for(page[-1], "created_at")
        assert paged == by_time
    # As text the two formats would sort wrongly: 'T' > ' ' puts the ISO row after the evening row.
    conn = sqlite3.connect(mixed)
    as_text = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY created_at DESC")]
    conn.close()
    assert as_text != by_time


def test_expiry_filters_compare_as_time(mixed):
    conn = sqlite3.connect(mixed)
    past = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    soon = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    conn.execute("UPDATE memories SET expires_at = ? WHERE id = 'iso-old'", (past,))
    conn.execute("UPDATE memories SET expires_at = ? WHERE id = 'sql-mid'", (soon,))
    conn.commit()
    conn.close()
    with open_store(mixed) as store:
        assert {m.id for m in store.list(expired=True)} == {"iso-old"}
        assert {m.id for m in store.list(expiring_within_days=1)} == {"sql-mid"}
        assert store.get("iso-old").is_expired() and not store.get("sql-mid").is_expired()


def test_dirty_compares_updated_and_synced_as_time(mixed):
    conn = sqlite3.connect(mixed)
    # Text comparison would call this dirty ('T' > ' '); as time it was synced after the edit.
    conn.execute("UPDATE memories SET updated_at = '2025-01-14T10:30:00.000Z', synced_at = '2025-01-14 10:31:00', "
                 "sync_status = 'synced' WHERE id = 'iso-old'")
    conn.commit()
    conn.close()
    with open_store(mixed) as store:
        assert not store.get("iso-old").is_dirty
        assert "iso-old" not in {m.id for m in store.list(dirty=True)}
        assert "iso-old" in {m.id for m in store.list(dirty=False)}


def test_records_built_from_rows_equal_records_built_by_hand():
    from ora_desktop import Memory
    from ora_desktop.core.fingerprint import row_fingerprint
    from ora_desktop.core.records import row_to_memory

    row = (7, "m1", "text", "fact", 5, 2, "2025-01-14T10:30:00.000Z", 0.5, '["m2", 3]', "", "2025-01-14 10:30:00",
           "2025-01-15 10:30:00", "soon", None, "synced")
    built = row_to_memory(row)
    by_hand = Memory(
        id="m1", content="text", type="fact", importance=5, access_count=2,
        last_accessed_at=datetime(2025, 1, 14, 10, 30, tzinfo=UTC), health_score=0.5, related_to=("m2", "3"),
        superseded_by=None, created_at=datetime(2025, 1, 14, 10, 30, tzinfo=UTC),
        updated_at=datetime(2025, 1, 15, 10, 30, tzinfo=UTC), expires_at=None, synced_at=None, sync_status="synced",
        related_malformed=False, unparsed=(("expires_at", "soon"),), rowid=7,
    )
    assert built == by_hand and hash(built) == hash(by_hand) and repr(built) == repr(by_hand)
    assert built.version == row_fingerprint(row[1:]) and by_hand.version is None  # no row behind it
    assert built.updated_at_text == "2025-01-15 10:30:00"
    with pytest.raises(AttributeError):
        built.content = "changed"


@pytest.mark.parametrize(("text", "ids", "malformed"), [
    (None, (), False), ("", (), False), ('["a", "b"]', ("a", "b"), False), ('  ["a"]  ', ("a",), False),
    ('["a", 3]', ("a", "3"), False), ("[broken", (), True), ('["a"] trailing', (), True), ('{"a": 1}', (), True),
    ('[""]', (), True), ("[true]", (), True), ("null", (), True), ('[["a"]]', (), True),
    ('["\\u00e9t\\u00e9"]', ("été",), False),
])
def test_related_to_parsing_never_raises(text, ids, malformed):
    from ora_desktop.core.records import parse_related

    assert parse_related(text) == (ids, malformed)
