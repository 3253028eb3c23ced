"""Decay: the rule in ARCHITECTURE.md — elapsed whole days, idempotent, catches up, never-accessed, floor 0."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core.maintenance import JobContext, decay, run_job
from tests.unit.maintenance_support import ago, column, make_db, set_state


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_db(ora_home / "sites" / "s" / "ora.site.db", [
        {"id": "old", "last_accessed_at": ago(30), "health_score": 0.8},
        {"id": "old-iso", "last_accessed_at": ago(30, iso=True), "health_score": 0.8},
        {"id": "fresh", "last_accessed_at": ago(2), "health_score": 0.8},
        {"id": "fresh-iso", "last_accessed_at": ago(2, iso=True), "health_score": 0.8},
        {"id": "never-old", "created_at": ago(40), "health_score": 0.8},
        {"id": "never-new", "created_at": ago(1), "health_score": 0.8},
        {"id": "low", "last_accessed_at": ago(30), "health_score": 0.004},
        {"id": "zero", "last_accessed_at": ago(30), "health_score": 0.0},
    ])


def health(db: Path) -> dict[str, float]:
    return {k: round(v, 6) for k, v in column(db, "health_score").items()}


def test_first_decay_applies_one_day_in_both_formats_and_counts_never_accessed_from_creation(db: Path) -> None:
    report = run_job("decay", db)
    assert report.outcome == "ok", report.message
    h = health(db)
    assert h["old"] == h["old-iso"] == 0.79  # both timestamp formats, compared as time
    assert h["fresh"] == h["fresh-iso"] == 0.8  # within the 7-day grace
    assert h["never-old"] == 0.79  # never accessed: counts from creation (the seed's query skips it)
    assert h["never-new"] == 0.8
    assert h["low"] == 0.0 and h["zero"] == 0.0  # floored at 0
    assert report.counts == {"days": 1, "decayed": 4}


def test_decay_twice_in_a_day_decays_once(db: Path) -> None:
    assert run_job("decay", db).counts["decayed"] == 4
    second = run_job("decay", db)
    assert second.outcome == "ok" and second.counts == {"days": 0, "decayed": 0}
    assert "already decayed" in second.message
    later = datetime.now(UTC) + timedelta(hours=23)
    assert run_job("decay", db, now=later).counts["days"] == 0
    assert health(db)["old"] == 0.79


def test_a_ten_day_gap_decays_ten_days_at_once_then_carries_on_daily(db: Path) -> None:
    set_state(db, decay.STATE_KEY, ago(10))
    report = run_job("decay", db)
    assert report.counts["days"] == 10
    h = health(db)
    assert h["old"] == h["old-iso"] == h["never-old"] == pytest.approx(0.70)
    assert h["fresh"] == 0.8 and h["low"] == 0.0
    # The mark moved on by whole days: one more day later decays exactly one more day.
    assert run_job("decay", db, now=datetime.now(UTC) + timedelta(days=1, minutes=1)).counts["days"] == 1
    assert health(db)["old"] == pytest.approx(0.69)


def test_catch_up_only_counts_the_days_after_a_memory_left_its_grace(ora_home: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)  # one pinned clock (see test_floor_at_zero_after_a_long_gap)
    db = make_db(ora_home / "sites" / "s" / "a.site.db", [
        {"id": "left-grace-3-days-ago", "last_accessed_at": ago(10, now=now), "health_score": 1.0},
    ])
    set_state(db, decay.STATE_KEY, ago(10, now=now))
    run_job("decay", db, now=now)
    assert health(db)["left-grace-3-days-ago"] == pytest.approx(0.97)  # what 10 daily runs would have done


def test_catch_up_counts_the_missed_daily_runs_not_the_hours_since(ora_home: Path) -> None:
    """Run half a day after the tenth missed run: still the 3 runs that found it past its grace
    (it used to count from 'now' and take 4, whenever the clock had moved on since the mark)."""
    mark = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)
    db = make_db(ora_home / "sites" / "s" / "b.site.db", [
        {"id": "left-grace-3-days-ago", "last_accessed_at": ago(0, now=mark), "health_score": 1.0},
        {"id": "left-grace-today", "last_accessed_at": ago(0, now=mark + timedelta(days=3, hours=1)),
         "health_score": 1.0},
    ], written=mark)
    set_state(db, decay.STATE_KEY, ago(0, now=mark))
    report = run_job("decay", db, now=mark + timedelta(days=10, hours=12))
    assert report.counts["days"] == 10
    assert health(db) == {"left-grace-3-days-ago": pytest.approx(0.97), "left-grace-today": 1.0}
    assert run_job("decay", db, now=mark + timedelta(days=11, hours=1)).counts["days"] == 1
    assert health(db) == {"left-grace-3-days-ago": pytest.approx(0.96), "left-grace-today": pytest.approx(0.99)}


def test_floor_at_zero_after_a_long_gap(ora_home: Path) -> None:
    # One pinned clock: on a loaded machine the real one moves on between writing the rows and
    # the run, and "23 days past its grace" would become 23 days and a fraction (24 started days).
    now = datetime.now(UTC).replace(microsecond=0)
    db = make_db(ora_home / "sites" / "s" / "c.site.db", [
        {"id": "ancient", "last_accessed_at": ago(400, now=now), "health_score": 0.8},
        {"id": "ancient-never", "created_at": ago(400, iso=True, now=now), "health_score": 0.5},
        {"id": "month", "last_accessed_at": ago(30, now=now), "health_score": 0.8},
    ])
    set_state(db, decay.STATE_KEY, ago(365, now=now))
    assert run_job("decay", db, now=now).counts["days"] == 365
    h = health(db)
    assert h["ancient"] == 0.0 and h["ancient-never"] == 0.0  # floored, never negative
    assert h["month"] == pytest.approx(0.57)  # 23 days past its grace


def test_two_writers_decaying_at_once_decay_once(db: Path) -> None:
    """The window and the daemon at once: the transaction, not the file lock, keeps it to one day."""
    barrier = threading.Barrier(4)
    results = []

    def go() -> None:
        barrier.wait()
        results.append(decay.run(JobContext(db)))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.counts["days"] for r in results) == [0, 0, 0, 1]
    assert health(db)["old"] == 0.79


def test_dry_run_lists_and_changes_nothing(db: Path) -> None:
    before = db.read_bytes()
    report = run_job("decay", db, dry_run=True)
    assert report.dry_run and report.counts["decayed"] == 4
    listed = dict(report.would_change)
    assert set(listed) == {"old", "old-iso", "never-old", "low"}
    assert "0.80 → 0.79" in listed["old"]
    assert "0.004 → 0.00" in listed["low"]  # a real change, not "0.00 → 0.00"
    assert db.read_bytes() == before
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ora_desktop_%'").fetchone()[0] == 0


def test_unparseable_times_are_left_alone(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "b.site.db", [
        {"id": "junk", "last_accessed_at": "last tuesday", "health_score": 0.5},
    ])
    assert run_job("decay", db).outcome == "ok"
    assert health(db)["junk"] == 0.5


def test_a_file_that_is_not_a_database_fails_with_its_name(ora_home: Path) -> None:
    bad = ora_home / "sites" / "s" / "bad.site.db"
    bad.parent.mkdir(parents=True)
    bad.write_text("hello, not sqlite")
    report = run_job("decay", bad)
    assert report.outcome == "failed" and str(bad) in report.message
    assert bad.read_text() == "hello, not sqlite"


def test_a_decay_stopped_between_chunks_is_finished_by_the_next_run_never_repeated(ora_home: Path,
                                                                                   monkeypatch) -> None:
    from ora_desktop.core import chunks

    big = make_db(ora_home / "sites" / "s" / "big.site.db",
                  [{"id": f"m{i}", "last_accessed_at": ago(30)} for i in range(2000)])
    monkeypatch.setattr(chunks, "FIRST", 300)
    monkeypatch.setattr(chunks, "GAP", 0)
    real, calls = chunks.timed_write, []

    def dies_at_the_third(store, sizer, rows):  # the process killed after two chunks committed
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(store, sizer, rows)

    monkeypatch.setattr(chunks, "timed_write", dies_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        run_job("decay", big)
    values = column(big, "health_score").values()
    done = list(values).count(0.99)
    assert sorted(set(values)) == [0.99, 1.0] and 300 <= done < 2000
    monkeypatch.setattr(chunks, "timed_write", real)
    report = run_job("decay", big)
    assert report.outcome == "ok" and report.counts["decayed"] == 2000 - done and "interrupted" in report.message
    assert set(column(big, "health_score").values()) == {0.99}  # every memory lost one day, once
    assert run_job("decay", big).counts["days"] == 0
