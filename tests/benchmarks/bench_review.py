"""The review desk and the graph neighbourhood against raw SQLite doing the same work, in one run.

* review, never reviewed (everything is new) and after a mark-all (only what changed since):
  ours (``core.operations.review.review``: every attention rule, counts, records) vs the same
  SQL statements through plain ``sqlite3`` (ids, counts, the cycle scan, the rows by id).
* mark 100 memories reviewed: ours (one BEGIN IMMEDIATE, existence check, version read) vs raw
  ``INSERT OR REPLACE`` of the same 100 rows.
* neighbourhood, 2 hops, of the most linked memory: ours vs a raw walk (the supersession scan
  plus ``json_each`` of each frontier's related_to, one query per hop).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ora_desktop.core import open_store
from ora_desktop.core.operations import neighbourhood as nb
from ora_desktop.core.operations import review as rv
from ora_desktop.core.rawsql import all_rows, run_sql

from .common import Row, bench_file, fresh_copy, p50, report, timed


def raw_review(path: Path, since: str | None, limit: int = rv.DEFAULT_LIMIT) -> int:
    """The review's statements, raw: ids per rule (with counts past the limit), cycles, then rows."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    columns = tuple(r[1] for r in conn.execute("PRAGMA table_info(memories)"))
    has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (rv.TABLE,)).fetchone() is not None
    params = {"now": "2026-03-10 12:00:00", "who": "bench", "since": since}
    not_reviewed = (f"NOT EXISTS (SELECT 1 FROM {rv.TABLE} r WHERE r.reviewer = :who AND r.memory_id = memories.id "
                    "AND r.version IS memories.updated_at)") if has_table else "1"
    rules = [("1", "rowid DESC")] if since is None else [
        ("julianday(created_at) >= julianday(:since)", "julianday(coalesce(updated_at, created_at)) DESC, rowid DESC"),
        ("julianday(updated_at) >= julianday(:since) AND NOT (julianday(created_at) >= julianday(:since))",
         "julianday(coalesce(updated_at, created_at)) DESC, rowid DESC")]
    rules += [(rule.where, "rowid DESC") for rule in rv._rules(columns) if rule.where]  # noqa: SLF001
    ids: set[str] = set()
    for where, order in rules:
        found = conn.execute(f"SELECT id FROM memories WHERE ({where}) AND {not_reviewed} ORDER BY {order} "
                             f"LIMIT {limit}", params).fetchall()
        if len(found) == limit:
            conn.execute(f"SELECT count(*) FROM memories WHERE ({where}) AND {not_reviewed}", params).fetchone()
        ids.update(r[0] for r in found)
    conn.execute("SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL "
                 "AND superseded_by != ''").fetchall()
    rows = conn.execute("SELECT rowid, * FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps(sorted(ids)),)).fetchall()
    conn.close()
    return len(rows)


def raw_walk(path: Path, origin: str, hops: int = 2) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    older: dict[str, list[str]] = {}
    for old, new in conn.execute("SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL "
                                 "AND superseded_by != ''"):
        older.setdefault(new, []).append(old)
    seen, frontier = {origin}, [origin]
    for _ in range(hops):
        rows = conn.execute("SELECT m.id, m.superseded_by, j.value FROM memories m LEFT JOIN json_each("
                            "CASE WHEN json_valid(m.related_to) THEN m.related_to ELSE '[]' END) j "
                            "WHERE m.id IN (SELECT value FROM json_each(?))", (json.dumps(frontier),)).fetchall()
        nxt = set()
        for memory_id, superseded_by, related in rows:
            nxt.update(x for x in (superseded_by, related, *older.get(memory_id, ())) if x)
        frontier = [i for i in nxt if i not in seen]
        seen.update(frontier)
    conn.close()
    return len(seen)


def run(memories: int) -> None:
    source = bench_file(memories)
    path = fresh_copy(source, "review.site.db")
    rows: list[Row] = []
    with open_store(path) as store:
        first = timed(lambda: rv.review(store, "bench"), repeat=3)
        raw_first = timed(lambda: raw_review(path, None), repeat=3)
        rows.append(Row("review, never reviewed (all new)", p50(first), p50(raw_first)))
        rv.mark_all_reviewed(store, "bench")
        run_sql(store, "SELECT 1")
        since = all_rows(store, f"SELECT reviewed_at FROM {rv.TABLE} WHERE memory_id = ''")[0][0]
        with store.write():  # an agent changed 100 memories since
            run_sql(store, "UPDATE memories SET content = content || ' (edited)', updated_at = datetime('now', "
                          "'+1 minute') WHERE rowid IN (SELECT rowid FROM memories ORDER BY rowid LIMIT 100)")
        later = timed(lambda: rv.review(store, "bench"), repeat=3)
        raw_later = timed(lambda: raw_review(path, since), repeat=3)
        rows.append(Row("review after mark-all (100 changed)", p50(later), p50(raw_later)))
        ids = [r[0] for r in all_rows(store, "SELECT id FROM memories ORDER BY rowid DESC LIMIT 100")]
        mark = timed(lambda: rv.mark_reviewed(store, ids, "bench"), repeat=5)

        def raw_mark() -> None:
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(f"INSERT OR REPLACE INTO {rv.TABLE} (reviewer, memory_id, version, reviewed_at) "
                             "VALUES ('raw', ?, '2026-01-01 00:00:00', '2026-01-01 00:00:00')", [(i,) for i in ids])
            conn.execute("COMMIT")
            conn.close()
        rows.append(Row("mark 100 reviewed", p50(mark), p50(timed(raw_mark, repeat=5))))
        origin = all_rows(store, "SELECT id FROM memories WHERE related_to LIKE '[\"%' "
                                 "ORDER BY length(related_to) DESC LIMIT 1")[0][0]
        walk = timed(lambda: nb.neighbourhood(store, origin, 2), repeat=5)
        rows.append(Row("neighbourhood, 2 hops (graph view)", p50(walk), p50(timed(lambda: raw_walk(path, origin),
                                                                                   repeat=5))))
    report(f"Review desk and graph ({memories:,} memories)", rows)
