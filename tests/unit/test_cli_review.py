"""``ora-desktop review``: listing writes nothing; marks and flags are recorded; bad input is one line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.unit.test_cli_helpers import assert_one_line_error, cli, file_state, sql

ROWS = [
    ("f1", "Deploys go out from the main branch", "fact", 8),
    ("p1", "User prefers short answers", "preference", 6),
    ("t1", "TODO: fix TypeError in computeTax()", "task", 9),
]
T = ("--site", "anwe-sh", "--agent", "ora", "--reviewer", "alice")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db(ROWS)
    sql(path, "UPDATE memories SET health_score = 0.1 WHERE id = 't1'")
    return path


@pytest.fixture(autouse=True)
def no_terminal_width(monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def test_listing_shows_reasons_and_writes_nothing(capsys, db: Path) -> None:
    before = file_state(db)
    result = cli(capsys, "review", *T)
    assert result.code == 0, result
    assert "never reviewed" in result.out
    for memory_id in ("f1", "p1", "t1"):
        assert memory_id in result.out
    assert "health at or below 0.3" in result.out  # t1: importance 9, health 0.1
    assert file_state(db) == before


def test_json_lists_items_with_reasons(capsys, db: Path) -> None:
    data = cli(capsys, "review", *T, "--json").json()
    assert data["reviewer"] == "alice" and data["since"] is None
    by_id = {item["id"]: item for item in data["items"]}
    assert set(by_id) == {"f1", "p1", "t1"}
    assert by_id["t1"]["reasons"] == ["new", "important_low_health"]
    assert data["counts"] == {"new": 3, "important_low_health": 1}


def test_mark_flag_and_mark_all_are_recorded_in_the_file(capsys, db: Path) -> None:
    assert cli(capsys, "review", *T, "--mark", "f1", "--mark", "p1").code == 0
    assert {i["id"] for i in cli(capsys, "review", *T, "--json").json()["items"]} == {"t1"}
    flagged = cli(capsys, "review", *T, "--flag", "p1", "--note", "is this still true?")
    assert flagged.code == 0 and "flagged p1" in flagged.out
    items = cli(capsys, "review", *T, "--json").json()["items"]
    assert items[0]["id"] == "p1" and items[0]["note"] == "is this still true?"
    assert cli(capsys, "review", *T, "--mark-all").code == 0
    items = cli(capsys, "review", *T, "--json").json()["items"]
    assert [i["id"] for i in items] == ["p1", "t1"], "the flag and the attention item stay; nothing is new"
    assert not any("new" in i["reasons"] for i in items)
    other = cli(capsys, "review", "--site", "anwe-sh", "--agent", "ora", "--reviewer", "bob", "--json").json()
    assert len(other["items"]) == 3, "another reviewer's desk is their own"
    assert sql(db, "SELECT count(*) FROM ora_desktop_review WHERE reviewer = 'alice'")[0][0] >= 3


@pytest.mark.parametrize(("args", "words"), [
    (("--flag", "f1"), ("--note",)),
    (("--note", "why"), ("--flag",)),
    (("--flag", "f1", "--note", "  "), ("note",)),
    (("--mark", "nope"), ("nope", "nothing changed")),
    (("--unflag", "f1"), ("not flagged",)),
    (("--mark", "f1", "--mark-all"), ("one of",)),
    (("--limit", "0"), ("--limit",)),
])
def test_bad_input_is_one_line_and_changes_nothing(capsys, db: Path, args, words) -> None:
    before = file_state(db)
    result = cli(capsys, "review", *T, *args)
    assert_one_line_error(result, *words)
    assert file_state(db) == before


def test_a_file_that_is_not_a_database_is_named(capsys, ora_home: Path) -> None:
    bad = ora_home / "broken.site.db"
    bad.write_bytes(b"not sqlite at all" * 100)
    result = cli(capsys, "review", "--db", str(bad))
    assert_one_line_error(result, "broken.site.db")
