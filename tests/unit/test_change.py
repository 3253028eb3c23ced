"""The structured Change: kind, exact ids and initiator, for every face to repaint from."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ora_desktop.core import Change, ChangeKind, Initiator
from ora_desktop.core.maintenance import run_job


def test_kind_follows_the_ids_unless_given() -> None:
    assert Change(added=frozenset({"a"})).kind is ChangeKind.ADDED
    assert Change(removed=frozenset({"a"})).kind is ChangeKind.DELETED
    assert Change(changed=frozenset({"a"}), removed=frozenset({"b"})).kind is ChangeKind.EDITED
    assert Change().kind is ChangeKind.RELOAD
    assert Change(changed=frozenset({"a"}), kind=ChangeKind.LINKED).kind is ChangeKind.LINKED


def test_membership_changes_only_when_rows_come_or_go_or_are_unknown() -> None:
    assert not Change(changed=frozenset({"a"})).membership_changed
    assert Change(changed=frozenset({"a"}), added=frozenset({"b"})).membership_changed
    assert Change(removed=frozenset({"b"})).membership_changed
    assert Change.reload().membership_changed  # another process wrote: rows unknown


def test_the_old_external_source_reads_as_an_external_reload_and_back() -> None:
    old = Change(source="external")
    assert old.initiator is Initiator.EXTERNAL and old.kind is ChangeKind.RELOAD
    assert Change.reload().source == "external"  # readers of .source still reload
    assert Change(initiator=Initiator.EXTERNAL).source == "external"
    assert Change(changed=frozenset({"a"})).initiator is Initiator.USER


def test_a_writing_job_reports_a_job_change_and_a_backup_or_dry_run_none(seed_db) -> None:
    path: Path = seed_db([("old", "expired note", "fact", 3), ("keep", "still true", "fact", 5)])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET expires_at = '2001-01-01 00:00:00' WHERE id = 'old'")
    assert run_job("cleanup", path, dry_run=True).change is None
    report = run_job("cleanup", path)
    assert report.ok and report.counts["expired"] == 1
    assert report.change is not None and report.change.initiator is Initiator.JOB
    assert report.change.kind is ChangeKind.JOB and report.change.membership_changed
    assert run_job("backup", path).change is None  # a backup writes its copy, not the memories
