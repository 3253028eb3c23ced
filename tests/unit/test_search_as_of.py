"""``search QUERY --as-of WHEN``: the memories as they were then, as far as the undo journal
knows (journalled edits, adds and deletes taken back), saying what it cannot cover."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store, timestamps
from ora_desktop.core.operations import edits
from ora_desktop.core.operations.as_of import search_as_of
from tests.unit.test_cli_helpers import assert_one_line_error, cli, file_state, sql

T = ("--site", "anwe-sh", "--agent", "ora")
PAST = "2026-01-01 00:00:00"


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db([("d1", "Deploys go out on Fridays", "fact", 5),
                    ("gone", "The deploy key is in the vault", "fact", 5)])
    sql(path, "UPDATE memories SET created_at = ?, updated_at = ?", (PAST, PAST))
    with open_store(path) as store:  # after the date: journalled steps
        edits.edit(store, "d1", {"content": "Deploys go out on Tuesdays"})
        edits.delete(store, ["gone"])
        edits.add(store, "Deploy freeze in December", "fact", 5, id="new")
    return path


def test_as_of_takes_back_journalled_steps_after_the_date(db: Path) -> None:
    when = timestamps.parse("2026-06-01 00:00:00")
    with open_store(db, readonly=True) as store:
        then = search_as_of(store, "deploy", when)
        now = search_as_of(store, "deploy", timestamps.now() + timedelta(minutes=1))
    assert sorted((h.memory.id, h.memory.content) for h in then.hits) == [
        ("d1", "Deploys go out on Fridays"), ("gone", "The deploy key is in the vault")]
    assert then.memories == 2 and not then.notes
    assert sorted(h.memory.id for h in now.hits) == ["d1", "new"]


def test_unjournalled_changes_are_said(db: Path) -> None:
    sql(db, "UPDATE memories SET content = 'Deploys go out daily', updated_at = datetime('now') WHERE id = 'd1'")
    with open_store(db, readonly=True) as store:
        answer = search_as_of(store, "deploy", timestamps.parse("2026-06-01 00:00:00"))
    assert any("do not journal" in n for n in answer.notes)


def test_cli_as_of_prints_the_past_and_writes_nothing(capsys, db: Path) -> None:
    before = file_state(db)
    data = cli(capsys, "search", "fridays", *T, "--as-of", "2026-06-01", "--json").json()
    assert [h["id"] for h in data["hits"]] == ["d1"] and data["note"].startswith("as of 2026-06-01 23:59:59 UTC")
    assert file_state(db) == before
    assert cli(capsys, "search", "fridays", *T, "--json").json()["hits"] == []  # now: it says Tuesdays
    assert_one_line_error(cli(capsys, "search", "fridays", *T, "--as-of", "last tuesday"), "--as-of")
    assert_one_line_error(cli(capsys, "search", "fridays", "--all", "--as-of", "2026-06-01"), "one file")


def test_as_of_judges_expiry_at_that_time(capsys, seed_db: Callable[..., Path]) -> None:
    """Expired since the date: live then. Expired before the date: expired then, too."""
    path = seed_db([("lately", "Staging deploy key rotates", "fact", 5),
                    ("long", "Old deploy key for staging", "fact", 5)])
    sql(path, "UPDATE memories SET created_at = ?, updated_at = ?", (PAST, PAST))
    sql(path, "UPDATE memories SET expires_at = '2026-07-01 00:00:00' WHERE id = 'lately'")
    sql(path, "UPDATE memories SET expires_at = '2026-02-01 00:00:00' WHERE id = 'long'")
    when = timestamps.parse("2026-06-01 00:00:00")
    with open_store(path, readonly=True) as store:
        then = search_as_of(store, "deploy", when)
        live = search_as_of(store, "deploy -is:expired", when)
        gone = search_as_of(store, "deploy is:expired", when)
    assert {h.memory.id: h.expired for h in then.hits} == {"lately": False, "long": True}
    assert [h.memory.id for h in live.hits] == ["lately"]
    assert [h.memory.id for h in gone.hits] == ["long"]
    data = cli(capsys, "search", "staging -is:expired", *T, "--as-of", "2026-06-01", "--json").json()
    assert [(h["id"], h["expired"]) for h in data["hits"]] == [("lately", False)]
