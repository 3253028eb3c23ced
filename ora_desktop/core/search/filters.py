"""Field filters of a parsed query as SQL over ``memories`` (unqualified column names).

Built on :func:`ora_desktop.core.listing.where_clause`, so ``type:``, ``sync:``, ``is:expired``,
superseded hiding and ``is:dirty`` mean exactly what the memory list means by them. Tag
filters need the sidecar (``tags`` and ``docs``); the LIKE fallback approximates them by a
text match.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..listing import ListQuery, resolve_pins, where_clause
from ..pins import has_pins_table
from .query import ParsedQuery
from .tags import TAG_KINDS


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
    """WHERE text and parameters for every field filter of ``parsed`` (``pins``: the file holds
    the pins table).

    ``tags="index"`` tests tags through the sidecar's ``tags`` and ``docs`` tables row by row,
    ``tags="drive"`` lists the tagged memories first (for rare tags);
    ``tags="like"`` approximates ``tag:`` filters by ``content LIKE``.
    """
    fields = replace(resolve_pins(parsed, pins), tags=(), not_tags=())
    where, params = where_clause(ListQuery(limit=None, superseded="show", filters=fields), columns)
    parts = [where]
    for negate, items in ((False, parsed.tags), (True, parsed.not_tags)):
        for kind, value in items:
            if tags in ("index", "drive"):
                sql, values = _tag_clause(kind, value, drive=tags == "drive")
            else:
                sql, values = "content LIKE ? ESCAPE '\\'", [f"%{like_escape(value)}%"]
            parts.append(f"NOT ({sql})" if negate else f"({sql})")
            params.extend(values)
    return " AND ".join(parts), params


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
