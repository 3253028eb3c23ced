"""A decay run under a clock 30 days ahead (libfaketime, a real process), then normal runs."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.maintenance_support import ago, make_db

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime (apt-get install faketime)")


def ora(*args: str, fake: str | None = None) -> subprocess.CompletedProcess[str]:
    prefix = ["faketime", "-f", fake] if fake else []
    return subprocess.run([*prefix, sys.executable, "-m", "ora_desktop", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def health(db: Path) -> dict[str, float]:
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT id, health_score FROM memories"))
    conn.close()
    return rows


def test_a_run_30_days_ahead_is_named_re_anchored_and_undone(ora_home: Path) -> None:
    db = make_db(ora_home / "sites" / "s" / "ora.site.db", [
        {"id": "stale", "last_accessed_at": ago(30), "health_score": 0.8},
        {"id": "used-today", "last_accessed_at": ago(0), "health_score": 0.9},
    ])
    assert ora("run", "decay", "--db", str(db)).returncode == 0  # an ordinary first decay
    before = health(db)
    ahead = ora("run", "decay", "--db", str(db), fake="+30d")
    assert ahead.returncode == 0, ahead.stderr
    assert health(db)["stale"] < before["stale"] - 0.25
    after = ora("run", "decay", "--db", str(db))  # the real clock again
    assert after.returncode == 0, after.stderr
    assert "clock error: the decay mark" in after.stdout and "re-anchored to now" in after.stdout
    back = ora("undo", "--db", str(db))
    assert back.returncode == 0, back.stderr
    assert health(db) == before
