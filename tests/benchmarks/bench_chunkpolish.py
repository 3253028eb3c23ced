"""An import that replaces rows, in chunks under one trash batch, beside the same work raw.

A JSONL source of up to 20,000 memories goes into a copy of a seed file holding every other one of
its ids (``--on-conflict replace``: half the rows replace a memory, which goes to the trash first):

* ours: ``import_memories`` (short transactions; the replaced rows of every chunk in one trash
  batch), its longest write-lock hold, and how many trash batches the trash then lists;
* raw: one transaction of plain SQL doing the same writes (each replaced row copied as JSON into a
  plain table, deleted, then every row inserted with ``executemany``);
* the restore of that one batch (``undo_import``: what the import wrote to the trash, the replaced
  rows back, both in short transactions), beside the raw copy back (``INSERT … SELECT
  json_extract``) and delete, and the longest lock hold of the restore.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from ora_desktop import open_store
from ora_desktop.core import chunks
from ora_desktop.core.operations.importing import import_memories, undo_import
from ora_desktop.core.schema import MEMORY_COLUMNS

from .bench_chunkimport import remove, seed_target, write_source
from .common import DATA, Row, report

COLS = ", ".join(MEMORY_COLUMNS)


def _raw(source: Path, target: Path) -> tuple[float, float]:
    """(seconds of the import, seconds of the restore) done in plain SQL, one transaction each."""
    started = time.perf_counter()
    conn = sqlite3.connect(target, isolation_level=None)
    with source.open(encoding="utf-8") as stream:
        rows = [[data[c] for c in MEMORY_COLUMNS] for data in map(json.loads, stream)]
    ids = json.dumps([r[0] for r in rows])
    pairs = ", ".join(f"'{c}', {c}" for c in MEMORY_COLUMNS)
    conn.execute("CREATE TABLE trash (memory_id TEXT, row_json TEXT)")
    conn.execute("BEGIN IMMEDIATE")
    wanted = "(SELECT value FROM json_each(?))"
    conn.execute(f"INSERT INTO trash SELECT id, json_object({pairs}) FROM memories WHERE id IN {wanted}", [ids])
    conn.execute(f"DELETE FROM memories WHERE id IN {wanted}", [ids])
    conn.executemany(f"INSERT INTO memories ({COLS}) VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})", rows)
    conn.execute("COMMIT")
    imported = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(f"DELETE FROM memories WHERE id IN {wanted}", [ids])
    extracts = ", ".join(f"json_extract(row_json, '$.{c}')" for c in MEMORY_COLUMNS)
    conn.execute(f"INSERT INTO memories ({COLS}) SELECT {extracts} FROM trash")
    conn.execute("DELETE FROM trash")
    conn.execute("COMMIT")
    conn.close()
    return imported, time.perf_counter() - started


def run(memories: int) -> None:
    count = min(memories, 20_000)
    scratch = DATA / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    source = write_source(scratch / "chunkpolish.jsonl", count)
    half = [f"imp-{i}" for i in range(0, count, 2)]
    target = scratch / "chunkpolish.site.db"
    load = os.getloadavg()[0]

    raw_import, raw_restore = _raw(source, seed_target(target, half))
    seed_target(target, half)
    started = time.perf_counter()
    with open_store(target) as store:
        chunks.new_sizer()
        result = import_memories(store, source, on_conflict="replace")
        imported = time.perf_counter() - started
        held, parts = chunks.last_sizer.longest, chunks.last_sizer.chunks
        batches = len({d.batch for d in store.trash(limit=None)})
        started = time.perf_counter()
        undo_import(store, result)
        restored = time.perf_counter() - started
        restore_held = chunks.last_sizer.longest  # (the restore of the batch, the last of its writes in chunks)
    assert result.replaced == (count + 1) // 2 and batches == 1

    rows = [
        Row(f"import {count:,}, half replacing: in {parts} chunks", count / imported, count / raw_import, "(info)",
            unit="mem/s"),
        Row("longest lock hold of a chunk", held, None, "<= 0.25 s", "s"),
        Row("trash batches listed for the import", batches, None, "1", "n"),
        Row("take the import back (undo_import, 1 batch)", restored, raw_restore, "(info)", "s"),
        Row("longest lock hold restoring the batch", restore_held, None, "<= 0.25 s", "s"),
    ]
    remove(source, target)
    report(f"import replacing rows, one trash batch, {count:,} memories (load average {load:.1f} at the start; "
           "raw = plain SQL in one transaction)", rows, baseline="raw")
