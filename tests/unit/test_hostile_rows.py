"""Rows an agent wrote with bytes that are not UTF-8, and odd values: every command survives them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.search import search
from tests.unit.maintenance_support import ago, column, make_db
from tests.unit.test_cli_helpers import cli

BAD = b"deploy key \xff\xfe broken \xc3( bytes"


@pytest.fixture
def db(ora_home: Path) -> Path:
    path = make_db(ora_home / "sites" / "s" / "ora.site.db",
                   [{"id": f"ok{i}", "content": f"deploy note {i}", "importance": 5} for i in range(5)])
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                 "VALUES ('bad', CAST(? AS TEXT), 'fact', 9, datetime('now'), datetime('now'))", (BAD,))
    conn.commit()
    conn.close()
    return path


def test_every_read_survives_a_row_that_is_not_utf8(db: Path) -> None:
    with open_store(db) as store:
        bad = store.get("bad")
        assert "\ufffd" in bad.content and bad.content.startswith("deploy key")
        assert bad.undecodable == ("content",)
        assert store.get("ok1").undecodable == ()
        assert "bad" in {m.id for m in store.list()}
        assert "bad" in {m.id for m in store.recall("fact")}
        bundle = store.context("deploy key", token_budget=2000)
        assert "deploy key" in bundle.text
    assert "bad" in {h.memory.id for h in search(db, "deploy").hits}


def test_cli_commands_survive_and_rm_removes_it_keeping_the_bytes(capsys, db: Path) -> None:
    for argv in (["list"], ["recall", "fact"], ["search", "deploy"], ["context", "deploy key"], ["show", "bad"]):
        result = cli(capsys, *argv, "--db", str(db))
        assert result.code == 0, (argv, result)
        assert "Traceback" not in result.err and "unexpected error" not in result.err
    shown = cli(capsys, "show", "--db", str(db), "bad")
    assert "not valid UTF-8" in shown.out and "\ufffd" in shown.out
    listed = cli(capsys, "list", "--db", str(db))
    flags = {line.split()[0]: line.split()[8] for line in listed.out.splitlines()[1:]}
    assert "U" in flags["bad"] and "U" not in flags["ok1"]
    assert cli(capsys, "rm", "--db", str(db), "bad").code == 0
    with open_store(db) as store:
        assert store.find("bad") is None
        (trash_id,) = [d.trash_id for d in store.trash() if d.memory.id == "bad"]
        store.restore_deleted([trash_id])
    raw = sqlite3.connect(db).execute("SELECT CAST(content AS BLOB) FROM memories WHERE id = 'bad'").fetchone()[0]
    assert raw == BAD  # undelete brings back the original bytes


def test_check_reports_it_and_repair_fixes_it_keeping_the_original_bytes(db: Path) -> None:
    report = run_job("check", db)
    assert report.counts.get("invalid_utf8") == 1 and "not valid UTF-8" in report.message
    assert ("bad", "content holds bytes that are not valid UTF-8") in report.would_change
    repaired = run_job("check", db, repair=True)
    assert repaired.counts.get("repaired_invalid_utf8") == 1, repaired.message
    conn = sqlite3.connect(db)
    content = conn.execute("SELECT content FROM memories WHERE id = 'bad'").fetchone()[0]  # decodes now
    kept = conn.execute("SELECT memory_id, column_name, original FROM ora_desktop_original_bytes").fetchall()
    conn.close()
    assert content == BAD.decode("utf-8", "replace")
    assert kept == [("bad", "content", BAD)]
    assert run_job("check", db).counts.get("invalid_utf8") is None


# A legacy file: the seed's columns without its CHECK constraints (values of any kind get in).
LEGACY_SQL = """CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, type TEXT DEFAULT 'fact',
importance INTEGER DEFAULT 5, access_count INTEGER DEFAULT 0, last_accessed_at TEXT, health_score REAL DEFAULT 1.0,
related_to TEXT, superseded_by TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, expires_at TEXT,
synced_at TEXT, sync_status TEXT DEFAULT 'pending');"""


def test_odd_values_are_flagged_and_left_alone_by_jobs(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "odd.site.db", init_sql=LEGACY_SQL, rows=[
        {"id": "int-expiry", "expires_at": 5},           # a small integer: julianday() reads it as 4713 BC
        {"id": "text-nan", "health_score": "NaN", "last_accessed_at": ago(30)},
        {"id": "past", "expires_at": ago(1)},
    ])
    before = column(db, "health_score")
    report = run_job("check", db)
    assert report.counts.get("odd_expires_at") == 1 and report.counts.get("odd_health_score") == 1
    assert run_job("cleanup", db).counts["expired"] == 1  # only the real past expiry
    assert set(column(db, "id")) == {"int-expiry", "text-nan"}
    assert run_job("decay", db).outcome == "ok"
    assert column(db, "health_score")["text-nan"] == before["text-nan"] == "NaN"


def test_a_failed_decay_leaves_the_file_byte_identical(ora_home: Path) -> None:
    path = ora_home / "sites" / "s" / "strict.site.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    # Columns of the wrong types, enforced (STRICT): decay's REAL cannot be stored in an INTEGER column.
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, type TEXT, importance INTEGER, "
                 "access_count INTEGER, last_accessed_at TEXT, health_score INTEGER, related_to TEXT, "
                 "superseded_by TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, expires_at TEXT, "
                 "synced_at TEXT, sync_status TEXT) STRICT")
    conn.execute("INSERT INTO memories VALUES ('m', 'x', 'fact', 5, 0, ?, 1, NULL, NULL, ?, ?, NULL, NULL, "
                 "'pending')", (ago(30), ago(30), ago(30)))
    conn.commit()
    conn.close()
    before = path.read_bytes()
    report = run_job("decay", path)
    assert report.outcome == "failed"
    assert path.read_bytes() == before
