"""Demo data generation: ``write_agent`` (realistic rows) beside raw SQLite inserting plain rows.

Target: 1,000,000 memories well under a minute. The raw baseline inserts the same number of
rows of similar size into a file made by the seed's init SQL, with one ``executemany`` in one
transaction and ``synchronous=OFF`` — the floor for "fill a seed-schema file", with no
realism at all. The ratio shows what the realism (varied content, formats, links) costs.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ora_desktop.core.demo import write_agent
from ora_desktop.core.schema import INIT_SQL

from .common import DATA, Row, report

CONTENT = "The checkout lives in src/app.ts; handleCheckout() is the entry point. See https://anwe.sh/blog"


def _clear(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _raw(path: Path, memories: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(INIT_SQL)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO memories (id, content, type, importance, access_count, last_accessed_at, health_score, "
        "related_to, superseded_by, created_at, updated_at, expires_at, synced_at, sync_status) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        ((f"raw-{i:07d}", CONTENT, "fact", 5, 0, None, 1.0, None, None, "2025-01-14 10:30:00",
          "2025-01-14 10:30:00", None, None, "pending") for i in range(memories)),
    )
    conn.execute("COMMIT")
    conn.close()


def _timed(fn, path: Path, memories: int) -> float:
    _clear(path)
    started = time.perf_counter()
    fn(path, memories)
    elapsed = time.perf_counter() - started
    _clear(path)
    return elapsed


def run(memories: int) -> None:
    scratch = DATA / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    ours = _timed(lambda p, n: write_agent(p, n, seed=5), scratch / "demo-ours.site.db", memories)
    raw = _timed(_raw, scratch / "demo-raw.site.db", memories)
    report(f"demo data ({memories:,} memories, one file)", [
        Row("write_agent, wall time", ours, raw, "1M well under 60 s (aim <= 20 s)", unit="s"),
        Row("write_agent, memories per second", memories / ours, memories / raw, "", unit="memories/s"),
    ])
