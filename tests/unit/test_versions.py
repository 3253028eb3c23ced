"""A memory's version is the fingerprint of its whole row, compared inside the write.

Another program (a real second process writing raw SQL, as agents do) changes a row in the same
second or without touching ``updated_at``; every write that was given the version the person or
agent read refuses with ``Conflict`` and leaves every row exactly as the other program left it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ora_desktop.core import Conflict, InvalidValue, Store, open_store
from ora_desktop.core.operations import edits, journal
from ora_desktop.core.operations.merge import merge_duplicates, merge_into_new
from ora_desktop.core.operations.undo import undo

ROWS = [
    ("a", "Deploys go out from the main branch", "fact", 8),
    ("b", "Deploys go out from the main branch.", "fact", 3),
    ("c", "User prefers short answers", "preference", 6),
]


def another_program(db: Path, sql: str, params: tuple = ()) -> None:
    """Run one statement in a separate Python process with plain ``sqlite3`` (an agent's raw SQL)."""
    code = ("import json, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "c.execute(sys.argv[2], json.loads(sys.argv[3])); c.commit(); c.close()")
    subprocess.run([sys.executable, "-c", code, str(db), sql, json.dumps(list(params))], check=True)


def rows(path: Path) -> list[tuple]:
    """Every column of every memory, as stored."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


def updated_at(path: Path) -> dict[str, str]:
    return {r[0]: r[1] for r in sqlite3.connect(path).execute("SELECT id, updated_at FROM memories")}


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    return seed_db(ROWS)


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with open_store(db) as s:
        yield s


def changed_underneath(db: Path, sql: str) -> list[tuple]:
    """Let another program run ``sql`` without moving any ``updated_at``; the rows it left."""
    stamps = updated_at(db)
    another_program(db, sql)
    assert updated_at(db) == stamps  # the old check (updated_at as the version) cannot see it
    return rows(db)


def test_an_edit_from_a_stale_version_is_refused_and_writes_nothing(store: Store, db: Path) -> None:
    seen = store.get("a")
    theirs = changed_underneath(db, "UPDATE memories SET importance = 2 WHERE id = 'a'")
    with pytest.raises(Conflict, match="'a' was changed by another program") as refused:
        store.update("a", expected_version=seen.version, content="my rewrite")
    assert refused.value.memory_id == "a"
    with pytest.raises(Conflict):  # the operation every face calls (window, CLI, MCP)
        edits.edit(store, "a", {"content": "my rewrite"}, expected_version=seen.version)
    assert rows(db) == theirs  # their importance kept, my text not written, no journal entry
    assert journal.entries(store) == []
    fresh = store.get("a")
    assert fresh.version != seen.version
    done = edits.edit(store, "a", {"content": "my rewrite"}, expected_version=fresh.version)
    assert (done.memory.content, done.memory.importance) == ("my rewrite", 2)


def test_any_column_moves_the_version_and_every_reader_agrees(store: Store, db: Path) -> None:
    before = store.get("c").version
    for sql in ("UPDATE memories SET access_count = access_count + 1 WHERE id = 'c'",
                "UPDATE memories SET health_score = 0.5 WHERE id = 'c'",
                "UPDATE memories SET synced_at = '2026-01-01 00:00:00' WHERE id = 'c'",
                "UPDATE memories SET related_to = '[]' WHERE id = 'c'"):
        changed_underneath(db, sql)
        now = store.get("c").version
        assert now != before, sql
        before = now
    changed_underneath(db, "UPDATE memories SET content = content WHERE id = 'c'")  # a write that changes nothing
    assert store.get("c").version == before
    # Values a record shows converted (NULL count as 0, '' as no successor, a text timestamp) still
    # give the version of the row as stored.
    another_program(db, "UPDATE memories SET access_count = NULL, superseded_by = '', "
                        "last_accessed_at = '2025-01-14T10:30:00.000Z' WHERE id = 'b'")
    listed = {m.id: m.version for m in store.list(superseded="show", limit=None)}
    by_rowid = {m.id: m.version for m in store.by_rowids([m.rowid for m in store.list(limit=None)])}
    assert listed == by_rowid == store.versions(["a", "b", "c"]) == journal.fingerprints(store, ["a", "b", "c"])
    assert store.versions(["nope"]) == {"nope": None}


def test_the_version_an_edit_returns_is_the_one_undo_checks(store: Store, db: Path) -> None:
    done = edits.edit(store, "b", {"importance": 9}, expected_version=store.get("b").version)
    assert journal.get(store, done.entry).after == {"b": done.memory.version}
    assert store.get("b").version == done.memory.version
    theirs = changed_underneath(db, "UPDATE memories SET access_count = 7 WHERE id = 'b'")
    with pytest.raises(Conflict, match="cannot undo .*'b' was changed by another program"):
        undo(store, done.entry)
    assert rows(db) == theirs


def test_bulk_edit_refuses_when_one_chosen_memory_changed(store: Store, db: Path) -> None:
    chosen = store.get_many(["a", "b", "c"])
    theirs = changed_underneath(db, "UPDATE memories SET content = 'the agent corrected this' WHERE id = 'b'")
    with pytest.raises(Conflict, match="'b' was changed") as refused:
        edits.bulk_edit(store, chosen, {"type": "context"},
                        expected_versions={i: m.version for i, m in chosen.items()})
    assert refused.value.memory_id == "b"
    with pytest.raises(Conflict, match="'b' was changed"):  # the library's own bulk write
        store.update_many(chosen, expected_versions={i: m.version for i, m in chosen.items()}, type="context")
    assert rows(db) == theirs and journal.entries(store) == []
    fresh = {m.id: m.version for m in store.get_many(["a", "b", "c"]).values()}
    edits.bulk_edit(store, list(fresh), {"type": "context"}, expected_versions=fresh)
    assert {m.type for m in store.list(limit=None)} == {"context"}


@pytest.mark.parametrize("shape", ["keep one", "into new"])
def test_merge_refuses_when_a_member_changed_since_it_was_shown(store: Store, db: Path, shape: str) -> None:
    shown = {m.id: m.version for m in store.get_many(["a", "b"]).values()}
    theirs = changed_underneath(db, "UPDATE memories SET related_to = '[\"c\"]' WHERE id = 'b'")
    with pytest.raises(Conflict, match="'b' was changed"):
        if shape == "keep one":
            merge_duplicates(store, ["a", "b"], keep="a", text="Deploys go out from main", expected_versions=shown)
        else:
            merge_into_new(store, ["a", "b"], {"content": "Deploys go out from main"}, expected_versions=shown)
    assert rows(db) == theirs and journal.entries(store) == []


def test_supersede_refuses_when_the_old_memory_changed_since_it_was_shown(store: Store, db: Path) -> None:
    shown = store.get("b").version
    theirs = changed_underneath(db, "UPDATE memories SET superseded_by = 'c' WHERE id = 'b'")
    with pytest.raises(Conflict, match="'b' was changed"):
        edits.supersede(store, "b", "a", expected_version=shown)
    assert rows(db) == theirs


def test_a_memory_deleted_underneath_is_a_conflict_too(store: Store, db: Path) -> None:
    seen = store.get("c")
    another_program(db, "DELETE FROM memories WHERE id = 'c'")
    with pytest.raises(Conflict, match="'c' was deleted by another program"):
        edits.edit(store, "c", {"importance": 1}, expected_version=seen.version)


@pytest.mark.parametrize("token", ["2025-01-14 10:30:00", "", "0" * 39, "g" * 40, "A" * 40])
def test_a_malformed_version_is_one_clear_line_and_changes_nothing(store: Store, db: Path, token: str) -> None:
    before = rows(db)
    for attempt in (lambda: store.update("a", expected_version=token, content="x"),
                    lambda: edits.edit(store, "a", {"content": "x"}, expected_version=token),
                    lambda: edits.bulk_edit(store, ["a"], {"importance": 1}, expected_versions={"a": token}),
                    lambda: merge_duplicates(store, ["a", "b"], expected_versions={"a": token})):
        with pytest.raises(InvalidValue, match="is not a version") as refused:
            attempt()
        assert "\n" not in str(refused.value)
    assert rows(db) == before


def test_the_mcp_shape_carries_the_version_and_its_update_refuses_a_stale_one(store: Store, db: Path) -> None:
    from ora_desktop.core.operations import agent_memory
    from ora_desktop.mcp.shapes import memory_out

    shown = memory_out(store.get("a"))["version"]  # what the get/recall/search tools hand an agent
    assert shown == store.get("a").version
    theirs = changed_underneath(db, "UPDATE memories SET health_score = 0.4 WHERE id = 'a'")
    with pytest.raises(Conflict, match="'a' was changed by another program"):
        agent_memory.update(store, "a", importance=1, version=shown)  # the MCP update tool's core path
    assert rows(db) == theirs
