"""Backups against real processes: writers inserting during a backup, SIGKILL mid-backup, CLI restore."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ora_desktop.core import paths
from ora_desktop.core.backup import check_file, create_backup, list_backups

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import sqlite3, sys, time
path, name = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(path, timeout=30, isolation_level=None)
conn.execute("PRAGMA busy_timeout = 30000")
i = 0
while True:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                 "VALUES (?, ?, datetime('now'), datetime('now'))", (f"{name}-{i}", "w" * 2000))
    conn.execute("COMMIT")
    print(f"{name}-{i}", flush=True)  # printed only once committed
    i += 1
    time.sleep(0.002)
"""


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ora_desktop", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def big_db(path: Path, rows: int, size: int = 2000) -> Path:
    """A seed-schema WAL file filled quickly by one SQL statement."""
    from ora_desktop.core.schema import INIT_SQL

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
        "INSERT INTO memories (id, content, importance, created_at, updated_at) "
        "SELECT 'seed-' || i, hex(randomblob(?)), 1 + i % 10, datetime('now'), datetime('now') FROM n",
        (rows, size // 2),
    )
    conn.commit()
    conn.close()
    return path


def ids(path: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM memories")}
    finally:
        conn.close()


def test_backup_while_three_processes_insert_holds_every_row_committed_before_it_started(ora_home: Path) -> None:
    db = big_db(ora_home / "sites" / "busy" / "ora.site.db", 15000)
    writers, seen = [], {}
    for n in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db), f"w{n}"], stdout=subprocess.PIPE, text=True)
        seen[n] = []
        threading.Thread(target=lambda p=proc, out=seen[n]: out.extend(iter(p.stdout.readline, "")),
                         daemon=True).start()
        writers.append(proc)
    try:
        deadline = time.time() + 60
        while min(len(v) for v in seen.values()) < 30 and time.time() < deadline:
            time.sleep(0.05)
        committed = {line.strip() for v in seen.values() for line in list(v)}
        assert len(committed) >= 90, "the writers did not get going"
        info = create_backup(db)
        during = sum(len(v) for v in seen.values())
        time.sleep(0.3)
        assert all(p.poll() is None for p in writers), "a writer died during the backup"
    finally:
        for proc in writers:
            proc.terminate()
            proc.wait(timeout=10)
    in_backup = ids(info.path)
    assert committed <= in_backup  # every row committed before the backup started is in it
    assert {f"seed-{i}" for i in range(1, 15001)} <= in_backup
    assert check_file(info.path) == []
    assert sum(len(v) for v in seen.values()) > during or during > len(committed)  # writers kept writing
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_sigkill_in_the_middle_of_a_backup_leaves_no_valid_looking_backup_and_a_sound_live_file(
        ora_home: Path) -> None:
    db = big_db(ora_home / "sites" / "big" / "ora.site.db", 60000, size=3000)  # ~190 MB
    folder = paths.data_dir() / "backups" / "big" / "ora"
    config = paths.config_dir() / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[schedule]\nbackup = "1s"\ndecay = "off"\ncleanup = "off"\ncheck = "off"\n')
    daemon = subprocess.Popen([sys.executable, "-m", "ora_desktop", "daemon"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if partial_size(folder) > 1_000_000:
                break
            time.sleep(0.01)
        else:
            pytest.fail("the daemon never started writing a backup")
        daemon.send_signal(signal.SIGKILL)
    finally:
        daemon.kill()
        daemon.wait(timeout=10)
    assert daemon.returncode == -signal.SIGKILL
    # The schedule says every second: on a starved machine an earlier run may have finished
    # before the kill. That one is a real backup; the killed run must leave nothing that looks
    # like one, and whatever looks like a backup must be whole.
    finished = list_backups(db)
    assert all(check_file(b.path) == [] for b in finished)
    assert sorted(p for p in folder.iterdir() if p.name.endswith(".site.db")) == sorted(b.path for b in finished)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 60000
    conn.close()
    # The lock died with the process: the next run makes a good backup and clears the leftovers.
    config.write_text('[schedule]\nbackup = "daily"\n')
    result = cli("run", "backup", "--db", str(db))
    assert result.returncode == 0, result.stderr
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []
    after = list_backups(db)
    assert len(after) == len(finished) + 1 and all(check_file(b.path) == [] for b in after)


def partial_size(folder: Path) -> int:
    """Bytes written so far to an in-progress backup (0 when none; one may finish as we look)."""
    for partial in folder.glob(".*partial*") if folder.exists() else []:
        try:
            return partial.stat().st_size
        except FileNotFoundError:
            continue
    return 0


def test_cli_lists_and_restores_and_refuses_a_corrupt_backup(ora_home: Path) -> None:
    db = big_db(ora_home / "sites" / "shop" / "ora.site.db", 100, size=100)
    assert cli("run", "backup", "--site", "shop", "--agent", "ora").returncode == 0
    (backup,) = list_backups(db)
    listed = cli("backups", "list", "--all")
    assert listed.returncode == 0 and str(backup.path) in listed.stdout
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM memories WHERE id != 'seed-1'")
    conn.commit()
    conn.close()

    bad = backup.path.with_name("20200101T000000Z.site.db")
    data = backup.path.read_bytes()
    bad.write_bytes(data[: len(data) // 3])
    refused = cli("backups", "restore", str(bad), "--site", "shop", "--agent", "ora")
    assert refused.returncode == 2 and "refused" in refused.stderr and str(bad) in refused.stderr
    assert "Traceback" not in refused.stderr
    assert ids(db) == {"seed-1"}  # nothing changed

    restored = cli("backups", "restore", str(backup.path), "--site", "shop", "--agent", "ora")
    assert restored.returncode == 0, restored.stderr
    assert "kept at" in restored.stdout
    assert len(ids(db)) == 100
    aside = [b for b in list_backups(db) if b.before_restore]
    assert len(aside) == 1 and ids(aside[0].path) == {"seed-1"}
