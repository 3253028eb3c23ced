"""Facet counts over every memory a worded query matches (not only the best few listed).

One grouped SQL statement in the sidecar connection: the FTS5 match (or the CJK substring
candidates, or the exclusions), joined to the memories, filtered by the query's field filters,
grouped by type, sync status, importance, health bucket and created age. The health bucket is
:func:`ora_desktop.core.health_buckets.bucket_sql`, the same rule the query language's
``health:`` bucket filters use, so a count equals what ticking that value lists.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import timestamps
from ..connection import CANCEL_CHECK_STEPS, translate
from ..health_buckets import HEALTH_BUCKETS, UNKNOWN, bucket_sql
from ..timefilter import AGE_BUCKETS
from .build import finish_tags
from .cjk import candidates_sql
from .engine import path_of
from .filters import filter_sql, pins_on
from .index import get_index
from .query import ParsedQuery
from .sidecar import fts5_available

if TYPE_CHECKING:
    from ..store import Store

Counts = tuple[dict, dict, dict, dict, dict]


class Interrupted(Exception):
    """The caller's ``stop()`` said the count is no longer wanted; SQLite stopped it mid-way."""


def match_facets(target: Store, parsed: ParsedQuery, stop: Callable[[], bool] | None = None) -> Counts | None:
    """(types, sync statuses, importance, health buckets, created ages) of every memory that
    matches ``parsed``; None when there is no usable index to count with (the caller then
    counts what it lists).

    ``stop`` is polled while SQLite counts: when it returns True the statement is interrupted
    (:class:`Interrupted`), so an obsolete count neither holds the index lock the next search
    needs nor keeps a core busy.
    """
    path = path_of(target)
    if not fts5_available():
        return None
    index = get_index(path)
    if not index.usable()[0]:
        return None
    try:
        with index.lock:
            if (parsed.tags or parsed.not_tags) and not index.meta().get("tags_done", True):
                finish_tags(index)
            conn = index.connection()
            if stop is not None:
                conn.set_progress_handler(lambda: 1 if stop() else 0, CANCEL_CHECK_STEPS)
            try:
                return _count(conn, parsed, index.columns)
            finally:
                if stop is not None:
                    conn.set_progress_handler(None, 0)
    except sqlite3.OperationalError as exc:
        if stop is not None and "interrupt" in str(exc).lower() and stop():
            raise Interrupted(str(path)) from exc
        raise translate(path, exc) from exc
    except sqlite3.Error as exc:
        raise translate(path, exc) from exc


def _count(conn: sqlite3.Connection, parsed: ParsedQuery, columns: tuple[str, ...]) -> Counts:
    where, params = filter_sql(parsed, columns, pins=pins_on(conn, parsed))
    col = {name: (f"m.{name}" if name in columns else "NULL") for name in
           ("type", "sync_status", "importance", "health_score", "created_at")}
    # The matches first (MATERIALIZED, CROSS JOIN): else SQLite may walk a filter's index on
    # memories and probe the match once per row, which takes minutes on a large file.
    head, args = "", []
    source = "docs d CROSS JOIN src.memories m ON m.id = d.mid"
    substrings = candidates_sql(parsed)
    expr = parsed.fts_expression()
    if substrings is not None:
        head, args = f"WITH h AS MATERIALIZED ({substrings[0]}) ", list(substrings[1])
        source = "h CROSS JOIN docs d ON d.fid = h.rowid CROSS JOIN src.memories m ON m.id = d.mid"
    elif expr is not None:
        head, args = "WITH h AS MATERIALIZED (SELECT rowid FROM fts WHERE fts MATCH ?) ", [expr]
        source = "h CROSS JOIN docs d ON d.fid = h.rowid CROSS JOIN src.memories m ON m.id = d.mid"
    elif parsed.excluded:
        where += " AND d.fid NOT IN (SELECT rowid FROM fts WHERE fts MATCH ?)"
        params = [*params, " OR ".join(t.fts() for t in parsed.excluded)]
    cases = " ".join(f"WHEN age < {high} THEN {i}" for i, (_, _, high) in enumerate(AGE_BUCKETS) if high)
    age = f"julianday(?) - julianday({col['created_at']})"
    sql = (f"{head}SELECT {col['type']}, {col['sync_status']}, {col['importance']}, "
           f"{bucket_sql(col['health_score'])}, "
           f"CASE WHEN {age} IS NULL THEN -1 {cases.replace('age', f'({age})')} ELSE {len(AGE_BUCKETS) - 1} END, "
           f"count(*) FROM {source} WHERE {where} GROUP BY 1, 2, 3, 4, 5")
    now = timestamps.to_sql(timestamps.now())
    n_age = 1 + cases.count("WHEN")
    rows = conn.execute(sql, [*args, *[now] * n_age, *params]).fetchall()
    counters: tuple[Counter, ...] = (Counter(), Counter(), Counter(), Counter(), Counter())
    for *keys, n in rows:
        for counter, key in zip(counters, keys, strict=True):
            counter[key] += n
    types, syncs, importance, raw_buckets, raw_ages = counters
    buckets = {label: raw_buckets.get(i, 0) for i, label in enumerate(HEALTH_BUCKETS)}
    if raw_buckets.get(-1):
        buckets[UNKNOWN] = raw_buckets[-1]
    ages = {label: raw_ages.get(i, 0) for i, (label, _, _) in enumerate(AGE_BUCKETS)}
    return dict(types), dict(syncs), dict(importance), buckets, ages
