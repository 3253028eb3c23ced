"""Facet counts (type, sync status, importance, health bucket) for the rows a filter matches.

The common case, every memory with superseded ones hidden (or shown), is answered from the
seed's indexes: one covering-index ``GROUP BY`` per facet over all rows, minus the few
superseded rows grouped in one scan. Any other filter runs one scan grouped on all four facets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from . import timestamps
from .health_buckets import HEALTH_BUCKETS, UNKNOWN, bucket_sql
from .listing import ListQuery, where_clause
from .rawsql import all_rows
from .records import Facets
from .timefilter import AGE_BUCKETS, TIME_FIELDS

if TYPE_CHECKING:
    from .store import Store

_PLAIN = ListQuery(limit=None)


def count_facets(store: Store, query: ListQuery) -> Facets:
    """Facets of the memories ``query`` matches (its order, limit and cursor are ignored)."""
    query = query.with_(limit=None, after=None, order_by="created_at", descending=True)
    columns = store.columns
    col = {name: (name if name in columns else "NULL") for name in ("type", "sync_status", "importance",
                                                                      "health_score")}
    bucket = bucket_sql(col["health_score"])
    counters: tuple[Counter, Counter, Counter, Counter] = (Counter(), Counter(), Counter(), Counter())

    def grouped(where: str, params: list, sign: int = 1) -> None:
        # The unary + keeps SQLite from walking an index for the grouping, which would look up
        # every row to test the filter; one scan and ~1,650 groups is far cheaper.
        sql = (f"SELECT {col['type']}, {col['sync_status']}, {col['importance']}, {bucket}, count(*) "
               f"FROM memories WHERE {where} GROUP BY +{col['type']}, +{col['sync_status']}, "
               f"+{col['importance']}, 4")
        for *keys, n in all_rows(store, sql, params):
            for counter, key in zip(counters, keys, strict=True):
                counter[key] += sign * n

    if query.with_(superseded="hide") == _PLAIN and query.superseded in ("hide", "show"):
        for counter, expr in zip(counters, (col["type"], col["sync_status"], col["importance"], bucket),
                                 strict=True):
            for key, n in all_rows(store, f"SELECT {expr}, count(*) FROM memories GROUP BY 1"):
                counter[key] += n
        if query.superseded == "hide":
            where, params = where_clause(_PLAIN.with_(superseded="only"), columns)
            grouped(where, params, sign=-1)
    else:
        grouped(*where_clause(query, columns))
    types, syncs, importance, raw_buckets = ({k: n for k, n in c.items() if n} for c in counters)
    buckets = {label: raw_buckets.get(i, 0) for i, label in enumerate(HEALTH_BUCKETS)}
    if raw_buckets.get(-1):
        buckets[UNKNOWN] = raw_buckets[-1]
    return Facets(
        total=sum(types.values()),
        types={str(k): v for k, v in types.items()},
        sync_statuses={str(k): v for k, v in syncs.items()},
        importance=importance,
        health_buckets=buckets,
    )


def age_facet(store: Store, query: ListQuery, field: str = "created", now: datetime | None = None) -> dict[str, int]:
    """How many of the memories ``query`` matches fall in each of the time facet's age buckets
    (:data:`~ora_desktop.core.timefilter.AGE_BUCKETS`) by ``field`` (``created``, ``updated``,
    ``accessed``, ``expires``); rows without that time are not counted. One scan of the rows."""
    column = TIME_FIELDS[field]
    if column not in store.columns:
        return {}
    where, params = where_clause(query.with_(limit=None, after=None), store.columns)
    cases = " ".join(f"WHEN age < {high} THEN {i}" for i, (_, _, high) in enumerate(AGE_BUCKETS) if high)
    rows = all_rows(store,
        f"SELECT CASE {cases} ELSE {len(AGE_BUCKETS) - 1} END, count(*) FROM (SELECT julianday(?) - "
        f"julianday({column}) AS age FROM memories WHERE {where}) WHERE age IS NOT NULL GROUP BY 1",
        [timestamps.to_sql(now or timestamps.now()), *params])
    found = dict(rows)
    return {label: found.get(i, 0) for i, (label, _, _) in enumerate(AGE_BUCKETS)}


def order_group(group: str, values: Mapping[object, int]) -> dict[str, int]:
    """A facet group's values (keys as text) in the order, and with the zero counts, the facet
    panel shows them: health every bucket, healthiest first ("unknown" only when some are);
    created by age; type most frequent first; importance most important first; others as given,
    without zeros. One rule for a fresh count and for counts moved by an edit."""
    if group == "health":
        shown = {label: values.get(label, 0) for label in reversed(HEALTH_BUCKETS)}
        if values.get(UNKNOWN):
            shown[UNKNOWN] = values[UNKNOWN]
        return shown
    if group == "created":
        return {label: values[label] for label, _, _ in AGE_BUCKETS if values.get(label)}
    kept = {str(value): n for value, n in values.items() if n}
    if group == "type":
        return dict(sorted(kept.items(), key=lambda kv: (-kv[1], kv[0])))
    if group == "importance":
        return dict(sorted(kept.items(), key=lambda kv: -(int(kv[0]) if kv[0].lstrip("-").isdigit() else 0)))
    return kept
