"""An import in short transactions beside the same import in one, and beside raw ``executemany``.

A JSONL source of up to 100,000 memories (every column) goes into a fresh copy of a seed file
holding 1,000 memories of its own:

* speed: ours in chunks (what ``import_memories`` does), ours in one transaction (``whole``: what
  an import did before the chunks, and what ``--create`` still does), and the raw floor (read the
  lines, ``json.loads`` each, one ``executemany`` in one transaction);
* the lock: the longest one of our chunks held the write lock, beside the one transaction's hold;
* an agent beside it: an impatient agent (busy timeout 1 s, never retries) writes throughout each
  of our two imports; its longest write (the wait for the lock included) and how often it was
  refused "database is locked".
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from ora_desktop import open_store
from ora_desktop.core import chunks
from ora_desktop.core.operations.importing import import_memories
from ora_desktop.core.schema import INIT_SQL, MEMORY_COLUMNS
from tests.integration import impatient_agent

from .common import DATA, Row, report

COLS = ", ".join(MEMORY_COLUMNS)
OWN = 1000


def write_source(path: Path, count: int) -> Path:
    """A JSONL source of ``count`` memories ``imp-<i>``, every column set."""
    stamp = "2026-01-02 03:04:05"
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            row = dict.fromkeys(MEMORY_COLUMNS)
            row.update(id=f"imp-{i}", content=f"imported memory {i}: the deploy of service {i % 97} needs the cache "
                       f"warmed first, see runbook section {i % 13}", type="fact", importance=1 + i % 10,
                       access_count=i % 5, health_score=1.0, created_at=stamp, updated_at=stamp,
                       sync_status="pending", related_to=json.dumps([f"imp-{i - 1}"]) if i else None)
            out.write(json.dumps(row) + "\n")
    return path


def seed_target(path: Path, ids: list[str] | None = None) -> Path:
    """A fresh WAL seed file at ``path`` holding memories ``ids`` (default: ``OWN`` of its own)."""
    remove(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(INIT_SQL)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executemany("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                     "VALUES (?, 'the agent wrote this', 'fact', 5, datetime('now'), datetime('now'))",
                     [(i,) for i in (ids if ids is not None else [f"own-{i}" for i in range(OWN)])])
    conn.close()
    return path


def remove(*paths: Path) -> None:
    """Delete these files and any ``-wal``/``-shm`` beside them."""
    for path in paths:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)


def _raw(source: Path, target: Path) -> int:
    conn = sqlite3.connect(target, isolation_level=None)
    insert = f"INSERT INTO memories ({COLS}) VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})"
    with source.open(encoding="utf-8") as stream:
        rows = [[data[c] for c in MEMORY_COLUMNS] for data in map(json.loads, stream)]
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(insert, rows)
    conn.execute("COMMIT")
    conn.close()
    return len(rows)


def _ours(source: Path, target: Path, whole: bool) -> tuple[float, float]:
    """(seconds, longest lock hold in seconds) of one import."""
    started = time.perf_counter()
    with open_store(target) as store:
        chunks.new_sizer()
        result = import_memories(store, source, whole=whole)
        held = chunks.last_sizer.longest
    elapsed = time.perf_counter() - started
    assert not result.skipped and result.added > 0
    return elapsed, held


def _beside_an_agent(source: Path, target: Path, whole: bool) -> dict:
    """The impatient agent's report while our import runs beside it."""
    report_path, stop = DATA / "scratch" / "agent.json", DATA / "scratch" / "agent.stop"
    for leftover in (report_path, Path(f"{report_path}.ready"), stop):
        leftover.unlink(missing_ok=True)
    process = impatient_agent.start(target, "agent", report_path, stop)
    try:
        impatient_agent.wait_ready(process, report_path)
        _ours(source, target, whole)
        return impatient_agent.finish(process, report_path, stop)
    finally:
        stop.touch()
        process.wait(timeout=60)


def run(memories: int) -> None:
    count = min(memories, 100_000)
    scratch = DATA / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    source = write_source(scratch / "chunkimport.jsonl", count)
    target = scratch / "chunkimport.site.db"
    load = os.getloadavg()[0]

    started = time.perf_counter()
    raw_count = _raw(source, seed_target(target))
    raw = raw_count / (time.perf_counter() - started)
    chunked, held = _ours(source, seed_target(target), whole=False)
    whole, whole_held = _ours(source, seed_target(target), whole=True)
    chunked_agent = _beside_an_agent(source, seed_target(target), whole=False)
    whole_agent = _beside_an_agent(source, seed_target(target), whole=True)

    rows = [
        Row(f"import {count:,}: ours in chunks", count / chunked, raw, "(info)", unit="mem/s"),
        Row(f"import {count:,}: ours in one transaction", count / whole, raw, "(as before)", unit="mem/s"),
        Row("longest lock hold: chunks vs one transaction", held, whole_held, "<= 0.25 s", "s"),
        Row("agent's longest write: beside chunks vs one", chunked_agent["longest_ms"] / 1000,
            whole_agent["longest_ms"] / 1000, "< 1 s", "s"),
        Row("agent refused 'locked': chunks vs one", chunked_agent["locked"], whole_agent["locked"], "0", "n"),
    ]
    remove(source, target)
    report(f"import in chunks, {count:,} memories into a file of {OWN:,} (load average {load:.1f} at the start; "
           "raw = json.loads + executemany, one transaction; the agent's rows: one transaction's)", rows,
           baseline="raw / one")
