"""The runner: registry, per-(job, file) locks, history, cancel, progress, bad input."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ora_desktop.core import InvalidValue
from ora_desktop.core.history import history
from ora_desktop.core.maintenance import JOBS, job_lock, run_job
from tests.unit.maintenance_support import ago, ids, make_db


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_db(ora_home / "sites" / "s" / "ora.site.db", [
        {"id": f"m{i}", "last_accessed_at": ago(30), "expires_at": ago(1) if i % 2 else None} for i in range(10)
    ])


def test_registry_describes_every_job() -> None:
    assert set(JOBS) == {"decay", "cleanup", "retention", "promote", "backup", "check", "purge-trash", "sync",
                         "consolidate"}
    assert all(spec.description for spec in JOBS.values())
    assert not JOBS["backup"].supports_dry_run and JOBS["cleanup"].supports_dry_run


def test_every_run_is_recorded_with_counts_and_times(db: Path) -> None:
    report = run_job("cleanup", db)
    runs = history(path=db)
    assert len(runs) == 1
    run = runs[0]
    assert (run.job, run.path, run.outcome, run.counts) == ("cleanup", str(db.resolve()), "ok", {"expired": 5})
    assert run.started <= run.ended and run.message == report.message
    run_job("decay", db, dry_run=True)
    assert [r.job for r in history()] == ["decay", "cleanup"]
    assert history()[0].dry_run
    assert [r.job for r in history(job="cleanup")] == ["cleanup"]


def test_a_job_already_running_on_the_file_is_skipped_not_doubled(db: Path) -> None:
    with job_lock("cleanup", db):
        report = run_job("cleanup", db)
        other_job = run_job("decay", db)
    assert report.outcome == "skipped-locked" and "already running" in report.message
    assert other_job.outcome == "ok"  # the lock is per (job, file), not per file
    assert history(job="cleanup")[0].outcome == "skipped-locked"
    assert run_job("cleanup", db).counts == {"expired": 5}  # nothing was done while locked


def test_unknown_job_and_impossible_dry_run_are_refused(db: Path) -> None:
    with pytest.raises(InvalidValue, match="unknown job 'defrag'"):
        run_job("defrag", db)
    with pytest.raises(InvalidValue, match="no dry run"):
        run_job("backup", db, dry_run=True)
    assert history() == []


def test_cancel_before_work_stops_the_job_and_changes_nothing(db: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    before = db.read_bytes()
    report = run_job("cleanup", db, cancel=cancel)
    assert report.outcome == "cancelled"
    assert db.read_bytes() == before


def test_progress_is_reported(db: Path) -> None:
    seen: list[tuple[int, int]] = []
    run_job("decay", db, progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 1) and seen[-1] == (1, 1)


def test_a_missing_file_fails_with_its_name(ora_home: Path) -> None:
    missing = ora_home / "sites" / "s" / "nobody.site.db"
    report = run_job("check", missing)
    assert report.outcome == "failed" and "nobody.site.db" in report.message
    assert not missing.exists()


class CancelAfter(threading.Event):
    """An event that reads as set from its ``n``-th check on: a cancel arriving mid-statement."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def is_set(self) -> bool:
        self.n -= 1
        return self.n < 0 or super().is_set()


@pytest.mark.parametrize("job", ["decay", "cleanup", "check"])
def test_a_cancel_mid_statement_rolls_it_back_or_leaves_the_rest_to_the_next_run(ora_home: Path, job: str,
                                                                                  monkeypatch) -> None:
    # Checks as often as before on this small file (the real interval, about 10 ms of SQLite's
    # work, lets 3,000 rows finish before the third check).
    monkeypatch.setattr("ora_desktop.core.maintenance.context.PROGRESS_OPS", 20_000)
    big = make_db(ora_home / "sites" / "s" / "big.site.db", [
        {"id": f"m{i}", "last_accessed_at": ago(30), "expires_at": ago(1)} for i in range(3000)
    ])
    before = big.read_bytes()
    report = run_job(job, big, cancel=CancelAfter(3))
    assert report.outcome == "cancelled", report.message
    assert "cancelled" in report.message
    from tests.unit.maintenance_support import column

    if job == "check":
        assert big.read_bytes() == before
        return
    # Decay and cleanup write in short transactions: a cancel keeps the chunks already written
    # and rolls back the one under way; the next run finishes the job, never doing a row twice.
    if "part-way" in report.message:
        assert "next" in report.message
    else:  # cancelled before its first chunk
        assert set(column(big, "health_score").values()) == {1.0} and len(column(big, "id")) == 3000
    assert run_job(job, big).outcome == "ok"
    if job == "decay":
        assert set(column(big, "health_score").values()) == {0.99}
    else:
        assert not column(big, "id") and len(ids(big, "ora_desktop_trash", "memory_id")) == 3000


def test_a_database_locked_by_another_writer_fails_clearly_and_changes_nothing(db: Path, monkeypatch) -> None:
    import sqlite3

    monkeypatch.setattr("ora_desktop.core.connection.BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # an agent in the middle of a long write
    try:
        report = run_job("cleanup", db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert report.outcome == "failed"
    assert str(db) in report.message and "locked" in report.message
    assert run_job("cleanup", db).counts == {"expired": 5}


def test_old_history_is_pruned(db: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from ora_desktop.core.history import prune, record
    from ora_desktop.core.maintenance import JobReport

    old = datetime.now(UTC) - timedelta(days=400)
    record(JobReport("decay", db, old, old, "ok"))
    run_job("decay", db)
    assert prune(180) == 1
    assert [r.started > old for r in history()] == [True]
