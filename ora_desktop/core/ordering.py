"""Small questions about a few rows of a listing, answered by SQLite with the listing's own SQL.

A view that follows a write (``ora_desktop.views.refresh``) asks which of the changed rows its
:class:`~ora_desktop.core.listing.ListQuery` selects, and where a row sorts against its
neighbours. SQLite answers with the query's own ``WHERE`` and ``ORDER BY``, so the answers agree
with :meth:`Store.row_keys` on NULLs, collation and time columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .listing import ListQuery, order_clause, sort_expression, where_clause
from .rawsql import all_rows

if TYPE_CHECKING:
    from .store import Store


def matches(store: Store, query: ListQuery, ids: Iterable[str]) -> list[tuple[int, bool]]:
    """``(rowid, whether query selects it)`` of every memory of ``ids`` still present."""
    where, params = where_clause(query, store.columns)
    return [(int(rowid), bool(hit)) for rowid, hit in all_rows(store,
        f"SELECT rowid, CASE WHEN {where} THEN 1 ELSE 0 END FROM memories "
        "WHERE id IN (SELECT value FROM json_each(?))",
        [*params, json.dumps(sorted(ids))],
    )]


def selected_in_order(store: Store, query: ListQuery, ids: Iterable[str]) -> list[int] | None:
    """Rowids of the memories of ``ids`` that ``query`` selects, in its order; ``None`` when one
    of ``ids`` is gone."""
    ids = sorted(set(ids))
    wanted = json.dumps(ids)
    where, params = where_clause(query, store.columns)
    found = all_rows(store,
        f"SELECT rowid FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND {where} "
        f"ORDER BY {_order(store, query)}",
        [wanted, *params],
    )
    present = all_rows(store, "SELECT count(*) FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                       [wanted])[0][0]
    return None if present != len(ids) else [int(row[0]) for row in found]


def sorts_before(store: Store, query: ListQuery, a: int, b: int) -> bool:
    """Whether the row ``a`` comes before the row ``b`` in ``query``'s order."""
    first = all_rows(store, f"SELECT rowid FROM memories WHERE rowid IN (?, ?) ORDER BY {_order(store, query)} LIMIT 1",
                     [a, b])
    return bool(first) and first[0][0] == a


def in_order(store: Store, query: ListQuery, rowids: Iterable[int]) -> list[int]:
    """``rowids`` (those still present) sorted by ``query``'s ``ORDER BY``."""
    return [int(row[0]) for row in all_rows(store,
        f"SELECT rowid FROM memories WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY {_order(store, query)}",
        [json.dumps(list(rowids))],
    )]


def _order(store: Store, query: ListQuery) -> str:
    return order_clause(sort_expression(query.order_by, store.columns), query.descending)
