"""``show ID --history``: every journalled change of a memory — when, by whom, what — newest first,
through the library and the CLI; changes no journal saw are said so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import NotFound, open_store
from ora_desktop.core.operations import edits
from ora_desktop.core.operations.memory_history import UNKNOWN, memory_history
from tests.unit.test_cli_helpers import assert_one_line_error, cli, file_state, sql

T = ("--site", "anwe-sh", "--agent", "ora")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db([("other", "Another memory", "fact", 5)])
    with open_store(path) as store:
        edits.add(store, "Deploys go out on Fridays", "fact", 5, id="d1")
        edits.edit(store, "d1", {"content": "Deploys go out on Tuesdays"})
        edits.edit(store, "d1", {"importance": 8})
        edits.edit(store, "other", {"importance": 2})
    return path


def test_history_lists_each_step_with_before_and_after(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        history = memory_history(store, "d1")
    assert [s.label for s in history.steps] == ["edit importance of d1", "edit content of d1", "add d1"]
    newest, middle, oldest = history.steps
    assert newest.changes["importance"] == (5, 8) and newest.initiator == "user"
    assert middle.changes["content"] == ("Deploys go out on Fridays", "Deploys go out on Tuesdays")
    assert oldest.created and not history.unexplained and history.covers is not None


def test_a_change_nobody_journalled_is_said(db: Path) -> None:
    sql(db, "UPDATE memories SET content = 'Deploys go out daily' WHERE id = 'd1'")  # an agent's raw SQL
    with open_store(db, readonly=True) as store:
        history = memory_history(store, "d1")
        assert history.unexplained
        # What each step left is not claimed once someone wrote unjournalled since; what it found is.
        assert history.steps[1].changes["content"] == ("Deploys go out on Fridays", UNKNOWN)
        assert history.steps[0].changes["importance"] == (5, UNKNOWN)
        with pytest.raises(NotFound):
            memory_history(store, "ghost")


def test_cli_show_history_text_and_json(capsys, db: Path) -> None:
    before = file_state(db)
    text = cli(capsys, "show", *T, "d1", "--history")
    assert text.code == 0, text
    assert "history (journalled steps, newest first" in text.out
    assert "content: Deploys go out on Fridays → Deploys go out on Tuesdays" in text.out
    data = cli(capsys, "show", *T, "d1", "--history", "--json").json()["history"]
    assert [s["what"] for s in data["steps"]] == ["edit importance of d1", "edit content of d1", "add d1"]
    assert data["steps"][0]["changes"]["importance"] == {"before": 5, "after": 8}
    assert "history" not in cli(capsys, "show", *T, "d1", "--json").json()
    assert file_state(db) == before
    assert_one_line_error(cli(capsys, "show", *T, "ghost", "--history"), "ghost")
