"""What a write means to a listed view: repaint some rows in place, or read the row keys again.

A view over a large file (the window's memory table) holds the rowids of the memories it lists,
in order, and fetches rows lazily. After a write it must not re-read a million keys for a
one-cell edit. :func:`plan_refresh` takes the view's query, its keys and the write's
:class:`~ora_desktop.core.records.Change` and answers, reading only the changed rows and their
neighbours:

- a change with no ids (a restore, a program the change feed could not read), a ranked list
  (search: hits are ordered by the engine, not by the query), the "dirty first" order, rows
  added and removed at once, removed rows whose rowids are not known → **reload** the keys;
- a changed row that now matches the query but is not listed, or is listed and no longer
  matches (an edit of a filtered column) → **reload**;
- a listed row whose new sort value no longer lies between its neighbours' (an edit of the sort
  column that moves it) → **reload**;
- otherwise → **repaint** only the listed changed rows, with their fresh values, **insert** the
  new rows that match where they sort (a binary search, one comparison for a newest-first list)
  and **remove** the listed rows that are gone (by the rowids the change feed read).

The order test asks SQLite to sort the changed rows and their neighbours with the query's own
``ORDER BY`` (:mod:`ora_desktop.core.ordering`), so it agrees with :meth:`Store.row_keys` on
NULLs, collation and time columns. No SQL is written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core import ordering
from ..core.listing import ListQuery
from ..core.records import Change, Memory
from ..core.store import Store
from .positions import positions

#: Past this many changed ids a reload is cheaper than checking each row (a bulk edit).
MAX_CHANGED = 5000


@dataclass(frozen=True, slots=True)
class RowRefresh:
    """The answer of :func:`plan_refresh`.

    ``reload``: the keys must be read again (``reason`` says why). Otherwise ``rows`` holds
    ``(position in the keys, fresh memory)`` for every listed changed row, in position order
    (changed rows that are not listed, and still do not match, need nothing); ``inserts`` the
    ``(position in the keys before the change, fresh memory)`` of rows that now belong in the
    list, in order (a row goes before the row listed at that position); ``removes`` the
    positions of listed rows that are gone, ascending.
    """

    reload: bool
    reason: str = ""
    rows: tuple[tuple[int, Memory], ...] = ()
    inserts: tuple[tuple[int, Memory], ...] = ()
    removes: tuple[int, ...] = ()


def _reload(reason: str) -> RowRefresh:
    return RowRefresh(True, reason)


#: Up to this many new rows are placed in the list one by one (a binary search each).
MAX_PLACED = 64


def plan_refresh(store: Store, query: ListQuery, keys: Sequence[int], change: Change,
                 ranked: bool = False) -> RowRefresh:
    """Decide how a view listing ``keys`` (rowids in ``query`` order, every match, no limit)
    follows ``change``: repaint the changed rows in place, insert and remove rows, or reload
    (see the module docstring). ``ranked``: the keys come from a search ranking rather than
    from ``query``'s order."""
    if not change:
        return _reload("another program wrote; which rows changed is not known")
    if ranked:
        return _reload("search hits are ranked by the engine")
    if query.order_by == "dirty":
        return _reload("the dirty-first order follows every edit")
    if query.limit is not None or query.after is not None:
        return _reload("the list is one page of a longer one")
    if len(change.changed) > MAX_CHANGED:
        return _reload(f"more than {MAX_CHANGED:,} rows changed")
    if change.added and change.removed:
        return _reload("rows came and went at once")
    removes: tuple[int, ...] = ()
    if change.removed:
        if len(change.removed_rowids) != len(change.removed):
            return _reload("rows were removed and where they were listed is not known")
        removes = tuple(sorted(positions(keys, sorted(change.removed_rowids)).values()))
    inserts: tuple[tuple[int, Memory], ...] = ()
    if change.added:
        if len(change.added) > MAX_PLACED:
            return _reload(f"more than {MAX_PLACED} rows were added")
        placed = _place_new(store, query, keys, change.added)
        if placed is None:
            return _reload("a new row could not be placed")
        inserts = placed
    if not change.changed:
        return RowRefresh(False, inserts=inserts, removes=removes)
    edited = _changed_rows(store, query, keys, change)
    if edited.reload:
        return edited
    return RowRefresh(False, rows=edited.rows, inserts=inserts, removes=removes)


def _changed_rows(store: Store, query: ListQuery, keys: Sequence[int], change: Change) -> RowRefresh:
    """The repaint of the rows ``change`` edited in place, or a reload when one moved."""
    found = ordering.matches(store, query, change.changed)
    if len(found) != len(change.changed):
        return _reload("a changed memory is gone")
    listed = positions(keys, [rowid for rowid, _ in found])
    for rowid, hit in found:
        if hit != (rowid in listed):
            return _reload("a changed row entered or left the filter")
    if not listed:
        return RowRefresh(False)
    if not _still_in_order(store, query, keys, sorted(listed.values())):
        return _reload("a changed row moved in the sort order")
    by_rowid = {m.rowid: m for m in store.by_rowids(list(listed))}
    if len(by_rowid) != len(listed):
        return _reload("a changed memory is gone")
    return RowRefresh(False, rows=tuple(sorted((pos, by_rowid[rowid]) for rowid, pos in listed.items())))


def _place_new(store: Store, query: ListQuery, keys: Sequence[int], ids: frozenset[str]
               ) -> tuple[tuple[int, Memory], ...] | None:
    """Where each new memory that matches ``query`` goes in ``keys``: a binary search with
    SQLite comparing two rows by the query's own ``ORDER BY`` (a newest-first list answers at
    its first comparison); a row listed already (keys read after the write) is left where it is.
    ``None`` when a new row is gone again."""
    found = ordering.selected_in_order(store, query, ids)
    if found is None:
        return None

    def before(a: int, b: int) -> bool:
        return ordering.sorts_before(store, query, a, b)

    placed = []
    for rowid in found:
        low, high = 0, len(keys)
        if high and before(rowid, int(keys[0])):
            high = 0
        while low < high:
            mid = (low + high) // 2
            if before(rowid, int(keys[mid])):
                high = mid
            else:
                low = mid + 1
        # A row listed already (the keys were read after the write) is where the search lands
        # (compared with itself it counts as before): left there, with no scan of the keys.
        if not (low < len(keys) and int(keys[low]) == rowid):
            placed.append((low, rowid))
    if not placed:
        return ()
    new = [rowid for _, rowid in placed]
    memories = {m.rowid: m for m in store.by_rowids(new)}
    if len(memories) != len(new):
        return None
    return tuple((pos, memories[rowid]) for pos, rowid in placed)


def merge_changes(changes: Sequence[Change]) -> Change:
    """One change covering several (ids united). A change that names no ids (another program
    wrote) makes the whole batch unknown: that change itself is returned."""
    for change in changes:
        if not change:
            return change
    if len(changes) == 1:
        return changes[0]
    columns = None if any(c.columns is None for c in changes) else frozenset().union(*(c.columns for c in changes))
    added = frozenset().union(*(c.added for c in changes))
    removed = frozenset().union(*(c.removed for c in changes))
    changed = frozenset().union(*(c.changed for c in changes))
    # An id added then removed (or the reverse) within the batch: the view reads its keys again.
    return Change(added=added, changed=changed | (added & removed), removed=removed, columns=columns,
                  removed_rowids=frozenset().union(*(c.removed_rowids for c in changes)))


def _still_in_order(store: Store, query: ListQuery, keys: Sequence[int], positions: list[int]) -> bool:
    """Whether the rows at ``positions`` still sort between their neighbours.

    The rows at ``positions`` and the rows next to them are sorted by SQLite with the query's
    ``ORDER BY``; the list is still in order exactly when that sort keeps their listed order
    (unchanged rows were in order already and their values did not move)."""
    around = sorted({p + d for p in positions for d in (-1, 0, 1) if 0 <= p + d < len(keys)})
    if len(around) < 2:
        return True
    expected = [int(keys[p]) for p in around]
    return ordering.in_order(store, query, expected) == expected
