"""A smaller fault run: three agent processes write while the jobs loop and are SIGKILLed 20 times.

Asserts what the full fault run found and must stay true: no committed row is lost (every row an
agent committed is in the live file, a row removed by cleanup is in the trash), the file passes
``integrity_check``, every finished backup passes its check, and no half-written backup is left
looking like one.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ora_desktop.core.backup import check_file, list_backups
from tests.integration import agent_writer
from tests.unit.maintenance_support import ago, ids, make_db

pytestmark = pytest.mark.slow

KILLS = 20
WRITERS = 3

# The jobs, looping until killed: every write job plus a bulk edit through the library.
JOBS = r"""
import sys
from ora_desktop.core import open_store
from ora_desktop.core.maintenance import run_job
path = sys.argv[1]
while True:
    for job in ("decay", "cleanup", "backup", "check"):
        run_job(job, path)
    with open_store(path) as store:
        store.update_many([f"seed-{i}" for i in range(0, 400, 7)], importance=6)
"""


def test_writers_and_jobs_under_sigkill_lose_nothing(ora_home: Path, tmp_path: Path) -> None:
    seeds = [{"id": f"seed-{i}", "last_accessed_at": ago(30), "health_score": 0.9} for i in range(400)]
    seeds += [{"id": f"old-{i}", "expires_at": ago(2)} for i in range(100)]
    db = make_db(ora_home / "sites" / "fault" / "ora.site.db", seeds)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    stop = tmp_path / "stop"
    logs = [tmp_path / f"writer-{w}.log" for w in range(WRITERS)]
    writers = [agent_writer.start(db, f"w{w}", log, stop)
               for w, log in enumerate(logs)]
    rng = random.Random(9)  # the kill times: seeded, the same on every run
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    kills = 0
    try:
        while kills < KILLS:
            jobs = subprocess.Popen([sys.executable, "-c", JOBS, str(db)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.6 + rng.random() * 0.9)  # past the imports, somewhere inside a job
            if jobs.poll() is None:
                jobs.send_signal(signal.SIGKILL)
                kills += 1
            jobs.wait(timeout=30)
        # After the kills, every job still runs to the end (locks freed, leftovers cleaned) while agents write.
        from ora_desktop.core.maintenance import run_job

        for job in ("decay", "cleanup", "backup", "check"):
            report = run_job(job, db)
            assert report.outcome == "ok", (job, report.message)
    finally:
        stop.touch()
        for writer in writers:
            writer.wait(timeout=60)
    assert all(w.returncode == 0 for w in writers)
    committed = {line for log in logs for line in log.read_text().split()}
    assert len(committed) > 300  # the agents really wrote throughout
    live = ids(db)
    trashed = ids(db, "ora_desktop_trash", "memory_id")
    assert not committed - live, "rows an agent committed are missing"
    assert {s["id"] for s in seeds} <= live | trashed
    assert trashed <= {f"old-{i}" for i in range(100)}  # cleanup removed only the expired rows
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    check.close()
    backups = list_backups(db)
    assert backups and not list(backups[0].path.parent.glob(".*partial*"))  # no half-written copy left
    for backup in backups:
        assert check_file(backup.path) == []
    from ora_desktop.core.history import history

    killed_runs = [run for run in history(limit=0) if run.pid is not None and run.pid != os.getpid()]
    assert {run.job for run in killed_runs} >= {"decay", "cleanup"}  # the jobs really ran between the kills
