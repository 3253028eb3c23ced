"""Decay and a wrong clock: a mark in the future, a clock set back, and taking a decay back."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.errors import Conflict, NotFound
from ora_desktop.core.maintenance import decay, run_job
from ora_desktop.core.operations.undo import redo, undo
from tests.unit.maintenance_support import ago, make_db, set_state

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def state(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT key, value FROM ora_desktop_state"))
    conn.close()
    return rows


def everything(db: Path) -> list[tuple]:
    """Every column of every memory with its storage type: what "exactly as before" means."""
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(memories)")]
        select = ", ".join(f"{c}, typeof({c})" for c in cols)
        rows = conn.execute(f"SELECT {select} FROM memories ORDER BY id").fetchall()
    conn.close()
    return rows


@pytest.fixture
def db(ora_home: Path) -> Path:
    """Stale memories, plus one an agent wrote at NOW (the file's own times vouch for NOW)."""
    return make_db(ora_home / "sites" / "s" / "ora.site.db", [
        {"id": "stale", "last_accessed_at": ago(30, now=NOW), "health_score": 0.8},
        {"id": "stale-iso", "last_accessed_at": ago(30, iso=True, now=NOW), "health_score": 0.73},
        {"id": "nearly-gone", "last_accessed_at": ago(30, now=NOW), "health_score": 0.004},
        {"id": "whole", "created_at": ago(40, now=NOW), "health_score": 1},
        {"id": "today", "created_at": ago(0, now=NOW), "health_score": 0.9},
    ], written=NOW - timedelta(days=40))


def test_a_mark_left_in_the_future_by_a_wrong_clock_is_said_and_re_anchored(db: Path) -> None:
    """faketime +30d decays 30 days and moves the mark 30 days ahead; the next real run used to
    say "already decayed" for 30 days. Now it names the clock error and puts the mark at now."""
    set_state(db, decay.STATE_KEY, ago(1, now=NOW))
    assert run_job("decay", db, now=NOW + timedelta(days=30)).counts["days"] == 31  # the wrong clock
    assert state(db)[decay.STATE_KEY] == ago(-30, now=NOW)
    fixed = run_job("decay", db, now=NOW)
    assert fixed.outcome == "ok" and fixed.counts == {"days": 0, "decayed": 0}
    assert fixed.message.startswith(f"clock error: the decay mark ({ago(-30, now=NOW)}) was 30 days in the future; "
                                    "re-anchored to now")
    assert state(db)[decay.STATE_KEY] == ago(0, now=NOW)
    assert run_job("decay", db, now=NOW + timedelta(days=1, minutes=1)).counts["days"] == 1  # daily again


def test_a_clock_more_than_a_day_before_the_files_newest_time_refuses_and_changes_nothing(db: Path) -> None:
    before = everything(db)
    report = run_job("decay", db, now=NOW - timedelta(days=3))
    assert report.outcome == "failed"
    assert report.message == (f"{db}: refusing to decay: this clock ({ago(3, now=NOW)}) is 3 days before the newest "
                              f"time in the file ({ago(0, now=NOW)}, memory 'today'); fix the clock and run it "
                              "again; nothing changed")
    assert everything(db) == before
    with open_store(db, readonly=True) as store:
        assert decay.last_decay(store) is None


def test_a_mark_far_ahead_that_nothing_vouches_for_refuses_and_repair_re_anchors(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "idle.site.db", [
        {"id": "stale", "last_accessed_at": ago(30, now=NOW), "health_score": 0.8},
    ], written=NOW - timedelta(days=60))
    set_state(db, decay.STATE_KEY, ago(-30, now=NOW))
    before = everything(db)
    refused = run_job("decay", db, now=NOW)
    assert refused.outcome == "failed" and "is 30 days before the file's last decay" in refused.message
    assert "'ora-desktop run decay --repair' re-anchors the mark to now" in refused.message
    assert everything(db) == before and state(db)[decay.STATE_KEY] == ago(-30, now=NOW)
    repaired = run_job("decay", db, now=NOW, repair=True)
    assert repaired.outcome == "ok" and "re-anchored to now" in repaired.message
    assert state(db)[decay.STATE_KEY] == ago(0, now=NOW)


def test_undo_after_a_decay_restores_every_health_value_and_the_mark_exactly(db: Path) -> None:
    set_state(db, decay.STATE_KEY, ago(10, now=NOW))  # a 10-day catch-up: "nearly-gone" is floored at 0
    before, marks = everything(db), state(db)
    report = run_job("decay", db, now=NOW)
    assert report.counts == {"days": 10, "decayed": 4}
    assert everything(db) != before
    with open_store(db) as store:
        done = undo(store)
        with pytest.raises(NotFound, match="nothing to redo"):  # the next decay does it again instead
            redo(store)
    assert done.entry.label == "decay of 4 memories by 10 day(s)"
    assert everything(db) == before  # every value and its storage type (1 stays an integer)
    assert state(db) == marks
    # and the decay can run again from the restored mark
    assert run_job("decay", db, now=NOW).counts == {"days": 10, "decayed": 4}


def test_undo_of_a_decay_refuses_when_a_memory_changed_since(db: Path) -> None:
    run_job("decay", db, now=NOW)
    with sqlite3.connect(db) as conn:  # an agent touches one of the decayed memories
        conn.execute("UPDATE memories SET health_score = health_score + 0.1 WHERE id = 'stale'")
    conn.close()
    after = everything(db)
    with open_store(db) as store, pytest.raises(Conflict, match="memory 'stale' was changed since; nothing undone"):
        undo(store)
    assert everything(db) == after


def test_a_memory_the_decay_left_alone_may_change_without_blocking_the_undo(db: Path) -> None:
    before = everything(db)
    run_job("decay", db, now=NOW)
    with sqlite3.connect(db) as conn:  # an agent uses the fresh memory (within its grace: not decayed)
        conn.execute("UPDATE memories SET access_count = 1, health_score = 1.0, last_accessed_at = ? "
                     "WHERE id = 'today'", (ago(0, now=NOW),))
    conn.close()
    with open_store(db) as store:
        undo(store)
    assert [row for row in everything(db) if row[0] != "today"] == [row for row in before if row[0] != "today"]
    with sqlite3.connect(db) as conn:  # the agent's use is kept
        assert conn.execute("SELECT access_count, health_score FROM memories WHERE id = 'today'").fetchone() == (1, 1.0)
    conn.close()


def test_a_memory_deleted_since_blocks_the_undo_until_it_is_purged(db: Path) -> None:
    before = {row[0]: row for row in everything(db)}
    run_job("decay", db, now=NOW)
    with open_store(db) as store:
        store.delete(["stale"])
        with pytest.raises(Conflict, match="memory 'stale' was deleted since; nothing undone"):
            undo(store)
        store.purge(["stale"])  # forgotten for good: the decay's undo puts back the others
        undo(store)
    assert everything(db) == [row for memory_id, row in sorted(before.items()) if memory_id != "stale"]


def test_an_older_decay_cannot_be_undone_after_a_later_one(db: Path) -> None:
    run_job("decay", db, now=NOW)
    run_job("decay", db, now=NOW + timedelta(days=1, minutes=1))
    with open_store(db) as store:
        assert undo(store).entry.label.startswith("decay of")  # the later one
        with pytest.raises(Conflict, match="a later decay ran since"):
            undo(store)  # the earlier one: its previous values were replaced
