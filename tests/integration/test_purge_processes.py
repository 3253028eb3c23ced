"""Purge as a user runs it: real ``ora-desktop`` processes, then a scan of every byte we manage."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # starts real processes
SECRET = "sk-live-zqx7vortex4secret9leak"  # one token, lower case: FTS5 keeps it as a term verbatim


def ora(*argv: object, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    env.pop("ORA_DEBUG", None)
    result = subprocess.run([sys.executable, "-m", "ora_desktop", *map(str, argv)], capture_output=True,
                            text=True, env=env, timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def holding(roots: list[Path], secret: str = SECRET) -> list[Path]:
    """Every file under ``roots`` whose bytes hold the secret (any case)."""
    wanted = [secret.encode(), secret.lower().encode(), secret.upper().encode()]
    found = []
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                data = path.read_bytes()
                if any(w in data for w in wanted):
                    found.append(path)
    return sorted(found)


@pytest.fixture
def scene(isolated_dirs: Path) -> tuple[Path, list[Path], str]:
    """A demo home with the secret stored (by a real process), linked, indexed, backed up and
    deleted to the trash; the daemon's history and log have seen it run."""
    home = isolated_dirs / "ora"
    ora("demo", "--home", home, "--memories", "600")
    target = ("--home", home, "--site", "anwe-sh", "--agent", "ora")
    added = json.loads(ora("add", *target, f"The deploy key is {SECRET} (rotate it!)", "--json").stdout)
    memory_id = added["id"]
    other = json.loads(ora("add", *target, "a neighbour", "--json").stdout)["id"]
    ora("link", *target, other, memory_id)
    assert memory_id in ora("search", *target, SECRET.split("-")[-1], "--json").stdout
    ora("run", "backup", *target)
    ora("rm", *target, memory_id)
    ora("run", "cleanup", *target)  # history and the log record a run while the secret is in the trash
    roots = [isolated_dirs / d for d in ("ora", "cache", "data", "state", "config")]
    assert holding(roots), "the scene must hold the secret before the purge"
    return home, roots, memory_id


def test_purge_with_rewrite_backups_leaves_no_byte_of_the_secret_anywhere(scene) -> None:
    home, roots, memory_id = scene
    target = ("--home", home, "--site", "anwe-sh", "--agent", "ora")
    out = json.loads(ora("purge", *target, memory_id, "--yes", "--rewrite-backups", "--json").stdout)
    assert out["purged"] == [memory_id] and len(out["backups_rewritten"]) == 1
    assert holding(roots) == []
    path = home / "sites" / "anwe-sh" / "ora.site.db"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        dangling = conn.execute("SELECT count(*) FROM memories WHERE instr(related_to, ?)", (memory_id,)).fetchone()
        assert dangling[0] == 0
    finally:
        conn.close()
    assert ora("search", *target, SECRET.split("-")[-1], "--json").stdout.count(memory_id) == 0


def test_without_rewrite_only_the_named_backups_still_hold_it(scene) -> None:
    home, roots, memory_id = scene
    target = ("--home", home, "--site", "anwe-sh", "--agent", "ora")
    out = json.loads(ora("purge", *target, memory_id, "--yes", "--json").stdout)
    named = sorted(Path(p) for p in out["backups_holding"])
    assert named and out["backups_rewritten"] == []
    assert holding(roots) == named
    assert "still hold" in out["message"]


def test_purge_asks_first_and_changes_nothing_without_yes(scene) -> None:
    home, roots, memory_id = scene
    target = ("--home", home, "--site", "anwe-sh", "--agent", "ora")
    before = holding(roots)
    result = ora("purge", *target, memory_id, check=False)
    assert result.returncode == 2 and "--yes" in result.stderr and len(result.stderr.splitlines()) == 1
    assert "1 memory" in result.stderr and "backup" in result.stderr
    assert holding(roots) == before


def test_the_daemon_records_a_damaged_file_and_run_check_exits_non_zero(isolated_dirs: Path) -> None:
    from ora_desktop.core.history import history

    home = isolated_dirs / "ora"
    ora("demo", "--home", home, "--memories", "300")
    hurt = home / "sites" / "anwe-sh" / "ora.site.db"
    conn = sqlite3.connect(hurt)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    with hurt.open("r+b") as handle:  # scribble over a page of the table
        handle.seek(4096 * 5)
        handle.write(b"\xff" * 64)
    daemon = ora("daemon", "--once", "--home", home, check=False)  # jobs that write fail on this file
    assert "daemon stopped" in daemon.stderr
    checks = [r for r in history(job="check") if Path(r.path) == hurt.resolve()]
    assert checks and checks[0].outcome == "problems", checks
    assert "problems" in (Path(os.environ["XDG_STATE_HOME"]) / "ora-desktop" / "log" / "daemon.log").read_text()
    result = ora("run", "check", "--db", hurt, check=False)
    assert result.returncode == 1 and ": problems" in result.stdout
