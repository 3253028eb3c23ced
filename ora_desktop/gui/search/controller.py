"""``SearchController``: turns the search box, quick filters and facets into what the table shows.

Typing is debounced (200 ms); each search runs on a worker thread and only the newest answer
is used. With text, the table shows the hits best first (``core.search``; a ``LIKE`` scan when
it is unavailable): a first screenful at once, the rest appended after. Without text, the
filtered listing. Facet counts follow what is shown.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, QTimer, Signal

from ...core import ListQuery, OraError, Store
from ..context import AppContext
from ..memories.model import MemoryTableModel, default_loader
from .backend import RANK, FacetCounts, FileSearch, facet_counts, file_keys, search_everywhere, terms_of
from .filters import FilterState
from .vectors_progress import needs_vectors

log = logging.getLogger("ora_desktop.gui")
DEBOUNCE_MS = 200
FIRST_LIMIT = 100  # hits in the first screenful of a search (the rest, up to SEARCH_LIMIT, follow)


class SearchController(QObject):
    terms_changed = Signal(object)  # tuple[str, ...]
    facets_ready = Signal(object)  # FacetCounts
    note = Signal(str)
    everywhere_ready = Signal(object, str)  # list[EverywhereHit], note
    searching = Signal(object)  # True while a search or listing runs
    vectors_needed = Signal(object)  # Store: search by meaning must embed it first (VectorsProgress)

    def __init__(self, ctx: AppContext, model: MemoryTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.model = model
        self.text = ""
        self.scope = "file"  # or "all"
        self.mode = "lexical"  # or "semantic", "hybrid" (search by meaning)
        self.filters = FilterState()
        self.base = ListQuery()
        self.last: FileSearch | None = None
        self.terms: tuple[str, ...] = ()
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.apply)
        self._facet_task: asyncio.Task | None = None
        self._everywhere_task: asyncio.Task | None = None
        self._sort_before_search: tuple[str, bool] = ("created_at", True)
        model.loaded.connect(self._after_load)

    # ----------------------------------------------------------------- inputs
    def set_text(self, text: str, immediate: bool = False) -> None:
        """The search box changed: search after a short pause (or now)."""
        self.text = text
        if immediate:
            self._debounce.stop()
            self.apply()
        else:
            self._debounce.start()

    def set_mode(self, mode: str) -> None:
        """Words (lexical), meaning (semantic) or both (hybrid); searches again."""
        self.mode = mode
        self.apply()

    def set_scope(self, scope: str) -> None:
        self.scope = scope
        self.apply()

    def toggle_quick(self, name: str, on: bool) -> None:
        (self.filters.quick.add if on else self.filters.quick.discard)(name)
        self.apply()

    def toggle_facet(self, group: str, value: str, on: bool) -> None:
        self.filters.toggle_facet(group, value, on)
        self.apply()

    def clear(self) -> None:
        self.text = ""
        self.filters.clear()
        self.apply()

    @property
    def full_text(self) -> str:
        """The typed text plus the chosen tag facets as ``tag:`` words."""
        return " ".join(x for x in (self.text.strip(), *self.filters.tag_terms()) if x)

    @property
    def is_searching(self) -> bool:
        return bool(self.full_text)

    # ----------------------------------------------------------------- applying
    def apply(self) -> None:
        """Show what the current inputs ask for in the table (or across all sites)."""
        store = self.model.store
        text = self.full_text
        query = self.filters.query(self._base_query())
        self.terms = terms_of(self.text) if self.text.strip() else ()
        self.terms_changed.emit(self.terms)
        self.model.highlight_terms = self.terms
        if self.scope == "all" and self.text.strip():
            self._search_everywhere(self.text)
        if not text:
            if self.model.query.order_by == RANK:
                order, descending = self._sort_before_search
                query = query.with_(order_by=order, descending=descending)
            self.last = None
            self.model.set_query(query, default_loader)
            return
        if self.model.query.order_by != RANK and not self._was_searching():
            self._sort_before_search = (self.model.query.order_by, self.model.query.descending)
            query = query.with_(order_by=RANK)
        if self.mode != "lexical" and store is not None and needs_vectors(store):
            self.vectors_needed.emit(store)  # built with progress and Cancel, then apply() again
            return
        self.model.set_query(query, self._loader(text))
        if store is None:
            self.note.emit("")

    def _base_query(self) -> ListQuery:
        """The table's query without any filter (its sort order kept)."""
        return self.model.query.with_(extra_where=(), types=(), sync_statuses=(), **_reset_quick())

    def _was_searching(self) -> bool:
        return getattr(self.model.loader, "search_text", None) is not None

    def _loader(self, text: str):  # noqa: ANN202
        """Key loader for ``text``: the best ``FIRST_LIMIT`` hits first (``first``, shown at once),
        then up to ``SEARCH_LIMIT`` (``load``, appended); both run on a worker thread."""
        mode = self.mode

        def load(store: Store, query: ListQuery):  # noqa: ANN202
            result = file_keys(store, text, query, mode=mode)
            load.result = result  # type: ignore[attr-defined]
            return result.keys

        def first(store: Store, query: ListQuery):  # noqa: ANN202
            if query.order_by != RANK:  # sorted by a column: the top of 100 hits is not the top of all
                return None
            return file_keys(store, text, query, limit=FIRST_LIMIT, mode=mode).keys
        load.search_text = text  # type: ignore[attr-defined]
        load.mode = mode  # type: ignore[attr-defined]
        load.result = None  # type: ignore[attr-defined]
        load.first = first  # type: ignore[attr-defined]
        return load

    def _after_load(self, count: int) -> None:
        store = self.model.store
        searching = self._was_searching()
        result = getattr(self.model.loader, "result", None) if searching else None
        self.last = result
        # Across sites, that search owns the note line (files skipped, partial matches).
        owns_note = not (self.scope == "all" and self.text.strip())
        if result is not None:
            if result.terms:
                self.terms = tuple(result.terms)
                self.model.highlight_terms = self.terms
                self.terms_changed.emit(self.terms)
            parts = [result.note, *result.warnings]
            if result.total is not None and result.total > count:
                parts.insert(0, f"Showing the best {count:,} of {result.total:,} matches")
            if owns_note:
                self.note.emit("; ".join(p for p in parts if p))
        elif owns_note:
            self.note.emit("")
        if store is not None:
            self._compute_facets(store, searching, result)

    def _compute_facets(self, store: Store, searching: bool, result: FileSearch | None) -> None:
        if self._facet_task is not None and not self._facet_task.done():
            self._facet_task.cancel()
        self._facet_task = asyncio.ensure_future(self._facets(store, searching, result), loop=self.ctx.loop)

    async def _facets(self, store: Store, searching: bool, result: FileSearch | None) -> None:
        query = self.model.query
        try:
            if searching:
                keys = list(self.model.keys)
                hits = await self.ctx.run(store.by_rowids, keys[:5000])
                counts: FacetCounts = await self.ctx.run(facet_counts, store, query, hits,
                                                         result.tags if result else None, self.full_text)
            else:
                counts = await self.ctx.run(facet_counts, store, query.with_(order_by="created_at"), None, None, "")
                # A group with values ticked counts as if nothing in it were ticked, so more of its
                # values can be added (they combine with OR).
                for group in [g for g in self.filters.facets if not g.startswith("tag:")]:
                    others = FilterState(set(self.filters.quick),
                                         {g: set(v) for g, v in self.filters.facets.items() if g != group})
                    wider = others.query(self._base_query())
                    alone: FacetCounts = await self.ctx.run(facet_counts, store, wider, None, {}, "")
                    counts.groups[group] = alone.groups.get(group, {})
        except OraError as exc:
            log.info("facets: %s", exc)
            return
        if store is self.model.store:
            self.facets_ready.emit(counts)

    def _search_everywhere(self, text: str) -> None:
        if self._everywhere_task is not None and not self._everywhere_task.done():
            self._everywhere_task.cancel()

        async def run() -> None:
            hits, note = await self.ctx.run(search_everywhere, self.ctx.home, text)
            if text == self.text:
                self.everywhere_ready.emit(hits, note)
                self.note.emit(note)

        self._everywhere_task = asyncio.ensure_future(run(), loop=self.ctx.loop)


def _reset_quick() -> dict:
    """Field values that quick filters set, back to their defaults (they are re-applied)."""
    defaults = ListQuery()
    return {name: getattr(defaults, name) for name in (
        "expiring_within_days", "health_max", "health_min", "dirty", "superseded", "importance_min",
        "importance_max", "expired")}
