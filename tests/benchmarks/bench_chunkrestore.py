"""Restoring many memories from the trash, and undoing a large delete or bulk edit, in chunks.

``python -m tests.benchmarks chunkrestore --memories 120000`` (100,000 memories touched, or five
in six of a smaller file). For each of: restoring them from the trash, undoing their delete,
undoing a bulk edit of them, it prints the time and the longest write-lock hold of

* ours in chunks (what every face does now),
* ours in one transaction (what it did before: the same operation inside the caller's write),
* the raw SQL floor in one transaction (``INSERT … SELECT json_extract`` from the trash and a
  ``DELETE``; an ``executemany`` of the previous values),

and the longest an agent with a 1 s busy timeout, writing meanwhile, waited for one write (with
how many it lost to "database is locked"). Each scenario starts from a fresh copy of one file.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ora_desktop.core import chunks, open_store
from ora_desktop.core.operations import edits
from ora_desktop.core.operations.undo import undo
from ora_desktop.core.schema import MEMORY_COLUMNS
from tests.integration import impatient_agent
from tests.integration.test_lock_budget import big_file

from .common import DATA, Row, report


def _copy(source: Path, name: str) -> Path:
    target = DATA / "scratch" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target


def _with_agent(db: Path, work: Callable[[], object]) -> tuple[float, dict]:
    """Seconds ``work()`` took while an impatient agent wrote to ``db``, and the agent's report."""
    scratch = db.parent / f"agent-{os.getpid()}"
    scratch.mkdir(exist_ok=True)
    report_path, stop = scratch / "report.json", scratch / "stop"
    for path in (report_path, stop, Path(f"{report_path}.ready")):
        path.unlink(missing_ok=True)
    process = impatient_agent.start(db, "agent", report_path, stop)
    impatient_agent.wait_ready(process, report_path)
    started = time.perf_counter()
    try:
        work()
    finally:
        took = time.perf_counter() - started
        seen = impatient_agent.finish(process, report_path, stop)
    return took, seen


def _raw_restore(db: Path) -> float:
    """The floor: every trash row back in one transaction (insert from its JSON, delete it)."""
    conn = sqlite3.connect(db, isolation_level=None)
    cols = ", ".join(MEMORY_COLUMNS)
    extracts = ", ".join(f"json_extract(row_json, '$.{c}')" for c in MEMORY_COLUMNS)
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(f"INSERT INTO memories ({cols}) SELECT {extracts} FROM ora_desktop_trash")
    conn.execute("DELETE FROM ora_desktop_trash")
    conn.execute("COMMIT")
    took = time.perf_counter() - started
    conn.close()
    return took


def _raw_write_back(db: Path, saved: list[tuple]) -> float:
    conn = sqlite3.connect(db, isolation_level=None)
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("UPDATE memories SET importance = ?, content = ?, updated_at = ?, sync_status = ? WHERE id = ?",
                     saved)
    conn.execute("COMMIT")
    took = time.perf_counter() - started
    conn.close()
    return took


def _scenario(source: Path, name: str, ids: list[str], prepare: Callable[[object], object],
              act: Callable[[object, object], object], floor: Callable[[Path, object], float],
              rows: list[Row]) -> None:
    figures = {}
    for how in ("chunks", "one"):
        db = _copy(source, f"chunkrestore-{how}.site.db")
        with open_store(db) as store:
            prepared = prepare(store)
            chunks.new_sizer()

            def work(store=store, prepared=prepared, how=how) -> None:
                if how == "one":
                    with store.write():  # inside the caller's transaction: one, as before
                        act(store, prepared)
                else:
                    act(store, prepared)

            took, seen = _with_agent(db, work)
            figures[how] = (took, chunks.last_sizer.longest if how == "chunks" else took, seen)
    db = _copy(source, "chunkrestore-raw.site.db")
    with open_store(db) as store:
        prepared = prepare(store)
    raw = floor(db, prepared)
    (t_chunks, held, seen), (t_one, _held_one, seen_one) = figures["chunks"], figures["one"]
    rows.append(Row(f"{name}: ours in chunks vs raw SQL (time)", t_chunks, raw, "(info)", "s"))
    rows.append(Row("  ours in one transaction vs raw SQL (time = hold)", t_one, raw, "(before)", "s"))
    rows.append(Row("  longest lock hold: in chunks vs raw SQL", held, raw, "<= 0.25 s", "s"))
    rows.append(Row(f"  agent's longest write: chunks ({seen['locked']} locked) vs one "
                    f"({seen_one['locked']} locked)", seen["longest_ms"] / 1000, seen_one["longest_ms"] / 1000,
                    "< 1 s, 0 locked", "s"))


def run(memories: int) -> None:
    count = min(100_000, memories * 5 // 6)
    source = DATA / f"chunkrestore-{memories}.site.db"
    if not source.exists():
        big_file(source, rows=memories)
    ids = [f"m-{i}" for i in range(count)]
    load = os.getloadavg()[0]
    rows: list[Row] = []

    def deleted(store) -> tuple[int, ...]:
        return edits.delete(store, ids).trash_ids

    _scenario(source, f"restore {count:,} from the trash", ids, deleted,
              lambda store, trash_ids: edits.restore(store, trash_ids), lambda db, _p: _raw_restore(db), rows)
    _scenario(source, f"undo a delete of {count:,}", ids, deleted, lambda store, _p: undo(store),
              lambda db, _p: _raw_restore(db), rows)

    def bulk(store) -> list[tuple]:
        saved = [(m.importance, m.content, m.updated_at_text, m.sync_status, m.id)
                 for m in store.get_many(ids).values()]
        edits.bulk_edit(store, ids, {"importance": 9, "content": "edited in bulk"})
        return saved

    _scenario(source, f"undo a bulk edit of {count:,}", ids, bulk, lambda store, _p: undo(store),
              lambda db, saved: _raw_write_back(db, saved), rows)
    report(f"Restore and undo of {count:,} memories in chunks ({memories:,} in the file; load average "
           f"{load:.1f} at the start)", rows)
