"""Promote (extraction): a finished task agent's important memories go to its parent, once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.maintenance import run_job
from tests.unit.maintenance_support import ago, ids, make_db


def finish(path: Path, status: str = "completed") -> None:
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO task_context (id, task_description, status, created_at, completed_at) "
                 "VALUES ('t1', 'write the report', ?, datetime('now'), datetime('now'))", (status,))
    conn.commit()
    conn.close()


@pytest.fixture
def site(ora_home: Path) -> tuple[Path, Path]:
    folder = ora_home / "sites" / "anwe-sh"
    parent = make_db(folder / "ora.site.db", [{"id": "p1", "content": "parent's own"}])
    make_db(folder / "writer.site.db", [])
    task = make_db(folder / "task-123.site.db", [
        {"id": "k1", "content": "key finding", "importance": 9, "related_to": '["k2", "minor"]'},
        {"id": "k2", "content": "healthy fact", "type": "fact", "importance": 4, "health_score": 0.9},
        {"id": "minor", "content": "scratch note", "type": "context", "importance": 2, "health_score": 0.9},
        {"id": "weak", "content": "weak fact", "type": "fact", "importance": 3, "health_score": 0.2,
         "created_at": ago(3)},
    ])
    return parent, task


def test_promote_copies_important_memories_with_extracted_ids_once(site: tuple[Path, Path]) -> None:
    parent, task = site
    finish(task)
    report = run_job("promote", task)
    assert report.outcome == "ok", report.message
    assert report.counts["promoted"] == 2
    assert ids(parent) == {"p1", "extracted-k1", "extracted-k2"}
    with open_store(parent) as store:
        copy = store.get("extracted-k1")
        assert copy.content == "key finding" and copy.importance == 9
        assert copy.related_to == ("extracted-k2",)  # links between copies kept, others dropped
    again = run_job("promote", task)
    assert again.outcome == "ok" and again.counts["promoted"] == 0
    assert "already promoted" in again.message
    assert ids(parent) == {"p1", "extracted-k1", "extracted-k2"}


def test_promote_is_once_even_after_a_copy_is_deleted(site: tuple[Path, Path]) -> None:
    parent, task = site
    finish(task)
    run_job("promote", task)
    with open_store(parent) as store:
        store.delete("extracted-k1")
    run_job("promote", task)
    assert "extracted-k1" not in ids(parent)


def test_unfinished_task_is_not_promoted(site: tuple[Path, Path]) -> None:
    parent, task = site
    finish(task, "active")
    report = run_job("promote", task)
    assert report.counts["promoted"] == 0 and "not finished" in report.message
    assert ids(parent) == {"p1"}


def test_non_task_agents_are_left_alone(site: tuple[Path, Path]) -> None:
    parent, _task = site
    report = run_job("promote", parent)
    assert report.outcome == "ok" and "not a task agent" in report.message


def test_promote_dry_run_lists_copies_and_writes_nothing(site: tuple[Path, Path]) -> None:
    parent, task = site
    finish(task)
    before = parent.read_bytes()
    report = run_job("promote", task, dry_run=True)
    assert {i for i, _ in report.would_change} == {"extracted-k1", "extracted-k2"}
    assert parent.read_bytes() == before


def test_a_promote_names_the_parent_as_the_file_it_changed(site: tuple[Path, Path]) -> None:
    """The run is on the task's file but writes the parent's: views and notices must follow the parent."""
    parent, task = site
    finish(task)
    report = run_job("promote", task)
    assert report.path == task and report.changed_file == parent
    assert run_job("check", task).changed_file == task
