"""Maintenance jobs against raw SQLite doing the same work on the same file, in one run.

* decay: our job (the UPDATE in short chunks with a resumable mark, so agents are never locked
  out) vs the same rule as one raw UPDATE, and the seed's literal UPDATE (which skips
  never-accessed memories). The chunks leave the lock free 60 ms apart, which costs wall time
  on a large file. Also the longest time one of
  our chunks held the write lock (target: 0.25 s), beside the raw UPDATE's one transaction.
* cleanup: our recoverable cleanup vs the seed's raw DELETE, and vs the raw INSERT…SELECT into a
  trash table + DELETE (what keeping the rows costs in SQL alone).
* backup of a ~1 GB file: ours (online backup, integrity_check of the copy, fsync, rename) vs
  the ``sqlite3`` command line's ``.backup``, and vs ``.backup`` + ``PRAGMA integrity_check``.
  Target: within 1.2x.
* check: ours (integrity_check + lint) vs raw ``PRAGMA integrity_check``.

Writes run on scratch copies (``common.fresh_copy``), one fresh copy per timed run where the
work would otherwise be gone after the first run. Ours and raw take turns run by run.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ora_desktop.core import chunks
from ora_desktop.core.config import Config
from ora_desktop.core.maintenance import JobContext, check, cleanup, decay
from ora_desktop.core.schema import INIT_SQL, SEED_INDEXES

from .common import DATA, Row, bench_file, fresh_copy, report

GIGABYTE = 1_000_000_000
SEED_DECAY = ("UPDATE memories SET health_score = MAX(0, health_score - 0.01) "
              "WHERE last_accessed_at < datetime('now', '-7 days')")
SAME_RULE_DECAY = ("UPDATE memories SET health_score = MAX(0, health_score - 0.01) WHERE health_score > 0 "
                   "AND julianday(coalesce(nullif(last_accessed_at, ''), created_at)) < julianday('now') - 7")
SEED_CLEANUP = "DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at < datetime('now')"
EXPIRED = "expires_at IS NOT NULL AND expires_at != '' AND julianday(expires_at) < julianday('now')"


def interleaved(setup: Callable[[], object], variants: dict[str, Callable[[object], object]],
                repeat: int = 3) -> dict[str, float]:
    """Median seconds of each ``variant(setup())``, taking turns round by round (setup not timed),
    so a busy moment on a shared machine lands on every variant rather than on one."""
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            state = setup()
            gc.collect()
            started = time.perf_counter()
            fn(state)
            samples[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in samples.items()}


def raw_write(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("BEGIN IMMEDIATE")
    for sql in statements:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.close()


def _decay(source: Path, rows: list[Row]) -> None:
    path = fresh_copy(source, "decay.site.db")

    def reset(_=None) -> Path:  # forget the last decay so every timed run really decays one day
        conn = sqlite3.connect(path)
        conn.execute("DROP TABLE IF EXISTS ora_desktop_state")
        conn.commit()
        conn.close()
        return path

    def ours(p: Path) -> None:
        assert decay.run(JobContext(p)).counts["days"] == 1

    t = interleaved(reset, {"ours": ours, "same": lambda p: raw_write(p, SAME_RULE_DECAY),
                            "seed": lambda p: raw_write(p, SEED_DECAY)}, repeat=5)
    held = chunks.last_sizer.longest
    rows.append(Row("decay (ours, in chunks 60 ms apart) vs the same rule as one raw UPDATE", t["ours"], t["same"],
                    "(info)", "s"))
    rows.append(Row("  decay: longest write-lock hold (ours, in chunks) vs the one raw UPDATE", held, t["same"],
                    "<= 0.25 s", "s"))
    rows.append(Row("decay (ours) vs the seed's literal UPDATE", t["ours"], t["seed"], "(info)", "s"))


def _cleanup(source: Path, rows: list[Row]) -> None:
    def copy() -> Path:
        return fresh_copy(source, "cleanup.site.db")

    def ours(p: Path) -> None:
        assert cleanup.run(JobContext(p)).counts["expired"] > 0

    def raw_recoverable(p: Path) -> None:
        raw_write(p, "CREATE TABLE IF NOT EXISTS trash (memory_id TEXT, row_json TEXT)",
                  "INSERT INTO trash SELECT id, json_object('id', id, 'content', content, 'type', type, "
                  "'importance', importance, 'access_count', access_count, 'last_accessed_at', last_accessed_at, "
                  "'health_score', health_score, 'related_to', related_to, 'superseded_by', superseded_by, "
                  "'created_at', created_at, 'updated_at', updated_at, 'expires_at', expires_at, "
                  f"'synced_at', synced_at, 'sync_status', sync_status) FROM memories WHERE {EXPIRED}",
                  f"DELETE FROM memories WHERE {EXPIRED}")

    t = interleaved(copy, {"ours": ours, "delete": lambda p: raw_write(p, SEED_CLEANUP), "keep": raw_recoverable},
                    repeat=5)
    held = chunks.last_sizer.longest
    rows.append(Row("cleanup (ours, recoverable) vs raw DELETE", t["ours"], t["delete"], "(info)", "s"))
    rows.append(Row("  cleanup: longest write-lock hold (ours, in chunks) vs raw copy+DELETE in one transaction",
                    held, t["keep"], "<= 0.25 s", "s"))
    rows.append(Row("cleanup (ours) vs raw copy-to-trash + DELETE", t["ours"], t["keep"], "(like for like)", "s"))
    rows.append(Row("  what keeping the rows costs: raw copy+DELETE vs DELETE", t["keep"], t["delete"], "(info)",
                    "s"))


def gigabyte_file(source: Path, memories: int) -> Path:
    """A ~1 GB agent file: the benchmark file's rows with their content padded (built once)."""
    path = DATA / f"bench-1gb-{memories}.site.db"
    if path.exists():
        return path
    started = time.perf_counter()
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    pad = max(0, int(GIGABYTE / memories - source.stat().st_size / memories) // 2)
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.executescript(INIT_SQL)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    for name in SEED_INDEXES:
        conn.execute(f"DROP INDEX {name}")
    conn.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
    conn.execute("BEGIN")
    conn.execute("INSERT INTO memories SELECT id, content || ' ' || hex(randomblob(?)), type, importance, "
                 "access_count, last_accessed_at, health_score, related_to, superseded_by, created_at, "
                 "updated_at, expires_at, synced_at, sync_status FROM src.memories", (pad,))
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE src")
    conn.executescript(INIT_SQL)  # the seed's indexes, built once, and WAL mode back on
    conn.close()
    os.replace(tmp, path)
    print(f"  (generated {path.name}: {path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - started:.0f} s)")
    return path


def _backup(source: Path, memories: int, rows: list[Row]) -> None:
    from ora_desktop.core.backup import create_backup

    big = gigabyte_file(source, memories)
    cli = shutil.which("sqlite3")
    out = DATA / "scratch" / "backups"
    target = DATA / "scratch" / "cli-backup.site.db"
    config = Config(Path("bench.toml"), {"backup": {"dir": str(out)}}, True)

    def clear() -> None:
        shutil.rmtree(out, ignore_errors=True)
        target.unlink(missing_ok=True)
        os.sync()  # the previous run's writeback must not land in this run's time

    size = big.stat().st_size / 1e9
    variants = {"ours": lambda _: create_backup(big, config=config, rotate=False),
                "copy": lambda _: _copy_only(big, out)}
    if cli is not None:
        variants["raw"] = lambda _: subprocess.run([cli, str(big), f".backup '{target}'"], check=True)
        variants["raw_checked"] = lambda _: (
            subprocess.run([cli, str(big), f".backup '{target}'"], check=True),
            subprocess.run([cli, str(target), "PRAGMA integrity_check;"], check=True, capture_output=True))
    t = interleaved(clear, variants)
    clear()
    if cli is None:
        rows.append(Row(f"backup {size:.2f} GB (ours; sqlite3 CLI not installed)", t["ours"], None, "", "s"))
        return
    rows.append(Row(f"backup {size:.2f} GB: ours (copy+check+rename) vs .backup", t["ours"], t["raw"], "<= 1.2x",
                    "s"))
    rows.append(Row("  ours vs .backup + PRAGMA integrity_check", t["ours"], t["raw_checked"], "(like for like)",
                    "s"))
    rows.append(Row("  our copy step alone vs .backup", t["copy"], t["raw"], "(info)", "s"))


def _copy_only(big: Path, out: Path) -> None:
    from ora_desktop.core.backup import _copy_live

    out.mkdir(parents=True, exist_ok=True)
    _copy_live(big, out / "copy.site.db")


def _check(source: Path, rows: list[Row]) -> None:
    def raw(_=None) -> None:
        conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()

    t = interleaved(lambda: source, {"ours": lambda p: check.run(JobContext(p)), "raw": raw})
    rows.append(Row("check (integrity_check + lint) vs PRAGMA integrity_check", t["ours"], t["raw"], "(info)", "s"))


def run(memories: int) -> None:
    source = bench_file(memories)
    rows: list[Row] = []
    _decay(source, rows)
    _cleanup(source, rows)
    _check(source, rows)
    _backup(source, memories, rows)
    report(f"maintenance on {memories:,} memories", rows)
