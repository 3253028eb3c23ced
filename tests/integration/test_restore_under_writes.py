"""Restore while an agent process writes: every committed row is in the restored file or the copy kept aside."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ora_desktop.core.backup import create_backup
from ora_desktop.core.restore import LOCKED_SWAP, restore_backup
from tests.integration import agent_writer
from tests.unit.maintenance_support import ids, make_db


def test_restores_during_agent_writes_lose_no_committed_row(ora_home: Path, tmp_path: Path) -> None:
    db = make_db(ora_home / "sites" / "shop" / "ora.site.db", [{"id": f"seed-{i}"} for i in range(2000)])
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    backup = create_backup(db)
    log, stop = tmp_path / "committed.log", tmp_path / "stop"
    writer = agent_writer.start(db, "w", log, stop)
    reports = []
    try:
        deadline = time.monotonic() + 30
        while (not log.exists() or log.stat().st_size < 200) and time.monotonic() < deadline:
            time.sleep(0.05)
        for _ in range(5):
            time.sleep(0.3)
            reports.append(restore_backup(backup.path, db))
        time.sleep(0.3)
    finally:
        stop.touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0
    committed = set(log.read_text().split())
    assert len(committed) > 100  # the agent really was writing throughout
    kept = set()
    for report in reports:
        assert report.strategy == LOCKED_SWAP and "held off" in report.message
        kept |= ids(report.kept_aside)
    live = ids(db)
    lost = committed - live - kept
    assert not lost, f"{len(lost)} committed rows are in neither the live file nor a kept-aside copy"
    # Each kept-aside copy is exactly the file as it was at its restore: the backup's rows plus the
    # agent's rows since the previous restore — none dropped in between.
    assert {f"seed-{i}" for i in range(2000)} <= live
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    check.close()
