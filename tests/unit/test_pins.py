"""Pinned memories: pin/unpin through the library and the CLI, ``list --pinned``, the ``is:pinned``
filter (the window's Pinned quick filter), and pinned memories first in an agent's context."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import NotFound, ReadOnlyDatabase, open_store
from ora_desktop.core.operations.pins import is_pinned, pin, pinned_ids, unpin
from ora_desktop.core.operations.search import SearchRequest, listing_query, search_memories
from tests.unit.test_cli_helpers import assert_one_line_error, cli, content_digest, file_state, sql

ROWS = [
    ("f1", "Deploys go out from the main branch", "fact", 8),
    ("p1", "User prefers short answers in British English", "preference", 3),
    ("t1", "TODO: fix TypeError in computeTax()", "task", 9),
    *[(f"n{i}", f"Routine deploy note {i} " + "filler words " * 20, "context", 2) for i in range(12)],
]
T = ("--site", "anwe-sh", "--agent", "ora")


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    return seed_db(ROWS)


def test_pin_and_unpin_through_the_library(db: Path) -> None:
    with open_store(db) as store:
        done = pin(store, ["p1", "f1"])
        assert done.done == ("p1", "f1") and done.change.changed == {"p1", "f1"}
        assert pin(store, "p1").already == ("p1",)
        assert pinned_ids(store) == ["p1", "f1"] and is_pinned(store, "f1")
        assert unpin(store, "f1").done == ("f1",)
        assert pinned_ids(store) == ["p1"] and not is_pinned(store, "f1")
        assert unpin(store, "f1").already == ("f1",)
    # The seed's table is untouched: pins live in their own plain table.
    assert sql(db, "SELECT memory_id FROM ora_desktop_pins") == [("p1",)]


def test_store_methods_for_agents(db: Path) -> None:
    with open_store(db) as store:
        store.pin("t1")
        assert store.pinned() == ["t1"]
        store.unpin(["t1"])
        assert store.pinned() == []


def test_unknown_id_pins_nothing(db: Path) -> None:
    with open_store(db) as store:
        with pytest.raises(NotFound, match="'nope'"):
            pin(store, ["p1", "nope"])
        assert pinned_ids(store) == []
    assert not sql(db, "SELECT name FROM sqlite_master WHERE name = 'ora_desktop_pins'")


def test_read_only_file_has_no_pins_and_refuses_one(db: Path) -> None:
    before = file_state(db)
    with open_store(db, readonly=True) as store:
        assert pinned_ids(store) == [] and not is_pinned(store, "p1")
        with pytest.raises(ReadOnlyDatabase):
            pin(store, "p1")
    assert file_state(db) == before


def test_pinned_memories_come_first_in_context_within_the_budget(db: Path) -> None:
    with open_store(db) as store:
        plain = store.context("deploy", 300)
        assert "p1" not in [m.id for m in plain.memories]  # low importance, off-topic: not chosen
        pin(store, "p1")
        bundle = store.context("deploy", 300)
    assert bundle.sections[0].name == "pinned"
    assert [m.id for m in bundle.sections[0].memories] == ["p1"]
    assert bundle.text.startswith("## Pinned memories\n- [p1] preference, importance 3: User prefers short answers")
    assert bundle.tokens <= 300  # counted in the budget
    assert [m.id for m in bundle.memories].count("p1") == 1


def test_context_without_pins_has_no_pinned_section(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        assert [s.name for s in store.context("deploy", 300).sections] == ["important", "relevant", "recent"]


def test_is_pinned_filter_and_the_pinned_quick_filter(db: Path) -> None:
    with open_store(db) as store:
        none_yet = search_memories(store, SearchRequest(quick=("pinned",)))
        assert store.count(listing_query(store, none_yet.request)) == 0
        pin(store, ["t1", "n3"])
        listed = store.list(listing_query(store, SearchRequest(quick=("pinned",))))
        assert sorted(m.id for m in listed) == ["n3", "t1"]
        hits = store.search("deploy is:pinned")
        assert [h.memory.id for h in hits.hits] == ["n3"]
        others = store.search("deploy -is:pinned", limit=100)
        assert "n3" not in [h.memory.id for h in others.hits] and len(others.hits) > 5


def test_cli_pin_list_show_unpin(capsys, db: Path) -> None:
    result = cli(capsys, "pin", *T, "t1", "p1")
    assert result.code == 0 and "pinned t1" in result.out, result
    assert cli(capsys, "pin", *T, "t1", "--json").json() == {"action": "pinned", "done": [], "already": ["t1"]}
    listed = cli(capsys, "list", *T, "--pinned", "--json").json()
    assert sorted(m["id"] for m in listed["memories"]) == ["p1", "t1"]
    assert cli(capsys, "show", *T, "t1", "--json").json()["pinned"] is True
    assert "pinned:" in cli(capsys, "show", *T, "t1").out
    assert cli(capsys, "unpin", *T, "t1", "--json").json()["done"] == ["t1"]
    listed = cli(capsys, "list", *T, "--pinned", "--json").json()
    assert [m["id"] for m in listed["memories"]] == ["p1"]


def test_cli_pin_unknown_id_is_one_line_and_changes_nothing(capsys, db: Path) -> None:
    before = content_digest(db)
    assert_one_line_error(cli(capsys, "pin", *T, "t1", "ghost"), "ghost")
    assert content_digest(db) == before


def test_cli_list_pinned_on_a_file_never_pinned(capsys, db: Path) -> None:
    before = file_state(db)
    assert cli(capsys, "list", *T, "--pinned", "--json").json()["memories"] == []
    assert file_state(db) == before
