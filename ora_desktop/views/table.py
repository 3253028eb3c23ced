"""``TableState``: what a memory list holds, as Anki's browser holds it, and how a change moves it.

The state is the listing's row keys (rowids, 8 bytes a row, in the query's order), the memories
of the pages already read (a bounded cache, least recently used pages go), which of them are
stale (shown, but to read again), and which row is selected, by id. A
:class:`~ora_desktop.views.refresh.RowRefresh` planned after a write is applied here: rows
removed and inserted where they sort, changed rows put in place, and what the facets need to
shift their counts (:attr:`TableState.edited`). Nothing here reads a file or knows Qt: the
window's model (``gui/memories/model.py``) reads pages and keys on its worker and forwards each
row movement to Qt through :class:`TableEvents`.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..core.listing import ListQuery
from ..core.records import Memory
from ..core.store import Store
from .positions import position
from .refresh import RowRefresh

#: ``(before, after)``: memories as cached before a write and as they are now (``None`` before:
#: a row inserted; ``None`` after: a row removed).
Edited = tuple[tuple[Memory | None, ...], tuple[Memory | None, ...]]
#: What reads a listing's row keys (on a worker): :func:`default_loader`, or a search's.
KeyLoader = Callable[[Store, ListQuery], array]


def default_loader(store: Store, query: ListQuery) -> array:
    """Rowids of the memories matching ``query`` in its order, up to ``query.limit``
    (``order_by="dirty"``: dirty first, then by last update)."""
    if query.order_by == "dirty":
        base = query.with_(order_by="updated_at", descending=True)
        dirty = store.row_keys(base.with_(dirty=True)) if query.dirty in (None, True) else array("q")
        clean = store.row_keys(base.with_(dirty=False)) if query.dirty in (None, False) else array("q")
        return dirty + clean if query.descending else clean + dirty
    return store.row_keys(query)


def hides_only_superseded(query: ListQuery) -> bool:
    """Whether ``query`` lists the whole file but its superseded memories (the default list): its
    rows plus the superseded ones are every row a file's count counts. Sort and paging aside."""
    from ..core.search.query import ParsedQuery

    filters = query.filters
    rules = (query.superseded, "show" if filters is None else filters.superseded)  # both apply
    if "only" in rules or "hide" not in rules:
        return False
    if filters is not None and replace(filters, superseded="hide") != ParsedQuery():
        return False
    plain = query.with_(order_by="created_at", descending=True, limit=None, after=None, filters=None,
                        superseded="hide")
    return plain == ListQuery(limit=None)


def _nothing(*_args: int) -> None:
    return None


@dataclass
class TableEvents:
    """Plain callbacks a view (the Qt model) hears the rows move by; each defaults to nothing.
    ``removing``/``inserting`` come before the keys change, ``removed``/``inserted`` after."""

    removing: Callable[[int], None] = _nothing
    removed: Callable[[int], None] = _nothing
    inserting: Callable[[int], None] = _nothing
    inserted: Callable[[int], None] = _nothing
    changed: Callable[[int, int], None] = _nothing  # first and last row repainted


class TableState:
    """Row keys of one listing and the memories read for them (see the module docstring)."""

    def __init__(self, page_size: int = 100, cache_pages: int = 60, events: TableEvents | None = None) -> None:
        self.keys = array("q")
        #: What is listed: the filters (a parsed query), the sort order.
        self.query = ListQuery()
        self.page_size = page_size
        self.cache_pages = cache_pages
        self.events = events or TableEvents()
        self.pages: OrderedDict[int, dict[int, Memory]] = OrderedDict()
        self.stale: set[int] = set()  # pages whose rows are shown but must be read again
        #: How many rows were repainted in place after writes (no key read).
        self.rows_repainted = 0
        #: Set when the person asks a new question (a search, a filter): the next load selects
        #: the top row instead of keeping the previous selection (read once by the view).
        self.select_top = False

    def sort(self, order_by: str, descending: bool) -> bool:
        """Order the listing by ``order_by``; returns whether that changed the query (the same
        rows are then to be read in the new order)."""
        query = self.query.with_(order_by=order_by, descending=descending)
        changed, self.query = query != self.query, query
        return changed

    # ----------------------------------------------------------------- keys and pages
    def replace_keys(self, keys: array, keep_rows: bool, rows: Sequence[Memory] | None = None) -> None:
        """List ``keys``. ``keep_rows``: the cached rows stay shown, to be read again; ``rows``:
        memories already read for the first keys, cached by whole pages (the first paint shows them)."""
        self.keys = keys
        if keep_rows:
            self.stale.update(self.pages)
        else:
            self.pages.clear()
            self.stale.clear()
        if rows:
            by_rowid = {m.rowid: m for m in rows}
            for start in range(0, len(keys), self.page_size):
                page = keys[start:start + self.page_size]
                if not all(rid in by_rowid for rid in page):
                    break  # the rows read cover the first pages only
                self.pages[start // self.page_size] = {rid: by_rowid[rid] for rid in page}

    def extend(self, keys: array) -> None:
        """List ``keys``, which begin with the keys listed (the rest after a first screenful); a
        part page cached is to be read again for its new rows."""
        listed = len(self.keys)
        if listed % self.page_size and listed // self.page_size in self.pages:
            self.stale.add(listed // self.page_size)
        self.keys = keys

    def cached(self, row: int) -> tuple[Memory | None, bool]:
        """The memory at ``row`` as cached (``None`` if its page is not), and whether its page
        must be read (not cached, or stale); the page counts as recently used."""
        page_no = row // self.page_size
        page = self.pages.get(page_no)
        if page is None:
            return None, True
        self.pages.move_to_end(page_no)
        return page.get(self.keys[row]), page_no in self.stale

    def memory_at(self, row: int) -> Memory | None:
        """The memory listed at ``row`` if its page is cached."""
        if not 0 <= row < len(self.keys):
            return None
        page = self.pages.get(row // self.page_size)
        return page.get(self.keys[row]) if page else None

    def page_keys(self, page_no: int) -> array:
        return self.keys[page_no * self.page_size:(page_no + 1) * self.page_size]

    def store_page(self, page_no: int, by_rowid: dict[int, Memory], fresh: bool) -> None:
        """Cache a page read for the current keys; ``fresh``: read after every write applied."""
        self.pages[page_no] = {rid: by_rowid[rid] for rid in self.page_keys(page_no) if rid in by_rowid}
        self.pages.move_to_end(page_no)
        (self.stale.discard if fresh else self.stale.add)(page_no)

    def trim(self) -> None:
        """Drop the least recently used pages past the cache's size."""
        while len(self.pages) > self.cache_pages:
            old, _ = self.pages.popitem(last=False)
            self.stale.discard(old)

    def fresh_rows(self) -> dict[int, Memory]:
        """``{rowid: memory}`` of every cached page that is not stale."""
        return {rid: m for page_no, page in self.pages.items() if page_no not in self.stale for rid, m in page.items()}

    def row_of_key(self, rowid: int) -> int | None:
        """The row listing ``rowid``, or ``None`` (see :mod:`.positions`)."""
        return position(self.keys, rowid)

    # ----------------------------------------------------------------- selection
    def row_to_select(self, rowid: int | None, place: int) -> int | None:
        """The row to select again after the keys changed, for the memory ``rowid`` that was
        selected at row ``place``: its row if still listed, else the row that took its place (the
        last one when it was at the end), as a mail client does; ``None`` when nothing is left."""
        row = None if rowid is None else self.row_of_key(rowid)
        if row is not None:
            return row
        return min(place, len(self.keys) - 1) if len(self.keys) and place >= 0 else None

    # ----------------------------------------------------------------- following a change
    def apply(self, plan: RowRefresh, every_change_listed: bool) -> Edited | None:
        """Apply a plan that needs no key read: remove and insert rows, put the changed ones in
        place. Returns what the facets can shift by (see :meth:`repaint`). ``every_change_listed``:
        every id the change named is one of ``plan.rows``."""
        gone = self.move_rows(plan.inserts, plan.removes)
        rows = [(self.row_of_key(m.rowid), m) for _, m in plan.rows] if gone is not None else list(plan.rows)
        return self.repaint([(row, m) for row, m in rows if row is not None], every_change_listed,
                            added=tuple(m for _, m in plan.inserts), removed=gone)

    def move_rows(self, inserts: Sequence[tuple[int, Memory]], removes: Sequence[int]
                  ) -> tuple[Memory | None, ...] | None:
        """Remove the rows at ``removes`` and insert ``inserts`` (positions in the keys as they
        were), without reading the keys again; the cached pages are cut anew around them.
        Returns the removed memories as cached (``None`` where not cached); ``None`` when
        nothing moved."""
        if not inserts and not removes:
            return None
        cached = self.fresh_rows()
        gone = tuple(cached.get(self.keys[row]) for row in removes)
        for row in reversed(removes):
            self.events.removing(row)
            del self.keys[row]
            self.events.removed(row)
        for shift, (row, memory) in enumerate(inserts):
            at = row + shift - sum(1 for r in removes if r < row)
            cached[memory.rowid] = memory
            self.events.inserting(at)
            self.keys.insert(at, memory.rowid)
            self.events.inserted(at)
        for page_no in list(self.pages):
            keys = self.page_keys(page_no)
            self.pages[page_no] = {rid: cached[rid] for rid in keys if rid in cached}
            if len(self.pages[page_no]) != len(keys):
                self.stale.add(page_no)
        return gone

    def repaint(self, rows: Sequence[tuple[int, Memory]], every_change_listed: bool = False,
                added: Sequence[Memory] = (), removed: Sequence[Memory | None] | None = None) -> Edited | None:
        """Put fresh memories at their rows (cached pages only) and announce just those rows.
        ``added`` and ``removed``: rows inserted and removed just before.

        Returns ``(before, after)`` when every changed memory's old value is known (cached and
        not stale, nor read after the write), else ``None``: the facets must count again."""
        self.rows_repainted += len(rows)
        before: list[Memory | None] = []
        refetched = False  # a page read after the write already holds the new row: it is no "before"
        for row, memory in rows:
            page_no = row // self.page_size
            page = self.pages.get(page_no)
            if page is not None and memory.rowid in page:
                if page_no not in self.stale:
                    cached = page[memory.rowid]
                    refetched = refetched or cached.version == memory.version
                    before.append(cached)
                page[memory.rowid] = memory
            self.events.changed(row, row)
        removed = removed or ()
        known = every_change_listed and len(before) == len(rows) and None not in removed and not refetched
        after: list[Memory | None] = [m for _, m in rows]
        if added or removed:
            before += [None] * len(added) + list(removed)
            after += [*added, *([None] * len(removed))]
        return (tuple(before), tuple(after)) if known and before else None
