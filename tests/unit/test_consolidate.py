"""The consolidate job: old, low-health memories on one topic become one extractive summary that
supersedes them; a dry run changes nothing; nothing is deleted; undo restores."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.operations.consolidate import consolidate, undo_consolidation
from tests.unit.search_support import make_file

OLD = "2024-01-10 10:00:00"
ROWS = [
    {"id": "pg1", "content": "The Postgres database is backed up every night at 2am. Backups go to the S3 bucket.",
     "health_score": 0.2, "importance": 4, "created_at": OLD},
    {"id": "pg2", "content": "Nightly Postgres database backups are stored in S3.", "health_score": 0.3,
     "importance": 6, "created_at": OLD},
    {"id": "pg3", "content": "Postgres database backups run nightly; restore them from the S3 bucket.",
     "health_score": 0.1, "importance": 3, "created_at": OLD, "type": "context"},
    {"id": "pg-new", "content": "Postgres database backups are stored in S3 every night.", "health_score": 0.2,
     "created_at": "2099-01-01 00:00:00"},  # too recent to consolidate
    {"id": "pg-healthy", "content": "Postgres database backups go to S3 nightly.", "health_score": 0.9,
     "created_at": OLD},  # still healthy: kept as it is
    {"id": "cat", "content": "The office cat is called Miso", "health_score": 0.1, "created_at": OLD},
    {"id": "lunch", "content": "Team lunch is on Thursdays at noon", "health_score": 0.1, "created_at": OLD},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


def test_dry_run_lists_the_cluster_and_changes_nothing(db: Path) -> None:
    before = db.read_bytes()
    report = run_job("consolidate", db, dry_run=True)
    assert report.ok, report.message
    assert report.counts["clusters"] == 1 and report.counts["memories"] == 3
    assert "pg1" in report.would_change[0][0] and "pg-new" not in report.would_change[0][0]
    assert db.read_bytes() == before


def test_summary_supersedes_the_cluster_and_undo_restores(db: Path) -> None:
    with open_store(db) as store:
        count = store.count(superseded="show")
        result = consolidate(store, dry_run=False)
        assert len(result.summaries) == 1
        summary = store.get(result.summaries[0])
        assert set(summary.related_to) == {"pg1", "pg2", "pg3"}
        assert summary.importance == 6 and summary.type == "fact"
        text, merged = summary.content.rsplit("\n\n", 1)
        assert merged == "Merged from 3 memories: pg2, pg1, pg3."  # names what it merged
        sentences = [s for s in text.split(". ") if s]
        assert 1 <= len(sentences) <= 3
        sources = " ".join(r["content"] for r in ROWS[:3])
        assert all(s.rstrip(".") in sources for s in sentences)  # extractive: the members' own sentences
        for memory_id in ("pg1", "pg2", "pg3"):
            assert store.get(memory_id).superseded_by == summary.id
        assert store.get("pg-new").superseded_by is None and store.get("pg-healthy").superseded_by is None
        assert store.count(superseded="show") == count + 1  # nothing deleted
        undo_consolidation(store, result.summaries)
        assert all(store.get(i).superseded_by is None for i in ("pg1", "pg2", "pg3"))
        assert store.find(summary.id) is None and store.count(superseded="show") == count


def test_the_job_writes_and_says_so(db: Path) -> None:
    report = run_job("consolidate", db)
    assert report.ok and report.counts == {"clusters": 1, "memories": 3, "candidates": 5}
    assert "nothing deleted" in report.message
    assert run_job("consolidate", db).counts["clusters"] == 0  # the members are superseded now
