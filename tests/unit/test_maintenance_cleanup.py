"""Expiry cleanup: by time across formats, recoverable, with a dry run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.maintenance import run_job
from tests.unit.maintenance_support import ago, ids, make_db


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_db(ora_home / "sites" / "s" / "ora.site.db", [
        {"id": "gone-sql", "expires_at": ago(1)},
        {"id": "gone-iso", "expires_at": ago(1 / 24, iso=True)},
        {"id": "gone-offset", "expires_at": "2020-06-01T12:00:00+02:00"},
        # Sorts after "now" as text ('T' > ' ') yet is an hour in the past: only julianday gets it right.
        {"id": "gone-today-iso", "expires_at": ago(1 / 24, iso=True)[:10] + "T" + ago(1 / 24)[11:] + "Z"},
        {"id": "future-sql", "expires_at": ago(-1)},
        {"id": "future-iso", "expires_at": ago(-1 / 24, iso=True)},
        {"id": "never", "expires_at": None},
        {"id": "empty", "expires_at": ""},
        {"id": "junk", "expires_at": "someday"},
    ])


EXPIRED = {"gone-sql", "gone-iso", "gone-offset", "gone-today-iso"}


def test_cleanup_deletes_expired_by_time_in_every_format_and_keeps_them_restorable(db: Path) -> None:
    report = run_job("cleanup", db)
    assert report.outcome == "ok" and report.counts == {"expired": 4}
    assert ids(db) == {"future-sql", "future-iso", "never", "empty", "junk"}
    with open_store(db) as store:
        trashed = store.trash()
        assert {t.memory.id for t in trashed} == EXPIRED
        assert {t.reason for t in trashed} == {"expired"}
        store.restore_deleted([t.trash_id for t in trashed])
    assert ids(db) >= EXPIRED


def test_cleanup_dry_run_lists_what_would_go_and_changes_nothing(db: Path) -> None:
    before = db.read_bytes()
    report = run_job("cleanup", db, dry_run=True)
    assert report.counts == {"expired": 4}
    assert {i for i, _ in report.would_change} == EXPIRED
    assert "would delete 4" in report.message
    assert db.read_bytes() == before


def test_cleanup_again_finds_nothing(db: Path) -> None:
    run_job("cleanup", db)
    assert run_job("cleanup", db).counts == {"expired": 0}


def test_cleanup_on_a_file_without_memories_fails_naming_it_and_changes_nothing(ora_home: Path) -> None:
    other = ora_home / "sites" / "s" / "other.site.db"
    other.parent.mkdir(parents=True)
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    report = run_job("cleanup", other)
    assert report.outcome == "failed"
    assert str(other) in report.message and "memories" in report.message
    assert other.read_bytes() == before
