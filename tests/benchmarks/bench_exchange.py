"""Export and import of a whole memory file as JSONL, beside raw ``sqlite3`` doing the same work.

Export: ours = ``store.export(path)`` (every column, site and agent, the header line); raw = one
``SELECT`` of the same columns written as JSON lines with the same encoder. Import: ours =
``store.import_from(jsonl, whole=True)`` into a new seed-schema file (every row validated,
conflicts looked up, one transaction, as ``--create`` imports into a new file); raw = read the
lines, ``json.loads`` each and ``executemany`` one INSERT in one transaction. Targets: export at
least 50,000 memories/s, import at least 20,000/s.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from ora_desktop import open_store
from ora_desktop.core.connection import make_database
from ora_desktop.core.schema import INIT_SQL, MEMORY_COLUMNS

from .common import DATA, Row, bench_file, report

COLS = ", ".join(MEMORY_COLUMNS)


def _new_file(path: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    conn.close()
    return path


def _raw_export(source: Path, out: Path) -> int:
    db, _ = make_database(source, readonly=True)
    conn = sqlite3.connect(db.database, uri=True)
    encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
    columns = ("site", "agent", *MEMORY_COLUMNS)
    count = 0
    with open(out, "w", encoding="utf-8", newline="") as stream:
        cursor = conn.execute(f"SELECT 'bench', 'agent', {COLS} FROM memories")
        while batch := cursor.fetchmany(5000):
            for row in batch:
                stream.write(encode(dict(zip(columns, row, strict=True))))
                stream.write("\n")
            count += len(batch)
    conn.close()
    return count


def _raw_import(source: Path, target: Path) -> int:
    conn = sqlite3.connect(target, isolation_level=None)
    insert = f"INSERT INTO memories ({COLS}) VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})"
    conn.execute("BEGIN IMMEDIATE")
    count = 0
    with open(source, encoding="utf-8") as stream:
        next(stream)  # the header line
        batch = []
        for line in stream:
            data = json.loads(line)
            batch.append([data[c] for c in MEMORY_COLUMNS])
            if len(batch) == 5000:
                conn.executemany(insert, batch)
                count += len(batch)
                batch = []
        conn.executemany(insert, batch)
        count += len(batch)
    conn.execute("COMMIT")
    conn.close()
    return count


def run(memories: int) -> None:
    path = bench_file(memories)
    scratch = DATA / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    ours_out, raw_out = scratch / "export-ours.jsonl", scratch / "export-raw.jsonl"
    rows: list[Row] = []

    # Export: ours and raw alternately, twice each (the best of each), so a busy machine weighs on both.
    ours_best = raw_best = 0.0
    for _ in range(2):
        started = time.perf_counter()
        with open_store(path, readonly=True) as store:
            count = store.export(ours_out).count
        ours_best = max(ours_best, count / (time.perf_counter() - started))
        started = time.perf_counter()
        raw_count = _raw_export(path, raw_out)
        raw_best = max(raw_best, raw_count / (time.perf_counter() - started))
    assert raw_count == count == memories
    rows.append(Row(f"export JSONL: {count:,} memories", ours_best, raw_best, ">= 50,000/s", unit="mem/s"))

    target = _new_file(scratch / "import-ours.site.db")
    started = time.perf_counter()
    with open_store(target) as store:
        result = store.import_from(ours_out, whole=True)  # (a new file: one transaction, as --create)
    ours = result.added / (time.perf_counter() - started)
    raw_target = _new_file(scratch / "import-raw.site.db")
    started = time.perf_counter()
    raw_count = _raw_import(ours_out, raw_target)
    raw = raw_count / (time.perf_counter() - started)
    assert result.added == raw_count == memories and not result.skipped
    rows.append(Row(f"import JSONL: {result.added:,} memories (new file)", ours, raw, ">= 20,000/s", unit="mem/s"))
    for leftover in (ours_out, raw_out, target, raw_target):
        for suffix in ("", "-wal", "-shm"):
            Path(str(leftover) + suffix).unlink(missing_ok=True)
    report(f"export/import on {memories:,} memories (ours = ora_desktop.core.operations, raw = sqlite3 + json)",
           rows)
