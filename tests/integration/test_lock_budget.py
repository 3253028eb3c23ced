"""Jobs and bulk operations never hold the write lock long enough to make an agent fail.

A real agent process whose busy timeout is 1 s writes continuously while expiry cleanup, decay,
a bulk delete, retention and purge-trash run on a file large enough that doing any of them in
one transaction holds the lock well over a second (built fast with raw SQL): the agent sees no
"database is locked", and each job's result is complete and correct (one trash batch, one
decay, one undo bringing a bulk delete or a bulk edit back).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.config import Config
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.operations import edits
from ora_desktop.core.operations.undo import undo
from ora_desktop.core.schema import INIT_SQL
from tests.integration import impatient_agent

pytestmark = pytest.mark.slow  # real processes, 200,000 rows

ROWS = 200_000
EXPIRING = ROWS * 3 // 4  # i % 4 != 0


def big_file(path: Path, rows: int = ROWS) -> Path:
    """``rows`` memories created 60 days ago, three in four expired a month ago (raw SQL, fast)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(INIT_SQL)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
        "INSERT INTO memories (id, content, type, importance, health_score, created_at, updated_at, expires_at) "
        "SELECT 'm-' || i, 'memory number ' || i || ' about deploys, caches and the release calendar', 'fact', 5, "
        "1.0, datetime('now', '-60 days'), datetime('now', '-60 days'), "
        "CASE WHEN i % 4 != 0 THEN datetime('now', '-30 days') END FROM n", (rows - 1,))
    conn.close()
    return path


def one(db: Path, sql: str) -> object:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def agent(tmp_path: Path, ora_home: Path):
    """(db, stop-and-report): the big file with an impatient agent writing to it."""
    db = big_file(ora_home / "sites" / "s" / "ora.site.db")
    report, stop = tmp_path / "agent.json", tmp_path / "stop"
    process = impatient_agent.start(db, "agent", report, stop)
    try:
        impatient_agent.wait_ready(process, report)
        yield db, lambda: impatient_agent.finish(process, report, stop)
    finally:
        stop.touch()
        process.wait(timeout=60)


def test_cleanup_then_decay_never_lock_out_an_agent_and_finish_the_job(agent) -> None:
    db, finish = agent
    cleaned = run_job("cleanup", db)
    decayed = run_job("decay", db)
    seen = finish()
    assert seen["locked"] == 0, seen
    assert seen["commits"] > 0
    assert (cleaned.outcome, cleaned.counts["expired"]) == ("ok", EXPIRING), cleaned.message
    assert one(db, "SELECT count(*) FROM memories WHERE expires_at IS NOT NULL") == 0
    assert one(db, "SELECT count(*) FROM ora_desktop_trash") == EXPIRING
    assert one(db, "SELECT count(DISTINCT batch) FROM ora_desktop_trash") == 1  # one restore brings all back
    assert decayed.outcome == "ok" and decayed.counts["decayed"] == ROWS - EXPIRING, decayed.message
    # every old memory lost exactly one day, once; the agent's new ones (not due) kept theirs
    assert one(db, "SELECT count(*) FROM memories WHERE id LIKE 'm-%' AND abs(health_score - 0.99) < 1e-9") \
        == ROWS - EXPIRING
    assert one(db, "SELECT count(*) FROM memories WHERE id LIKE 'agent-%' AND health_score != 1.0") == 0
    assert run_job("decay", db).counts["days"] == 0  # the mark moved on with the last chunk


def test_a_bulk_delete_never_locks_out_an_agent_and_one_undo_brings_it_back(agent) -> None:
    db, finish = agent
    doomed = [f"m-{i}" for i in range(0, ROWS, 2)]
    with open_store(db) as store:
        deleted = edits.delete(store, doomed)
        seen = finish()
        assert seen["locked"] == 0, seen
        assert len(deleted.removed) == len(doomed) and deleted.entry is not None
        undone = undo(store)  # (beside an agent too: test_lock_budget_undo.py)
    assert len(undone.change.added) == len(doomed)
    assert one(db, "SELECT count(*) FROM memories WHERE id LIKE 'm-%'") == ROWS
    assert one(db, "SELECT count(*) FROM ora_desktop_trash") == 0


def test_a_bulk_edit_never_locks_out_an_agent_and_is_one_undo_step(agent) -> None:
    db, finish = agent
    chosen = [f"m-{i}" for i in range(0, ROWS, 2)]
    with open_store(db) as store:
        versions = store.versions(chosen)  # as a window's selection read them
        before = store.versions([f"m-{i}" for i in range(ROWS)])
        edited = edits.bulk_edit(store, chosen, {"importance": 9}, expected_versions=versions)
        seen = finish()
        assert seen["locked"] == 0, seen
        assert len(edited.change.changed) == len(chosen) and edited.entry is not None
        assert one(db, "SELECT count(*) FROM memories WHERE importance = 9") == len(chosen)
        undo(store)  # one step for every chunk
        assert store.versions(before) == before  # every column of every memory back as it was


def test_retention_and_purge_trash_never_lock_out_an_agent(agent, tmp_path: Path) -> None:
    db, finish = agent
    toml = tmp_path / "config.toml"
    toml.write_text('[retention]\nmax_age_days = 30\n[trash]\nkeep_days = 1\n')
    config = Config.load(toml)
    retained = run_job("retention", db, config=config)
    purged = run_job("purge-trash", db, config=config, now=datetime.now(UTC) + timedelta(days=2))
    seen = finish()
    assert seen["locked"] == 0, seen
    assert retained.outcome == "ok" and retained.counts["removed"] == ROWS, retained.message
    assert purged.outcome == "ok" and purged.counts["purged"] == ROWS, purged.message
    assert one(db, "SELECT count(*) FROM memories WHERE id LIKE 'm-%'") == 0
    assert one(db, "SELECT count(*) FROM ora_desktop_trash") == 0
