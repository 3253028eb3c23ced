"""Launch from process start to the first rows painted, cold and warm, beside a raw SQLite process.

Each launch is a new ``python`` process running the real start-up path (``launch_probe``), timed
from just before the process is spawned. "Cold" starts with empty cache, config and state folders
(no search index, no saved window state: a first launch); "warm" reuses them (every later launch).
The baseline is a new ``python`` process that opens the file with ``sqlite3`` and reads the same
first 100 rows. Each is run several times; the worst and the median are printed.

Every process reuses the bytecode Python compiled on an earlier run (``common.bytecode_env``; an
untimed launch first writes it), as an installed copy does: in a ``PYTHONDONTWRITEBYTECODE``
environment the app would otherwise be recompiled from source at every launch.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, Row, bench_file, bytecode_env, report

RUNS = 3
RAW = ("import sqlite3, sys; c = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True); "
       "c.execute(\"SELECT * FROM memories WHERE (superseded_by IS NULL OR superseded_by = '') "
       "ORDER BY julianday(created_at) DESC, rowid DESC LIMIT 100\").fetchall()")


def launch(path: Path, dirs: Path) -> float:
    """Seconds from spawning the app to its first rows painted."""
    env = bytecode_env({**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(dirs), "ORA_HOME": str(dirs / "ora")})
    for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[var] = str(dirs / var.lower())
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "tests.benchmarks.launch_probe", str(path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    painted = [line for line in done.stdout.splitlines() if line.startswith("painted ")]
    if not painted:
        raise RuntimeError(f"the window never painted rows (exit {done.returncode}): {done.stderr[-800:]}")
    return float(painted[0].split()[1]) - started


def raw_launch(path: Path) -> float:
    started = time.time()
    subprocess.run([sys.executable, "-c", RAW, str(path)], check=True, timeout=300, env=bytecode_env())
    return time.time() - started


def run(memories: int) -> None:
    path = bench_file(memories)
    raw_launch(path)  # warm the OS file cache for both sides alike
    with tempfile.TemporaryDirectory(prefix="ora-launch-") as folder:
        launch(path, Path(folder))  # untimed: Python compiles and keeps the bytecode, as on any first run
    cold, warm, raw = [], [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory(prefix="ora-launch-") as folder:
            cold.append(launch(path, Path(folder)))
            warm.append(launch(path, Path(folder)))
        raw.append(raw_launch(path))
    worst_raw = max(raw)
    report(f"Launch from process start on {memories:,} memories ({RUNS} runs each; offscreen)", [
        Row("cold launch (empty caches), worst", max(cold), worst_raw, "< 1 s"),
        Row("cold launch, median", statistics.median(cold), statistics.median(raw), ""),
        Row("warm launch, worst", max(warm), worst_raw, "< 1 s"),
        Row("warm launch, median", statistics.median(warm), statistics.median(raw), ""),
    ])
    print("  (raw: a new python process reading the first 100 rows with sqlite3; every run: cold "
          + ", ".join(f"{t * 1000:.0f}" for t in cold) + " ms; warm " + ", ".join(f"{t * 1000:.0f}" for t in warm)
          + " ms)")
