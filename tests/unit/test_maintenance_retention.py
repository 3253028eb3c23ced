"""Retention (seed 002): older than N days / at most N memories, never importance 10, recoverable."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.config import Config
from ora_desktop.core.maintenance import run_job
from tests.unit.maintenance_support import ago, ids, make_db


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_db(ora_home / "sites" / "shop" / "ora.site.db", [
        {"id": "old-1", "created_at": ago(100), "importance": 5},
        {"id": "old-2", "created_at": ago(95, iso=True), "importance": 9},
        {"id": "old-critical", "created_at": ago(400), "importance": 10},
        {"id": "mid", "created_at": ago(40), "importance": 3},
        {"id": "new-1", "created_at": ago(2), "importance": 5},
        {"id": "new-critical", "created_at": ago(1), "importance": 10},
    ])


def policy(**table) -> Config:
    return Config(Path("config.toml"), {"sites": {"shop": {"retention": table}}}, True)


def test_no_policy_means_nothing_is_touched(db: Path) -> None:
    report = run_job("retention", db, config=Config.defaults())
    assert report.outcome == "ok" and report.counts == {"removed": 0}
    assert len(ids(db)) == 6


def test_older_than_n_days_never_touches_importance_10(db: Path) -> None:
    report = run_job("retention", db, config=policy(max_age_days=90))
    assert report.counts["removed"] == 2
    assert ids(db) == {"old-critical", "mid", "new-1", "new-critical"}
    with open_store(db) as store:
        assert {t.memory.id for t in store.trash()} == {"old-1", "old-2"}


def test_keep_at_most_n_removes_the_oldest_but_never_importance_10(db: Path) -> None:
    report = run_job("retention", db, config=policy(max_memories=2))
    assert report.outcome == "ok"
    # 6 memories, limit 2: remove 4, oldest first, skipping importance 10 (only 4 are removable).
    assert ids(db) == {"old-critical", "new-critical"}
    assert report.counts["removed"] == 4


def test_keep_at_most_n_stops_when_only_importance_10_is_left(db: Path) -> None:
    run_job("retention", db, config=policy(max_memories=1))
    assert ids(db) == {"old-critical", "new-critical"}


def test_both_limits_together_and_the_dry_run_shows_the_same_rows(db: Path) -> None:
    config = policy(max_age_days=90, max_memories=3)
    before = db.read_bytes()
    preview = run_job("retention", db, config=config, dry_run=True)
    assert db.read_bytes() == before
    report = run_job("retention", db, config=config)
    gone = {"old-1", "old-2", "mid"}
    assert {i for i, _ in preview.would_change} == gone
    assert preview.counts["removed"] == report.counts["removed"] == 3
    assert ids(db) == {"old-critical", "new-1", "new-critical"}


def test_a_policy_for_another_site_does_not_apply(db: Path) -> None:
    config = Config(Path("c.toml"), {"sites": {"elsewhere": {"retention": {"max_memories": 1}}}}, True)
    assert run_job("retention", db, config=config).counts["removed"] == 0


def test_removed_memories_can_be_restored(db: Path) -> None:
    run_job("retention", db, config=policy(max_age_days=30))
    with open_store(db) as store:
        store.restore_deleted([t.trash_id for t in store.trash()])
    assert len(ids(db)) == 6
