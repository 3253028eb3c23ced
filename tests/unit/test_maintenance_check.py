"""Check: integrity_check plus the lint; --repair fixes only what is safe and says what it did."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.maintenance.check import supersession_cycles
from ora_desktop.core.schema import INIT_SQL
from tests.unit.maintenance_support import ago, changing_under_the_first_check, column, make_db

# A legacy file: the seed's tables without their CHECK constraints.
LEGACY_SQL = re.sub(r"\s+CHECK\((?:[^()]|\([^()]*\))*\)", "", INIT_SQL)


@pytest.fixture
def legacy(ora_home: Path) -> Path:
    assert "CHECK" not in LEGACY_SQL
    return make_db(ora_home / "sites" / "s" / "legacy.site.db", [
        {"id": "ok", "related_to": '["also-ok"]'},
        {"id": "also-ok"},
        {"id": "bad-type", "type": "gossip"},
        {"id": "bad-importance", "importance": 11},
        {"id": "bad-health", "health_score": 1.7},
        {"id": "bad-sync", "sync_status": "maybe"},
        {"id": "malformed", "related_to": "[not json"},
        {"id": "dangling", "related_to": '["ok", "ghost"]'},
        {"id": "orphan", "superseded_by": "vanished"},
        {"id": "loop-a", "superseded_by": "loop-b"},
        {"id": "loop-b", "superseded_by": "loop-a"},
        {"id": "bad-time", "last_accessed_at": "yesterday-ish"},
        {"id": "expired", "expires_at": ago(3)},
        {"id": "links-expired", "related_to": '["expired"]'},
    ], init_sql=LEGACY_SQL)


def test_check_finds_every_kind_of_problem_and_changes_nothing(legacy: Path) -> None:
    before = legacy.read_bytes()
    report = run_job("check", legacy)
    assert report.outcome == "ok", report.message
    c = report.counts
    assert c["bad_type"] == 1 and c["bad_importance"] == 1 and c["bad_health"] == 1 and c["bad_sync_status"] == 1
    assert c["malformed_related_to"] == 1 and c["dangling_related_to"] == 1
    assert c["dangling_superseded_by"] == 1 and c["supersession_cycles"] == 1
    assert c["unparseable_last_accessed_at"] == 1 and c["linked_to_expired"] == 1
    assert "integrity_errors" not in c  # the file itself is sound
    found = {(i, p) for i, p in report.would_change}
    assert ("dangling", "related_to names a memory that does not exist") in found
    assert any(i in ("loop-a", "loop-b") and "cycle" in p for i, p in found)
    assert legacy.read_bytes() == before


def test_repair_fixes_only_what_is_safe_and_says_so(legacy: Path) -> None:
    report = run_job("check", legacy, repair=True)
    assert report.outcome == "ok"
    assert "repaired" in report.message
    assert report.counts["repaired_dangling_related_to"] == 1
    assert report.counts["repaired_dangling_superseded_by"] == 1
    assert report.counts["repaired_bad_health"] == 1
    related = column(legacy, "related_to")
    assert related["dangling"] == '["ok"]'
    assert related["malformed"] == "[not json"  # not safe to guess: left for a person
    assert column(legacy, "superseded_by")["orphan"] is None
    assert column(legacy, "superseded_by")["loop-a"] == "loop-b"  # cycles are reported, not broken
    assert column(legacy, "health_score")["bad-health"] == 1.0
    assert column(legacy, "type")["bad-type"] == "gossip"
    assert column(legacy, "sync_status")["dangling"] == "pending"
    after = run_job("check", legacy)
    assert "dangling_related_to" not in after.counts and "bad_health" not in after.counts
    assert after.counts["malformed_related_to"] == 1


def test_repair_dry_run_says_what_it_would_do_and_changes_nothing(legacy: Path) -> None:
    before = legacy.read_bytes()
    report = run_job("check", legacy, repair=True, dry_run=True)
    assert "would repair" in report.message
    assert legacy.read_bytes() == before


def test_a_clean_file_reports_no_problems(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "clean.site.db", [{"id": "a"}, {"id": "b", "related_to": '["a"]'}])
    report = run_job("check", db)
    assert report.counts == {"problems": 0} and report.message == "no problems found"


def test_a_damaged_file_is_reported_not_repaired(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "hurt.site.db", [{"id": f"m{i}", "content": "x" * 500} for i in range(300)])
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=DELETE")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with db.open("r+b") as handle:  # scribble over a page in the middle of the table
        handle.seek(page_size * 5)
        handle.write(b"\xff" * 64)
    before = db.read_bytes()
    report = run_job("check", db, repair=True)
    assert report.outcome == "problems" and report.damaged, report.message
    assert report.counts["integrity_errors"] >= 1
    assert "damaged" in report.message and "not repaired" in report.message and "recover" in report.message
    assert any(i == "(file)" and "malformed" in p for i, p in report.would_change)
    assert db.read_bytes() == before
    # Recorded as such (the daemon and the window read it from the history).
    from ora_desktop.core.history import history, last_run

    assert history(path=db, job="check")[0].outcome == "problems"
    assert last_run("check", db) is not None  # a finished run: the scheduler does not rerun it at once


def test_run_check_on_a_damaged_file_exits_non_zero(capsys, ora_home: Path) -> None:
    from ora_desktop.cli import main

    db = make_db(ora_home / "sites" / "s" / "hurt.site.db", [{"id": f"m{i}", "content": "x" * 500} for i in range(300)])
    with db.open("r+b") as handle:
        handle.seek(4096 * 5)
        handle.write(b"\xff" * 64)
    assert main(["run", "check", "--db", str(db)]) == 1
    assert ": problems in" in capsys.readouterr().out
    assert main(["run", "check", "--db", str(db), "--json"]) == 1
    assert '"outcome": "problems"' in capsys.readouterr().out


def test_a_file_too_damaged_to_open_is_a_problem_not_a_failure(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "cut.site.db", [{"id": f"m{i}", "content": "x" * 500} for i in range(300)])
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])  # truncated: the header promises more pages
    report = run_job("check", db)
    assert report.outcome == "problems" and "recover" in report.message, report.message



def test_cycles_are_found_without_looping_forever(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "cyc.site.db", [
        {"id": "a", "superseded_by": "b"}, {"id": "b", "superseded_by": "c"}, {"id": "c", "superseded_by": "a"},
        {"id": "d", "superseded_by": "a"}, {"id": "self", "superseded_by": "self"},
    ])
    with open_store(db, readonly=True) as store:
        cycles = supersession_cycles(store)
    assert sorted(sorted(c) for c in cycles) == [["a", "b", "c"], ["self"]]


# ------------------------------------------------------------------ a file that changes under the check
def test_damage_seen_while_the_file_changed_is_checked_again(monkeypatch, ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "busy.site.db", [{"id": "a"}, {"id": "b"}])
    calls = changing_under_the_first_check(monkeypatch, db)
    report = run_job("check", db)
    assert len(calls) == 2
    assert report.outcome == "ok" and not report.damaged, report.message
    assert report.message == "no problems found; the file changed during the check; checked again"
    assert "damaged" not in report.message and "recover" not in report.message
    # The history the window's Jobs panel and the daemon read says the same.
    from ora_desktop.core.history import history

    recorded = history(path=db, job="check")[0]
    assert recorded.outcome == "ok" and recorded.message == report.message


def test_run_check_says_the_file_changed_and_exits_zero(capsys, monkeypatch, ora_home: Path) -> None:
    from ora_desktop.cli import main

    db = make_db(ora_home / "sites" / "s" / "busy.site.db", [{"id": "a"}, {"id": "b"}])
    changing_under_the_first_check(monkeypatch, db)
    assert main(["run", "check", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "the file changed during the check; checked again" in out and "damaged" not in out


def test_damage_on_a_file_nobody_changes_is_reported_at_once(monkeypatch, ora_home: Path) -> None:
    from ora_desktop.core.maintenance import check

    db = make_db(ora_home / "sites" / "s" / "hurt.site.db", [{"id": "a"}])
    calls = []
    monkeypatch.setattr(check, "integrity", lambda store: calls.append(1) or ["row 1 missing from index x"])
    report = run_job("check", db)
    assert len(calls) == 1 and report.outcome == "problems" and "damaged" in report.message
    assert "changed during the check" not in report.message
