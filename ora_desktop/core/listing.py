"""Filters, sort orders and keyset paging for listing memories.

A :class:`ListQuery` turns into a ``WHERE`` clause and an ``ORDER BY`` over a sort expression
and ``rowid``. Paging is by keyset (``after=`` the last row's :class:`Cursor`), so page 10,000
costs what page 1 costs when the sort column is indexed (see :func:`keyset_parts`). Time columns sort through
``julianday()`` so the two timestamp formats order as time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from . import engine_tables
from .errors import InvalidValue
from .schema import MEMORY_COLUMNS, MEMORY_TYPES, SYNC_STATUSES
from .timefilter import TimeBound, bounds_sql

if TYPE_CHECKING:
    from .search.query import ParsedQuery

TIME_COLUMNS = frozenset({
    "last_accessed_at", "created_at", "updated_at", "expires_at", "synced_at",
})
SORTABLE = frozenset(MEMORY_COLUMNS) | {"rowid"}
#: The ``is:pinned`` filter's SQL on ``memories`` (only where the pins table exists).
PINNED_SQL = f"id IN (SELECT memory_id FROM {engine_tables.PINS})"
_OPS = {">": ">", ">=": ">=", "<": "<", "<=": "<=", "=": "="}


@dataclass(frozen=True, slots=True)
class Cursor:
    """Position after a row in a given order: its sort value and rowid."""

    value: Any
    rowid: int


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What to list. Every field is optional; the default lists everything, newest first."""

    types: tuple[str, ...] = ()
    importance_min: int | None = None
    importance_max: int | None = None
    health_min: float | None = None
    health_max: float | None = None
    sync_statuses: tuple[str, ...] = ()
    expired: bool | None = None
    expiring_within_days: float | None = None
    superseded: str = "hide"  # "hide" | "show" | "only"
    dirty: bool | None = None
    ids: tuple[str, ...] | None = None
    text: str | None = None  # plain substring filter (LIKE); full-text search lives in search/
    order_by: str = "created_at"
    descending: bool = True
    limit: int | None = 100
    after: Cursor | None = None
    #: The field filters of a parsed search query (``core.search.parse_query``: ``type:``,
    #: ``importance:>=7``, ``is:pinned`` …), ANDed with the fields above and rendered as SQL here.
    #: Tag filters need the search sidecar: a listing refuses them. ``is:pinned`` tests the pins
    #: table: a store resolves it for a file without one (:func:`resolve_pins`).
    filters: ParsedQuery | None = None
    #: Only ids beginning with this text (in id order an index range).
    id_prefix: str | None = None
    #: Time filters, see :mod:`ora_desktop.core.timefilter` (``created_after`` etc. build these).
    times: tuple[TimeBound, ...] = ()

    def with_(self, **changes: Any) -> ListQuery:
        """A copy with some fields changed."""
        return replace(self, **changes)


def resolve_pins(parsed: ParsedQuery, present: bool) -> ParsedQuery:
    """``parsed`` for a file that holds the pins table (``present``) or not: without it nothing is
    pinned, so ``-is:pinned`` filters nothing and ``is:pinned`` matches nothing (an empty either-or)."""
    if parsed.pinned is None or present:
        return parsed
    return replace(parsed, pinned=None, any_of=parsed.any_of + (((),) if parsed.pinned else ()))


def sort_expression(column: str, available: Sequence[str]) -> str:
    """SQL to sort by ``column`` (time columns through ``julianday``, content without regard to
    case; a missing column is NULL)."""
    if column not in SORTABLE:
        raise InvalidValue("order_by", f"{column!r} is not a column of memories")
    if column != "rowid" and column not in available:
        return "NULL"
    if column in TIME_COLUMNS:
        return f"julianday({column})"
    # Content has no index to lose; ids keep their primary-key order (an index SQLite can walk).
    return "content COLLATE NOCASE" if column == "content" else column


def where_clause(query: ListQuery, available: Sequence[str]) -> tuple[str, list[Any]]:
    """Build ``WHERE`` text and parameters for the filters of ``query`` (no keyset)."""
    parts: list[str] = []
    params: list[Any] = []
    has = set(available)

    def col(name: str) -> str:
        return name if name in has else "NULL"

    if query.types:
        bad = [t for t in query.types if t not in MEMORY_TYPES]
        if bad:
            raise InvalidValue("type", f"{bad[0]!r} is not one of {', '.join(MEMORY_TYPES)}")
        parts.append(f"{col('type')} IN ({','.join('?' * len(query.types))})")
        params.extend(query.types)
    if query.sync_statuses:
        bad = [s for s in query.sync_statuses if s not in SYNC_STATUSES]
        if bad:
            raise InvalidValue("sync_status", f"{bad[0]!r} is not one of {', '.join(SYNC_STATUSES)}")
        parts.append(f"{col('sync_status')} IN ({','.join('?' * len(query.sync_statuses))})")
        params.extend(query.sync_statuses)
    for name, value, op in (
        ("importance", query.importance_min, ">="),
        ("importance", query.importance_max, "<="),
        ("health_score", query.health_min, ">="),
        ("health_score", query.health_max, "<="),
    ):
        if value is not None:
            parts.append(f"{col(name)} {op} ?")
            params.append(value)
    if query.expired is True:
        parts.append(f"{col('expires_at')} IS NOT NULL AND julianday({col('expires_at')}) < julianday('now')")
    elif query.expired is False:
        parts.append(f"({col('expires_at')} IS NULL OR julianday({col('expires_at')}) >= julianday('now'))")
    if query.expiring_within_days is not None:
        parts.append(
            f"julianday({col('expires_at')}) >= julianday('now') "
            f"AND julianday({col('expires_at')}) < julianday('now') + ?"
        )
        params.append(float(query.expiring_within_days))
    if query.superseded == "hide":
        parts.append(f"({col('superseded_by')} IS NULL OR {col('superseded_by')} = '')")
    elif query.superseded == "only":
        parts.append(f"{col('superseded_by')} IS NOT NULL AND {col('superseded_by')} != ''")
    elif query.superseded != "show":
        raise InvalidValue("superseded", f"{query.superseded!r} is not one of hide, show, only")
    if query.dirty is not None:
        dirty = (
            f"({col('sync_status')} IS NOT 'local_only' AND ({col('synced_at')} IS NULL "
            f"OR julianday({col('updated_at')}) > julianday({col('synced_at')})))"
        )
        parts.append(dirty if query.dirty else f"NOT {dirty}")
    if query.ids is not None:
        if not query.ids:
            parts.append("0")
        else:  # one JSON parameter: no limit on how many ids
            parts.append("id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(query.ids)))
    if query.text:
        escaped = query.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        parts.append("content LIKE ? ESCAPE '\\'")
        params.append(f"%{escaped}%")
    for sql, values in bounds_sql(query.times, has):
        parts.append(sql)
        params.extend(values)
    if query.id_prefix is not None:
        parts.append("id >= ? AND id < ?")
        params.extend((query.id_prefix, query.id_prefix + "\U0010ffff"))
    if query.filters is not None:
        sql, values = _parsed_where(query.filters, available)
        parts.append(f"({sql})")
        params.extend(values)
    return (" AND ".join(parts) if parts else "1"), params


def _parsed_where(parsed: ParsedQuery, available: Sequence[str]) -> tuple[str, list[Any]]:
    """WHERE text and parameters for the field filters of a parsed query (no tags)."""
    if parsed.tags or parsed.not_tags:
        raise InvalidValue("query", "tag: filters need the search index; search instead of listing")
    has = set(available)

    def col(name: str) -> str:
        return name if name in has else "NULL"

    base = ListQuery(types=parsed.types, sync_statuses=parsed.sync, expired=parsed.expired,
                     superseded=parsed.superseded, dirty=parsed.dirty, limit=None, times=parsed.times)
    where, params = where_clause(base, available)
    parts = [where]
    for name, column in (("importance", "importance"), ("health", "health_score")):
        for op, value in getattr(parsed, name):
            parts.append(f"{col(column)} {_OPS[op]} ?")
            params.append(value)
    for values, column in ((parsed.not_types, "type"), (parsed.not_sync, "sync_status")):
        if values:
            parts.append(f"({col(column)} IS NULL OR {col(column)} NOT IN ({','.join('?' * len(values))}))")
            params.extend(values)
    for options in parsed.any_of:
        sql, values = _either_sql(options, has)
        parts.append(f"({sql})")
        params.extend(values)
    if parsed.pinned is not None:
        parts.append(PINNED_SQL if parsed.pinned else f"NOT {PINNED_SQL}")
    return " AND ".join(parts), params


def _either_sql(options: tuple[tuple[tuple[str, str, object], ...], ...], has: set[str]) -> tuple[str, list[Any]]:
    """One condition true when any option holds (each option: its bounds ANDed); none: false."""
    parts: list[str] = []
    params: list[Any] = []
    for bounds in options:
        tests = []
        for column, op, value in bounds:
            col = column if column in has else "NULL"
            if op == "null":
                tests.append(f"{col} IS NULL")
            elif column in TIME_COLUMNS:
                tests.append(f"julianday({col}) {_OPS[op]} julianday(?)")
                params.append(value)
            else:
                tests.append(f"{col} {_OPS[op]} ?")
                params.append(value)
        parts.append("(" + (" AND ".join(tests) or "1") + ")")
    return " OR ".join(parts) or "0", params


def keyset_parts(expr: str, cursor: Cursor, descending: bool) -> list[tuple[str, list[Any]]]:
    """Rows strictly after ``cursor`` in ``ORDER BY expr, rowid``, as conditions to run in turn.

    NULLs sort first ascending and last descending. Each part is a plain range that SQLite can
    seek in an index on ``expr`` (which holds the rowid too): a row-value comparison for the
    non-NULL values, then the NULLs. An ``OR`` of the two would make SQLite walk the index
    from the start, so a deep page would cost what the rows before it cost.
    """
    if expr == "rowid":
        return [("rowid < ?" if descending else "rowid > ?", [cursor.rowid])]
    if descending:
        if cursor.value is None:
            return [(f"{expr} IS NULL AND rowid < ?", [cursor.rowid])]
        return [(f"({expr}, rowid) < (?, ?)", [cursor.value, cursor.rowid]), (f"{expr} IS NULL", [])]
    if cursor.value is None:
        return [(f"{expr} IS NULL AND rowid > ?", [cursor.rowid]), (f"{expr} IS NOT NULL", [])]
    return [(f"({expr}, rowid) > (?, ?)", [cursor.value, cursor.rowid])]


def order_clause(expr: str, descending: bool) -> str:
    """``ORDER BY`` text for ``expr`` with ``rowid`` as the tie-breaker."""
    direction = "DESC" if descending else "ASC"
    return f"{expr} {direction}, rowid {direction}"
