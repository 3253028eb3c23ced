"""The core engine against raw ``sqlite3`` doing the same work on the same file, in one run.

Reads run on a read-only store and a raw read-only connection opened the same way; the raw
SQL has the engine's semantics (superseded memories hidden, time columns ordered through
``julianday``, keyset paging on (sort value, rowid)). Writes run on a scratch copy.
Targets: every read within 1.5x of raw SQL; batch add at least 20,000 memories/s.
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ora_desktop import open_store
from ora_desktop.core.connection import make_database
from ora_desktop.core.schema import MEMORY_COLUMNS
from ora_desktop.core.writes import new_id

from .common import Row, bench_file, fresh_copy, p50, report, timed

COLS = ", ".join(MEMORY_COLUMNS)
VISIBLE = "(superseded_by IS NULL OR superseded_by = '')"
ORDER = "julianday(created_at) DESC, rowid DESC"
BUCKET = "CASE WHEN health_score IS NULL THEN -1 ELSE min(9, max(0, CAST(health_score * 10 AS INTEGER))) END"
READ_TARGET = "<= 1.5x"


def paired(ours: Callable[[], object], raw: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median seconds of ours and of raw, run alternately (after one warm-up each) so that a
    machine busy with other work weighs on both alike."""
    ours_times: list[float] = []
    raw_times: list[float] = []
    for fn in (ours, raw):
        fn()
    for _ in range(repeat):
        for fn, times in ((ours, ours_times), (raw, raw_times)):
            gc.collect()
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
    return p50(ours_times), p50(raw_times)


def _raw_reader(path: Path) -> sqlite3.Connection:
    """A raw connection opened exactly as the engine opens this file read-only."""
    db, _ = make_database(path, readonly=True)
    return sqlite3.connect(db.database, uri=True, isolation_level=None)


def _reads(path: Path, rows: list[Row]) -> None:
    raw = _raw_reader(path)
    with open_store(path, readonly=True) as store:
        visible = store.count()

        def sql(text: str, params: tuple = ()) -> Callable[[], list]:
            return lambda: raw.execute(text, params).fetchall()

        def raw_page(after: tuple | None = None, key: str = "julianday(created_at)") -> list:
            """One page newest first; after a cursor, the non-NULL keys then the NULLs (as ours)."""
            order = f"ORDER BY {key} DESC, rowid DESC"
            if after is None:
                return raw.execute(f"SELECT rowid, {COLS} FROM memories WHERE {VISIBLE} {order} LIMIT 100").fetchall()
            page = raw.execute(f"SELECT rowid, {COLS} FROM memories WHERE {VISIBLE} AND ({key}, rowid) < (?, ?) "
                               f"{order} LIMIT 100", after).fetchall()
            if len(page) < 100:
                page += raw.execute(f"SELECT rowid, {COLS} FROM memories WHERE {VISIBLE} AND {key} IS NULL "
                                    f"{order} LIMIT ?", (100 - len(page),)).fetchall()
            return page

        offset = min(900_000, max(0, visible - 101))
        ours, base = paired(lambda: store.list(limit=100), raw_page, repeat=5)
        assert [m.id for m in store.list(limit=100)] == [r[1] for r in raw_page()]
        rows.append(Row("list: first page (100, newest first)", ours, base, READ_TARGET))

        cursor = store.cursor_at(offset)
        raw_at = f"SELECT julianday(created_at), rowid FROM memories WHERE {VISIBLE} ORDER BY {ORDER} LIMIT 1 OFFSET ?"
        ours, base = paired(lambda: store.cursor_at(offset), sql(raw_at, (offset,)), repeat=3)
        rows.append(Row(f"cursor_at({offset:,}) (one-off jump)", ours, base, READ_TARGET))

        after = (cursor.value, cursor.rowid)
        ours, base = paired(lambda: store.list(limit=100, after=cursor), lambda: raw_page(after), repeat=5)
        assert [m.id for m in store.list(limit=100, after=cursor)] == [r[1] for r in raw_page(after)]
        rows.append(Row(f"list: page at offset {offset:,} (keyset)", ours, base, READ_TARGET))
        deep = store.cursor_at(offset, order_by="importance")
        deep_after = (deep.value, deep.rowid)
        ours, base = paired(lambda: store.list(limit=100, after=deep, order_by="importance"),
                            lambda: raw_page(deep_after, "importance"), repeat=31)  # ~1 ms: many samples
        assert [m.id for m in store.list(limit=100, after=deep, order_by="importance")] == \
            [r[1] for r in raw_page(deep_after, "importance")]
        rows.append(Row(f"list by importance: page at {offset:,} (keyset)", ours, base, READ_TARGET))
        first = p50(timed(lambda: store.list(limit=100, order_by="importance"), repeat=31))
        rows.append(Row("  (ours, first page by importance, for contrast)", first, None, "-"))
        offset_sql = f"SELECT rowid, {COLS} FROM memories WHERE {VISIBLE} ORDER BY {ORDER} LIMIT 100 OFFSET ?"
        context = p50(timed(lambda: raw.execute(offset_sql, (offset + 1,)).fetchall(), repeat=3))
        rows.append(Row("  (raw LIMIT/OFFSET page there, for contrast)", context, None, "-"))

        ours, base = paired(store.count, sql(f"SELECT count(*) FROM memories WHERE {VISIBLE}"), repeat=5)
        rows.append(Row("count (superseded hidden)", ours, base, READ_TARGET))
        ours, base = paired(lambda: store.count(superseded="show"), sql("SELECT count(*) FROM memories"), repeat=31)
        rows.append(Row("count (everything)", ours, base, READ_TARGET))

        facet_sql = (f"SELECT type, sync_status, importance, {BUCKET}, count(*) FROM memories WHERE {VISIBLE} "
                     "GROUP BY +type, +sync_status, +importance, 4")
        ours, base = paired(store.facets, sql(facet_sql), repeat=5)
        rows.append(Row("facets (raw: one grouped scan, same result)", ours, base, READ_TARGET))
        four = [f"SELECT {e}, count(*) FROM memories WHERE {VISIBLE} GROUP BY 1"
                for e in ("type", "sync_status", "importance", BUCKET)]
        context = p50(timed(lambda: [raw.execute(sql).fetchall() for sql in four], repeat=3))
        rows.append(Row("  (raw as four GROUP BY queries, for contrast)", context, None, "-"))

        recall_sql = (f"SELECT rowid, {COLS} FROM memories WHERE type = ? AND health_score > 0.3 "
                      "ORDER BY importance DESC, julianday(created_at) DESC, rowid DESC LIMIT 20")
        ours, base = paired(lambda: store.recall("fact"), sql(recall_sql, ("fact",)), repeat=7)
        assert [m.id for m in store.recall("fact")] == [r[1] for r in raw.execute(recall_sql, ("fact",))]
        rows.append(Row("recall('fact') (seed query, by time)", ours, base, READ_TARGET))

    raw.close()


def _writes(path: Path, rows: list[Row]) -> None:
    scratch = fresh_copy(path, "core-writes.site.db")
    raw = sqlite3.connect(scratch, isolation_level=None, timeout=5)
    raw.execute("PRAGMA busy_timeout = 5000")
    insert = ("INSERT INTO memories (id, content, type, importance, access_count, health_score, created_at, "
              "updated_at, sync_status) VALUES (?, ?, ?, ?, 0, 1.0, datetime('now'), datetime('now'), 'pending')")
    with open_store(scratch) as store:
        def ours_add(i: int) -> None:
            store.add(f"single add {i}: the deploy key rotates monthly", type="fact", importance=6)

        def raw_add(i: int) -> None:
            raw.execute("BEGIN IMMEDIATE")
            raw.execute(insert, (new_id(), f"single add {i}: the deploy key rotates monthly", "fact", 6))
            raw.execute("COMMIT")

        ours_times: list[float] = []
        raw_times: list[float] = []
        for i in range(420):  # interleaved, the first 20 of each as warm-up
            for fn, times in ((ours_add, ours_times), (raw_add, raw_times)):
                started = time.perf_counter()
                fn(i)
                times.append(time.perf_counter() - started)
        ours, base = p50(ours_times[20:]), p50(raw_times[20:])
        rows.append(Row("add: one memory (own transaction; ours re-reads it)", ours, base, "-"))

        batch = 100_000
        items = [{"content": f"batch memory {i} about release {i % 97}", "type": "task", "importance": 1 + i % 10}
                 for i in range(batch)]
        started = time.perf_counter()
        store.add_many(items)
        ours_rate = batch / (time.perf_counter() - started)
        # The same ids as ours (time-ordered): where new keys land in the id index dominates the cost.
        tuples = [(new_id(), f"batch memory {i} about release {i % 97}", "task", 1 + i % 10) for i in range(batch)]
        started = time.perf_counter()
        raw.execute("BEGIN IMMEDIATE")
        raw.executemany(insert, tuples)
        raw.execute("COMMIT")
        raw_rate = batch / (time.perf_counter() - started)
        rows.append(Row(f"add_many: {batch:,} memories (one transaction)", ours_rate, raw_rate, ">= 20,000/s",
                        unit="mem/s"))
    raw.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(scratch) + suffix).unlink(missing_ok=True)


def run(memories: int) -> None:
    path = bench_file(memories)
    rows: list[Row] = []
    _reads(path, rows)
    _writes(path, rows)
    report(f"core engine on {memories:,} memories (ours = ora_desktop.core, raw = sqlite3, same SQL semantics)",
           rows)
