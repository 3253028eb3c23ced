"""Expiry values: one core parser for every face. A bare number is refused with a hint (``7``
used to store 1970-01-01 00:00:07, which the next cleanup trashed; ``1e10`` stored 2286); spans
from now, dates and ISO 8601 are accepted; years outside 1970-2200 are refused."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store, timestamps
from ora_desktop.core.errors import InvalidValue
from tests.unit.test_cli_helpers import assert_one_line_error, cli, file_state

AT = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
#: What a person or an agent might type, and the one word the refusal must say.
BAD = [("7", "bare number"), ("1e10", "bare number"), ("-3", "bare number"), ("1969-12-31", "out of range"),
       ("2300-01-01", "out of range"), ("next tuesday", "not a timestamp"), ("7 days", "not a timestamp"),
       ("99999999w", "too far")]
GOOD = [("7d", "2026-06-22 12:00:00"), ("3h", "2026-06-15 15:00:00"), ("2w", "2026-06-29 12:00:00"),
        ("30m", "2026-06-15 12:30:00"), ("2026-12-31", "2026-12-31 00:00:00"),
        ("2026-12-31 23:59:00", "2026-12-31 23:59:00"), ("2026-12-31T10:00:00+02:00", "2026-12-31 08:00:00"),
        ("2025-01-14T10:30:00.000Z", "2025-01-14 10:30:00")]


@pytest.mark.parametrize(("text", "stored"), GOOD)
def test_spans_dates_and_iso_8601_are_read(text: str, stored: str) -> None:
    assert timestamps.coerce(text, "expires_at", from_now=True, at=AT) == stored


@pytest.mark.parametrize(("text", "words"), BAD)
def test_bad_expiry_values_are_refused_with_a_hint(text: str, words: str) -> None:
    with pytest.raises(InvalidValue) as caught:
        timestamps.coerce(text, "expires_at", from_now=True, at=AT)
    message = str(caught.value)
    assert message.startswith(f"expires_at: {text!r} ") and words in message and "\n" not in message
    if words != "out of range" and words != "too far":
        assert "7d" in message and "YYYY-MM-DD" in message  # the hint says what to type instead


def test_a_bare_number_from_a_library_caller_is_refused_too() -> None:
    for value in (7, 1e10, True):
        with pytest.raises(InvalidValue, match="bare number"):
            timestamps.coerce(value, "expires_at", from_now=True)  # type: ignore[arg-type]


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    return seed_db([("m1", "first memory", "fact", 5)])


@pytest.mark.parametrize(("text", "words"), BAD[:6])
def test_library_add_and_update_refuse_and_change_nothing(db: Path, text: str, words: str) -> None:
    before = file_state(db)
    with open_store(db) as store:
        with pytest.raises(InvalidValue, match=words):
            store.add("new memory", expires_at=text)
        with pytest.raises(InvalidValue, match=words):
            store.update("m1", expires_at=text)
    assert file_state(db) == before


def test_library_update_takes_a_span_from_now(db: Path) -> None:
    with open_store(db) as store:
        store.update("m1", expires_at="7d")
        stored = store.get("m1").expires_at
    assert stored is not None and abs(stored - (timestamps.now() + timedelta(days=7))) < timedelta(minutes=5)


@pytest.mark.parametrize(("text", "words"), BAD[:6])
@pytest.mark.parametrize("command", ["edit", "add"])
def test_cli_add_and_edit_expires_refuse_in_one_line_and_change_nothing(capsys, db: Path, command: str, text: str,
                                                                        words: str) -> None:
    before = file_state(db)
    argv = ["edit", "m1"] if command == "edit" else ["add", "a new memory"]
    result = cli(capsys, *argv, "--db", db, "--expires", text)
    assert_one_line_error(result, "expires_at", words)
    assert file_state(db) == before


def test_cli_edit_expires_7d_is_a_week_from_now(capsys, db: Path) -> None:
    result = cli(capsys, "edit", "m1", "--db", db, "--expires", "7d")
    assert result.code == 0, result.err
    with open_store(db, readonly=True) as store:
        stored = store.get("m1").expires_at
    assert stored is not None and abs(stored - (timestamps.now() + timedelta(days=7))) < timedelta(minutes=5)
