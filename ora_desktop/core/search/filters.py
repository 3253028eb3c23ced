"""Field filters of a parsed query as SQL over ``memories`` (unqualified column names).

Built on :func:`ora_desktop.core.listing.where_clause`, so ``type:``, ``sync:``, ``is:expired``,
superseded hiding and ``is:dirty`` mean exactly what the memory list means by them. Tag
filters need the sidecar (``tags`` and ``docs``); the LIKE fallback approximates them by a
text match.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..listing import TIME_COLUMNS, ListQuery, where_clause
from ..pins import PINNED_SQL, has_pins_table
from .query import Bound, ParsedQuery
from .tags import TAG_KINDS

_OPS = {">": ">", ">=": ">=", "<": "<", "<=": "<=", "=": "="}


def _col(name: str, columns: Sequence[str]) -> str:
    return name if name in columns else "NULL"


def _tag_clause(kind: str | None, value: str, drive: bool) -> tuple[str, list[Any]]:
    """A tag test on a memory row. ``drive``: list the tagged memories first (best when few
    carry the tag); else probe each candidate row (best for few candidates or common tags)."""
    kinds = [kind] if kind else list(TAG_KINDS)
    marks = ",".join("?" * len(kinds))
    if drive:
        return (f"id IN (SELECT tagged.mid FROM docs tagged WHERE tagged.fid IN "
                f"(SELECT fid FROM tags WHERE kind IN ({marks}) AND value = ? COLLATE NOCASE))", [*kinds, value])
    return (f"EXISTS (SELECT 1 FROM docs tagged JOIN tags tg ON tg.fid = tagged.fid WHERE tagged.mid = id "
            f"AND tg.kind IN ({marks}) AND tg.value = ? COLLATE NOCASE)", [*kinds, value])


def pins_on(conn: sqlite3.Connection, parsed: ParsedQuery) -> bool:
    """Whether ``parsed`` filters by pins and the file on ``conn`` holds them (``filter_sql``'s ``pins``)."""
    return parsed.pinned is not None and has_pins_table(conn)


def filter_sql(parsed: ParsedQuery, columns: Sequence[str], tags: str = "index",
               pins: bool = False) -> tuple[str, list[Any]]:
    """WHERE text and parameters for every field filter of ``parsed``.

    ``tags="index"`` tests tags through the sidecar's ``tags`` and ``docs`` tables row by row,
    ``tags="drive"`` lists the tagged memories first (for rare tags);
    ``tags="like"`` approximates ``tag:`` filters by ``content LIKE``.
    """
    extra: list[tuple[str, tuple]] = []
    for name, column in (("importance", "importance"), ("health", "health_score")):
        for op, value in getattr(parsed, name):
            extra.append((f"{_col(column, columns)} {_OPS[op]} ?", (value,)))
    if parsed.not_types:
        marks = ",".join("?" * len(parsed.not_types))
        col = _col("type", columns)
        extra.append((f"{col} IS NULL OR {col} NOT IN ({marks})", tuple(parsed.not_types)))
    if parsed.not_sync:
        marks = ",".join("?" * len(parsed.not_sync))
        col = _col("sync_status", columns)
        extra.append((f"{col} IS NULL OR {col} NOT IN ({marks})", tuple(parsed.not_sync)))
    for options in parsed.any_of:
        extra.append(_either_sql(options, columns))
    if parsed.pinned is not None:  # ``pins``: the file holds the pins table (without it nothing is pinned)
        if pins:
            extra.append((PINNED_SQL if parsed.pinned else f"NOT {PINNED_SQL}", ()))
        elif parsed.pinned:
            extra.append(("0", ()))
    for negate, items in ((False, parsed.tags), (True, parsed.not_tags)):
        for kind, value in items:
            if tags in ("index", "drive"):
                sql, params = _tag_clause(kind, value, drive=tags == "drive")
            else:
                sql, params = "content LIKE ? ESCAPE '\\'", [f"%{like_escape(value)}%"]
            extra.append((f"NOT ({sql})" if negate else sql, tuple(params)))
    query = ListQuery(
        types=parsed.types, sync_statuses=parsed.sync, expired=parsed.expired,
        superseded=parsed.superseded, dirty=parsed.dirty, limit=None, extra_where=tuple(extra), times=parsed.times,
    )
    return where_clause(query, columns)


def _either_sql(options: tuple[tuple[Bound, ...], ...], columns: Sequence[str]) -> tuple[str, tuple]:
    """One condition true when any option holds (each option: its bounds ANDed)."""
    parts: list[str] = []
    params: list[Any] = []
    for bounds in options:
        tests = []
        for column, op, value in bounds:
            col = _col(column, columns)
            if op == "null":
                tests.append(f"{col} IS NULL")
            elif column in TIME_COLUMNS:
                tests.append(f"julianday({col}) {_OPS[op]} julianday(?)")
                params.append(value)
            else:
                tests.append(f"{col} {_OPS[op]} ?")
                params.append(value)
        parts.append("(" + " AND ".join(tests) + ")")
    return " OR ".join(parts) or "0", tuple(params)


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
