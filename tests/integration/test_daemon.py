"""The daemon as a real process: a 1-second schedule, one daemon at a time, SIGTERM, job locks."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ora_desktop.core import paths
from ora_desktop.core.backup import check_file, list_backups
from ora_desktop.core.history import history
from ora_desktop.core.maintenance import job_lock
from tests.integration.test_backup_processes import ROOT, big_db, cli, ids

pytestmark = pytest.mark.slow
EVERY_SECOND = """
[schedule]
decay = "1s"
cleanup = "1s"
backup = "1s"
check = "1s"

[backup]
keep_last = 2
keep_daily = 0
keep_weekly = 0

[daemon]
rescan = "1s"
"""


def write_config(text: str) -> None:
    path = paths.config_dir() / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def start_daemon(*extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ora_desktop", "daemon", *extra], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for(predicate, timeout: float = 40.0) -> None:
    deadline = time.time() + timeout
    while not predicate():
        if time.time() > deadline:
            pytest.fail("timed out waiting for the daemon")
        time.sleep(0.1)


def stop(daemon: subprocess.Popen) -> str:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
    try:
        _, err = daemon.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        _, err = daemon.communicate()
    return err


def expiring_db(ora_home: Path) -> Path:
    db = big_db(ora_home / "sites" / "anwe-sh" / "ora.site.db", 200, size=100)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE memories SET expires_at = '2020-01-01T00:00:00Z' WHERE rowid <= 10")
    conn.commit()
    conn.close()
    return db


def test_daemon_with_a_one_second_schedule_runs_and_records_jobs_then_stops_on_sigterm(ora_home: Path) -> None:
    db = expiring_db(ora_home)
    write_config(EVERY_SECOND)
    daemon = start_daemon()
    try:
        wait_for(lambda: {"decay", "cleanup", "backup", "check"} <= {r.job for r in history() if r.outcome == "ok"})
        wait_for(lambda: len([r for r in history(job="check") if r.outcome == "ok"]) >= 3)
        second = cli("daemon")
    finally:
        err = stop(daemon)
    assert daemon.returncode == 0, err
    assert second.returncode == 2
    assert "already running" in second.stderr and f"pid {daemon.pid}" in second.stderr
    runs = history(path=db)
    assert {r.pid for r in runs} == {daemon.pid}
    cleanup = [r for r in runs if r.job == "cleanup"]
    assert cleanup[-1].counts == {"expired": 10}  # the first cleanup (oldest) removed the expired rows
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 190
    conn.close()
    assert 1 <= len(list_backups(db)) <= 2  # rotated to keep_last = 2
    assert "received SIGTERM" in err and "daemon stopped" in err
    log = (paths.log_dir() / "daemon.log").read_text()
    assert "daemon started" in log and "cleanup" in log
    # After a clean stop a new daemon may start.
    again = cli("daemon", "--once")
    assert again.returncode == 0, again.stderr


def test_the_same_job_never_runs_twice_at_once_on_the_same_file(ora_home: Path) -> None:
    db = big_db(ora_home / "sites" / "big" / "ora.site.db", 8000, size=3000)  # backups take a moment
    write_config(EVERY_SECOND.replace('decay = "1s"', 'decay = "off"').replace('check = "1s"', 'check = "off"')
                 .replace('cleanup = "1s"', 'cleanup = "off"'))
    # While this test holds the (backup, file) lock, neither the daemon nor the CLI may back it up.
    lock = job_lock("backup", db)
    lock.acquire()
    daemon = start_daemon()
    try:
        wait_for(lambda: any(r.outcome == "skipped-locked" and r.pid == daemon.pid for r in history(job="backup")))
        blocked = cli("run", "backup", "--db", str(db))
        assert blocked.returncode == 3 and "skipped-locked" in blocked.stdout
        assert list_backups(db) == []
        lock.release()
        # Now the daemon and three command-line processes compete for the same (job, file).
        racers = [subprocess.Popen([sys.executable, "-m", "ora_desktop", "run", "backup", "--db", str(db)], cwd=ROOT,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(3)]
        for racer in racers:
            racer.wait(timeout=120)
        wait_for(lambda: len([r for r in history(job="backup") if r.outcome == "ok"]) >= 3)
    finally:
        if lock.is_locked:
            lock.release()
        err = stop(daemon)
    assert daemon.returncode == 0, err
    ran = sorted((r for r in history(job="backup", limit=0) if r.outcome == "ok"), key=lambda r: r.started)
    assert len({r.pid for r in history(job="backup", limit=0)}) >= 2
    for before, after in zip(ran, ran[1:], strict=False):
        assert before.ended <= after.started, f"overlapping backups: {before} and {after}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_lets_the_running_backup_finish(ora_home: Path, sig: signal.Signals) -> None:
    db = big_db(ora_home / "sites" / "big" / "ora.site.db", 40000, size=3000)  # ~130 MB
    folder = paths.data_dir() / "backups" / "big" / "ora"
    write_config('[schedule]\nbackup = "1s"\ndecay = "off"\ncleanup = "off"\ncheck = "off"\n')
    daemon = start_daemon()
    try:
        wait_for(lambda: folder.exists() and any(folder.glob(".*partial*")), timeout=60)
        daemon.send_signal(sig)
        err = stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0, err
    assert "letting the running job finish" in err
    (backup,) = list_backups(db)  # the interrupted-by-signal run completed; no new one started
    assert not any(folder.glob(".*partial*"))
    assert check_file(backup.path) == [] and ids(backup.path) == ids(db)
    assert [r.outcome for r in history(job="backup")] == ["ok"]


DECAY_NOW = """
import sys, time
from pathlib import Path
from ora_desktop.core.maintenance import JobContext, decay
start = float(sys.argv[2])
time.sleep(max(0, start - time.time()))
outcome = decay.run(JobContext(Path(sys.argv[1])))
print(outcome.counts["days"], outcome.counts["decayed"], "finishing" in outcome.message)
"""


def test_processes_decaying_at_once_without_the_job_lock_still_decay_once(ora_home: Path) -> None:
    """The window and the daemon at once: the BEGIN IMMEDIATE transaction alone keeps it to one day.
    One process begins the decay; the others find it done, or share the chunks it has left."""
    db = big_db(ora_home / "sites" / "s" / "ora.site.db", 5000, size=100)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE memories SET last_accessed_at = datetime('now', '-30 days'), health_score = 0.5")
    conn.commit()
    conn.close()
    start = time.time() + 1.5  # every process is up before they go
    procs = [subprocess.Popen([sys.executable, "-c", DECAY_NOW, str(db), str(start)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(4)]
    runs = [p.communicate(timeout=60)[0].split() for p in procs]
    began = [r for r in runs if r[0] == "1" and r[2] == "False"]
    assert len(began) == 1, runs  # one decay of one day, begun once
    assert all(r[0] == "0" or r[2] == "True" for r in runs if r not in began), runs  # done, or helped finish it
    assert sum(int(r[1]) for r in runs) == 5000  # every memory decayed once, by whichever process
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT DISTINCT round(health_score, 6) FROM memories").fetchall() == [(0.49,)]
    conn.close()
