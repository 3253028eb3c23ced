"""A restore waits for, or refuses during, a backup of the same file held by another real process.

The lock is core's (``restore_backup`` takes the file's ``backup`` job lock), so the CLI, the
window and the daemon all honour it; the second process here holds exactly the lock a running
backup job holds.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ora_desktop.core.backup import create_backup, list_backups
from ora_desktop.core.restore import restore_backup

from .test_backup_processes import big_db, cli, ids

pytestmark = pytest.mark.slow

HOLDER = r"""
import sys, time
from ora_desktop.core.locks import job_lock
lock = job_lock("backup", sys.argv[1])
lock.acquire(timeout=0)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
released = time.time()
lock.release()
print(released, flush=True)
"""


def hold_backup_lock(db: Path, seconds: float) -> subprocess.Popen:
    """Start a process holding ``db``'s backup job lock for ``seconds``; returns once it holds it."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def shrunk(ora_home: Path) -> tuple[Path, Path]:
    """(a file of 50 memories backed up then cut down to one, its backup)."""
    db = big_db(ora_home / "sites" / "shop" / "ora.site.db", 50, size=100)
    backup = create_backup(db)
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM memories WHERE id != 'seed-1'")
    conn.commit()
    conn.close()
    return db, backup.path


def test_restore_refuses_while_another_process_backs_up_and_changes_nothing(shrunk: tuple[Path, Path]) -> None:
    db, backup = shrunk
    holder = hold_backup_lock(db, 60)
    try:
        refused = cli("backups", "restore", str(backup), "--db", str(db), "--wait", "0")
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        assert "a backup of this file is running in another process" in refused.stderr
        assert "nothing was restored" in refused.stderr
        assert ids(db) == {"seed-1"}  # unchanged
        assert not [b for b in list_backups(db) if b.before_restore]  # nothing kept aside: no restore began
    finally:
        holder.kill()
        holder.wait()


def test_restore_waits_for_a_running_backup_then_restores(shrunk: tuple[Path, Path]) -> None:
    db, backup = shrunk
    holder = hold_backup_lock(db, 1.5)
    try:
        report = restore_backup(backup, db, wait=60)
        finished = time.time()
        out, _ = holder.communicate(timeout=30)
        released = float(out.strip())
        assert released <= finished  # the restore ran only once the "backup" let go of the lock
        assert report.memories == 50 and len(ids(db)) == 50
        assert report.change.membership_changed  # views reload the whole file
    finally:
        holder.kill()
        holder.wait()
