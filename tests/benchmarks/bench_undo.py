"""Journalled writes and their undo against raw SQLite doing the same row changes, in one run.

What the journal costs: each user write also captures the previous values of the columns it
changes, fingerprints every touched row and inserts one journal row, in the same transaction;
an undo checks the fingerprints and writes the old values back.

* edit one memory's importance: ``edits.edit`` vs a raw ``UPDATE`` of the same row (with the
  sync rule's ``updated_at``/``sync_status``), and the undo of each (raw: the old values back).
* bulk edit of 10,000 memories: ``edits.bulk_edit`` vs one raw ``UPDATE … WHERE id IN json_each``;
  undo vs a raw ``executemany`` of the old values.
* delete 1,000 memories: ``edits.delete`` (rows to the trash, links kept whole) vs raw
  ``INSERT INTO side SELECT …``, the same scan for memories linking to them (``json_each`` over
  ``related_to``) and ``DELETE``; undo vs raw insert back + delete from the side table.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ora_desktop.core import open_store
from ora_desktop.core.operations import edits
from ora_desktop.core.operations.undo import undo

from .common import Row, bench_file, fresh_copy, p50, report

IDS = "(SELECT value FROM json_each(?))"


def pairs(do: Callable[[], object], back: Callable[[], object], repeat: int = 5) -> tuple[list[float], list[float]]:
    """Seconds of ``repeat`` (do, back) pairs after one warm-up pair."""
    do()
    back()
    forward, backward = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        do()
        forward.append(time.perf_counter() - started)
        started = time.perf_counter()
        back()
        backward.append(time.perf_counter() - started)
    return forward, backward


def raw_bulk(path: Path, ids: list[str]) -> tuple[Callable[[], None], Callable[[], None]]:
    conn = sqlite3.connect(path, isolation_level=None)
    saved: list[tuple] = []

    def do() -> None:
        conn.execute("BEGIN IMMEDIATE")
        saved[:] = conn.execute(f"SELECT importance, updated_at, sync_status, id FROM memories WHERE id IN {IDS}",
                                [json.dumps(ids)]).fetchall()
        conn.execute(f"UPDATE memories SET importance = 1, updated_at = datetime('now'), sync_status = CASE "
                     f"WHEN sync_status = 'local_only' THEN 'local_only' ELSE 'pending' END WHERE id IN {IDS}",
                     [json.dumps(ids)])
        conn.execute("COMMIT")

    def back() -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE memories SET importance = ?, updated_at = ?, sync_status = ? WHERE id = ?", saved)
        conn.execute("COMMIT")

    return do, back


def raw_delete(path: Path, ids: list[str]) -> tuple[Callable[[], None], Callable[[], None]]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS bench_side AS SELECT * FROM memories WHERE 0")

    def do() -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"INSERT INTO bench_side SELECT * FROM memories WHERE id IN {IDS}", [json.dumps(ids)])
        conn.execute("SELECT m.id, m.related_to, m.superseded_by FROM memories m WHERE m.id NOT IN "
                     f"{IDS} AND ((m.related_to IS NOT NULL AND m.related_to != '' AND EXISTS (SELECT 1 FROM "
                     "json_each(CASE WHEN json_valid(m.related_to) THEN m.related_to ELSE '[]' END) j "
                     f"WHERE j.value IN {IDS})) OR m.superseded_by IN {IDS})", [json.dumps(ids)] * 3).fetchall()
        conn.execute(f"DELETE FROM memories WHERE id IN {IDS}", [json.dumps(ids)])
        conn.execute("COMMIT")

    def back() -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO memories SELECT * FROM bench_side")
        conn.execute("DELETE FROM bench_side")
        conn.execute("COMMIT")

    return do, back


def run(memories: int) -> None:
    source = bench_file(memories)
    path = fresh_copy(source, "undo.site.db")
    raw_path = fresh_copy(source, "undo-raw.site.db")
    conn = sqlite3.connect(path)
    all_ids = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY id")]
    conn.close()
    rng = random.Random(7)
    one = rng.choice(all_ids)
    bulk = rng.sample(all_ids, min(10_000, len(all_ids)))
    doomed = rng.sample(all_ids, min(1_000, len(all_ids)))
    rows: list[Row] = []
    with open_store(path) as store:
        ours_edit = pairs(lambda: edits.edit(store, one, {"importance": 1}), lambda: undo(store))
        ours_bulk = pairs(lambda: edits.bulk_edit(store, bulk, {"importance": 1}), lambda: undo(store))
        ours_delete = pairs(lambda: edits.delete(store, doomed, "bench"), lambda: undo(store))
    raw_edit = pairs(*raw_bulk(raw_path, [one]))
    raw_bulk_times = pairs(*raw_bulk(raw_path, bulk))
    raw_delete_times = pairs(*raw_delete(raw_path, doomed))
    for label, ours, raw in (("edit 1 memory", ours_edit, raw_edit),
                             (f"bulk edit {len(bulk):,} memories", ours_bulk, raw_bulk_times),
                             (f"delete {len(doomed):,} memories", ours_delete, raw_delete_times)):
        rows.append(Row(f"{label}, journalled", p50(ours[0]), p50(raw[0])))
        rows.append(Row("  its undo", p50(ours[1]), p50(raw[1])))
    report(f"Journalled writes and undo ({memories:,} memories; p50 of 5)", rows)
