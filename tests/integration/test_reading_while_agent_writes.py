"""Reading while an agent writes the way short-lived agent processes do (issue 31).

A real agent process opens the file, inserts one row and closes it, ten times a second. Its
close is the last one whenever no one else holds the file: SQLite checkpoints the -wal into the
file and deletes -wal and -shm, so its next write rewrites pages of the file itself. Meanwhile
every read-only face runs over and over: the check job, export, reindex, duplicates, backup and
the read-only CLI commands (in-process through the CLI's ``main``, and a few as real
``ora-desktop`` processes). A reader that took no locks (``immutable``) read torn pages here:
the check reported "integrity errors; the file is damaged" on a sound file.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.cli import main
from ora_desktop.core.backup import create_backup
from ora_desktop.core.demo import write_agent
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.search.index import get_index
from tests.integration.agent_writer import start_reopening

MEMORIES = 5000
RUNS = 50
AGENT = "agent"


def _cli(*args: str) -> str:
    """Run one CLI command in this process; its standard output (a non-zero exit is a failure).

    The search index of the file is closed afterwards, as the command's own process would end:
    a connection kept open would hold the file for every later read of this test.
    """
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        if "--db" in args:
            get_index(args[args.index("--db") + 1]).close()
    if code != 0:
        raise AssertionError(f"ora-desktop {' '.join(args)} exited {code}: {err.getvalue().strip()}")
    return out.getvalue()


def _committed(log: Path) -> int:
    """How many inserts the agent has logged (each logged only after its COMMIT returned)."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def _prefix(ids: list[str], before: int, log: Path) -> str:
    """'' when the agent's ids in ``ids`` are exactly its first k inserts, with every insert
    committed before the read began among them; else what is wrong."""
    numbers = sorted(int(i.rsplit("-", 1)[1]) for i in ids if i.startswith(f"{AGENT}-"))
    k = len(numbers)
    if numbers != list(range(k)):
        return f"not a prefix of the agent's inserts: {numbers[:3]}…{numbers[-3:]} ({k} ids)"
    if k < before:
        return f"holds {k} of the agent's inserts but {before} had committed before the read began"
    if k > _committed(log) + 1:
        return f"holds {k} of the agent's inserts, more than it ever committed"
    return ""


def _backup_ids(path: Path) -> tuple[list[str], list[str]]:
    """(integrity_check messages other than ok, ids) of a backup, read without locks (ours alone)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
        return problems, [r[0] for r in conn.execute("SELECT id FROM memories")]
    finally:
        conn.close()


@pytest.mark.slow
def test_every_read_only_face_stays_sound_while_an_agent_opens_writes_and_closes(ora_home: Path, tmp_path: Path):
    path = ora_home / "sites" / "anwe-sh" / "ora.site.db"
    write_agent(path, MEMORIES, seed=3)
    log, stop = tmp_path / "agent.log", tmp_path / "stop"
    agent = start_reopening(path, AGENT, log, stop, per_second=10)
    failures: list[str] = []
    exports, backups = tmp_path / "exports", tmp_path / "backups"
    exports.mkdir()

    def check(n: int) -> None:
        report = run_job("check", path)
        if report.outcome != "ok" or "damaged" in report.message:
            failures.append(f"check {n}: {report.outcome}: {report.message}")

    def export(n: int) -> None:
        before = _committed(log)
        out = exports / f"{n}.jsonl"
        _cli("export", "--db", str(path), "-o", str(out))
        lines = out.read_text().splitlines()
        ids = [json.loads(line)["id"] for line in lines[1:]]  # after the header line
        if wrong := _prefix(ids, before, log):
            failures.append(f"export {n}: {wrong}")

    def backup(n: int) -> None:
        before = _committed(log)
        info = create_backup(path, backups, rotate=False)
        problems, ids = _backup_ids(info.path)
        if problems:
            failures.append(f"backup {n}: integrity_check: {problems[:3]}")
        if wrong := _prefix(ids, before, log):
            failures.append(f"backup {n}: {wrong}")
        if len(ids) < MEMORIES:
            failures.append(f"backup {n}: {len(ids)} memories, fewer than the {MEMORIES} the file began with")

    def reindex(n: int) -> None:
        out = _cli("reindex", "--db", str(path))
        indexed = int(out.rsplit(": ", 1)[1].split()[0].replace(",", ""))
        if indexed < MEMORIES:
            failures.append(f"reindex {n}: indexed {indexed}, fewer than the {MEMORIES} the file began with")

    def read_only_commands(n: int) -> None:
        shown = f"mem-3-{n * 97 % MEMORIES:07d}"
        for args in (["list", "--json"], ["show", shown], ["search", "deploy"], ["recall", "fact"],
                     ["important"], ["duplicates", "--exact-only"], ["check-schema"]):
            _cli(*args, "--db", str(path))
        _cli("sites")

    faces: list[Callable[[int], None]] = [check, export, backup, reindex, read_only_commands]
    try:
        while _committed(log) < 3:  # the agent is writing
            time.sleep(0.05)
        for n in range(RUNS):
            for face in faces:
                try:
                    face(n)
                except Exception as exc:  # noqa: BLE001 - every error is a finding, listed below
                    failures.append(f"{face.__name__} {n}: {type(exc).__name__}: {exc}")
        for n in range(5):  # the same faces as real processes
            for args in (["run", "check"], ["list"], ["search", "deploy"]):
                done = subprocess.run([sys.executable, "-m", "ora_desktop", *args, "--db", str(path)],
                                      capture_output=True, text=True, timeout=120)
                if done.returncode != 0 or "damaged" in done.stdout or "Traceback" in done.stderr:
                    failures.append(f"ora-desktop {' '.join(args)} {n}: exit {done.returncode}: "
                                    f"{(done.stdout + done.stderr).strip()[-300:]}")
    finally:
        stop.touch()
        agent.wait(timeout=30)
    written = _committed(log)
    assert written >= 20, f"the agent wrote only {written} rows"
    assert failures == [], f"{len(failures)} failures, first: " + "\n".join(failures[:10])
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM memories WHERE id LIKE 'agent-%'").fetchone()[0] == written
    finally:
        conn.close()
