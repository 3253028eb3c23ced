"""``SearchController``: turns the search box, quick filters and facets into what the table shows.

Every input becomes one core :class:`~ora_desktop.core.operations.search.SearchRequest` (facet
ticks and quick filters are query-language words, applied by the engine before ranking). Typing
is debounced (200 ms); each keystroke's request runs the engine once on a worker thread, and a
newer request cancels the older one (its answer is never applied). With words, the answer's row
keys go straight to the table; without, the table lists the filtered rows itself (a first
screenful at once). Facet counts for the same request follow, off the GUI thread (a search's once
its words rest), and are dropped when a newer request comes. The inputs, the counts shown and
how an edit shifts them are Qt-free state (:class:`~ora_desktop.views.search.SearchState`); this
controller runs the engine on the worker, cancels obsolete requests and forwards to that state.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import replace

from PySide6.QtCore import QObject, QTimer, Signal

from ...core import ListQuery, OraError, Store
from ...core.operations.search import (
    RANK,
    Cancelled,
    SearchAnswer,
    SearchRequest,
    count_answer_facets,
    listing_query,
    search_memories,
    tag_groups,
)
from ...core.search import parse_query
from ...views.filters import FilterState
from ...views.search import FacetCounts, SearchLoader, SearchState
from ...views.table import default_loader
from ..context import AppContext
from ..memories.model import MemoryTableModel
from .backend import search_everywhere
from .vectors_progress import needs_vectors

log = logging.getLogger("ora_desktop.gui")
DEBOUNCE_MS = 200
#: The note of a search by meaning answered by words because the person cancelled the build.
NOT_BUILT = "meaning index not built (cancelled): matching words instead — press Build to search by meaning"
#: A search's facet counts start this long after its hits are shown (a newer keystroke cancels
#: them first): each counts every match of the file (~0.5 s of a core at 1M).
FACETS_AFTER_MS = 250


class SearchController(QObject):
    terms_changed = Signal(object)  # tuple[str, ...]
    query_changed = Signal(object)  # the core ParsedQuery whose matches are highlighted
    facets_ready = Signal(object)  # FacetCounts
    note = Signal(str)
    everywhere_ready = Signal(object, str)  # list[EverywhereHit], note
    searching = Signal(object)  # True while a search or listing runs
    answered = Signal(object)  # the SearchAnswer applied to the table
    vectors_needed = Signal(object)  # Store: search by meaning must embed it first (VectorsProgress)
    #: Store whose build the person cancelled (words answer until they press Build), or None:
    #: nothing to say about the shown file's vectors (the strip's last message goes).
    vectors_declined = Signal(object)

    def __init__(self, ctx: AppContext, model: MemoryTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.model = model
        self.state = SearchState(facets_shown=self.facets_ready.emit)
        self.answer: SearchAnswer | None = None
        self.terms: tuple[str, ...] = ()
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.apply)
        self._cancel = threading.Event()
        self._search_task: asyncio.Task | None = None
        self._facet_task: asyncio.Task | None = None
        self._everywhere_task: asyncio.Task | None = None
        self._everywhere_asked: tuple[str, str] | None = None
        self._count_again = False  # count once more when the running count ends (an edit came)
        self._facet_for: tuple[Store, int] | None = None  # the store and request being counted
        self._counted_at = float("-inf")  # when the last count ended (time.monotonic())
        self._index_built: tuple[Store, float] | None = None  # the file whose index was built last, and when
        self._tag_task: asyncio.Task | None = None
        self._search_cleared = False  # the listing being loaded replaces a search's hits
        model.loaded.connect(self._after_load)
        ctx.store_changed.connect(self._written)
        ctx.store_forgotten.connect(self._written)

    # The state's inputs, as the search bar and saved searches read them.
    @property
    def text(self) -> str:
        return self.state.text

    @property
    def scope(self) -> str:
        return self.state.scope

    @property
    def mode(self) -> str:
        return self.state.mode

    @property
    def filters(self) -> FilterState:
        return self.state.filters

    @property
    def declined(self) -> set[str]:
        """Files whose vectors build the person cancelled: no search builds them again until
        :meth:`build_vectors` (their Build button); meanwhile words answer, with a note."""
        return self.state.declined

    @property
    def _generation(self) -> int:
        return self.state.generation

    # ----------------------------------------------------------------- inputs
    def set_text(self, text: str, immediate: bool = False) -> None:
        """The search box changed: search after a short pause (or now)."""
        self.state.text = text
        if immediate:
            self._debounce.stop()
            self.apply()
        else:
            self._debounce.start()

    def set_mode(self, mode: str) -> None:
        """Words (lexical), meaning (semantic) or both (hybrid); searches again."""
        self.state.mode = mode
        self.apply()

    def build_vectors(self) -> None:
        """The person asks for the shown file's meaning index (after a Cancel): build it, then search."""
        store = self.model.store
        if store is not None:
            self.declined.discard(str(store.path))
        self._drop_not_built()
        self.apply()

    def vectors_built(self) -> None:
        """The shown file's meaning index is built: the search runs again, by meaning."""
        self._drop_not_built()
        self.apply()

    def _drop_not_built(self) -> None:
        """The note that words answer for a cancelled meaning index goes as soon as it is untrue
        (Build pressed, or the build done), not when the next search answers."""
        answer = self.answer
        if answer is not None and NOT_BUILT in answer.notes:
            self.answer = replace(answer, notes=tuple(n for n in answer.notes if n != NOT_BUILT))
            self.note.emit("; ".join(n for n in self.answer.notes if n))

    def vectors_cancelled(self, store: Store) -> None:
        """The person cancelled ``store``'s build: later searches answer by words until they ask
        again (a search queued before the Cancel, a filter or a refresh must not restart it)."""
        self.declined.add(str(store.path))
        if store is self.model.store:
            self.apply()

    def _meaning_declined(self, store: Store | None) -> bool:
        """True when a search by meaning of ``store`` would need a build the person cancelled."""
        if self.mode == "lexical" or store is None or str(store.path) not in self.declined:
            return False
        if needs_vectors(store):
            return True
        self.declined.discard(str(store.path))  # built meanwhile (another window, the CLI)
        return False

    def set_scope(self, scope: str) -> None:
        self.state.scope = scope
        self.apply()

    def toggle_quick(self, name: str, on: bool) -> None:
        (self.filters.quick.add if on else self.filters.quick.discard)(name)
        self.apply()

    def toggle_facet(self, group: str, value: str, on: bool) -> None:
        self.filters.toggle_facet(group, value, on)
        self.apply()

    def clear(self) -> None:
        self.state.text = ""
        self.filters.clear()
        self.apply()

    def request(self) -> SearchRequest:
        """The current inputs as one core search request (sorted as the table is)."""
        query = self.model.query
        return self.state.request(query.order_by, query.descending)

    @property
    def full_text(self) -> str:
        """Everything searched for, as the query language (typed text, ticks, quick filters)."""
        return self.request().query_text()

    @property
    def is_searching(self) -> bool:
        return self.request().has_words

    # ----------------------------------------------------------------- applying
    def apply(self) -> None:
        """Show what the current inputs ask for in the table (or across all sites)."""
        self._cancel.set()  # the previous request stops at its next step; its answer is not applied
        self._cancel = threading.Event()
        for task in (self._search_task, self._facet_task):
            if task is not None and not task.done():
                task.cancel()
        store = self.model.store
        request = self.request()
        if self.state.ask(store, request):  # a new question (not a refresh): its best row is shown selected
            self.model.select_top = self.state.selects_top(store)
        declined = self._meaning_declined(store)
        self.vectors_declined.emit(store if declined else None)
        if declined:
            request = request.with_(mode="lexical")  # words answer until the person presses Build
        parsed = parse_query(request.query_text())
        self.terms = parsed.terms if self.text.strip() else ()
        self.terms_changed.emit(self.terms)
        self.query_changed.emit(parsed)
        self.model.highlight_terms = self.terms
        if self.state.across_sites:
            self._search_everywhere(request)
        else:
            self._everywhere_asked = None
        if not request.has_words:
            self._search_cleared = self._was_searching()
            self.answer = None
            if self.model.query.order_by == RANK:
                order, descending = self.state.sort_before_search
                request = request.with_(sort=order, descending=descending)
            query = listing_query(store, request, parsed) if store is not None else ListQuery()
            self.model.set_query(query, default_loader)
            return
        if self.model.query.order_by != RANK and not self._was_searching():
            self.state.sort_before_search = (self.model.query.order_by, self.model.query.descending)
            request = request.with_(sort=RANK, descending=True)
        if request.mode != "lexical" and store is not None and needs_vectors(store):
            self.vectors_needed.emit(store)  # built with progress and Cancel, then apply() again
            return
        if store is None:
            self.note.emit("")
            return
        self.searching.emit(True)
        self._search_task = asyncio.ensure_future(
            self._search(self._generation, store, request, self._cancel), loop=self.ctx.loop)

    def index_ready(self, store: Store, building_since: float) -> None:
        """``store``'s search index, building since ``building_since`` (``time.monotonic()``), is
        built: a search runs again on it, and a listing's facets counted since the build began get
        their tag groups (tag counts read the index: counted during the build, they had none)."""
        if store is not self.model.store:
            return
        if self.is_searching:
            self.apply()
            return
        self._index_built = (store, time.monotonic())
        counting = self._facet_task is not None and not self._facet_task.done()
        if not counting and self._counted_at >= building_since:
            self._add_tag_groups(store)  # (a count running now adds them when it ends)

    def _add_tag_groups(self, store: Store) -> None:
        """Count the tag groups of the listing shown and add them to its counts (the others hold)."""
        if not self.state.holds(store) or self.state.shown is None:
            return
        generation, total = self.state.generation, self.state.shown[2].total
        query = parse_query(self.request().query_text())

        async def add() -> None:
            try:
                groups = await self.ctx.run(tag_groups, store, query, total)
            except OraError as exc:
                log.info("tag facets: %s", exc)
                return
            self.state.add_groups(store, generation, groups)

        self._tag_task = asyncio.ensure_future(add(), loop=self.ctx.loop)

    def _was_searching(self) -> bool:
        return isinstance(self.model.loader, SearchLoader)

    async def _search(self, generation: int, store: Store, request: SearchRequest, cancel: threading.Event) -> None:
        """One keystroke: one core call on a worker; applied only if no newer request came."""
        try:
            answer = await self.ctx.run(search_memories, store, request.with_(facets=False), cancel, False)
        except Cancelled:
            return
        except OraError as exc:
            if generation == self._generation:
                self.searching.emit(False)
                self.ctx.show_error(exc)
            return
        if generation != self._generation or store is not self.model.store:
            return  # a newer keystroke (or another file) owns the table now
        if request.mode != self.mode:  # a cancelled meaning index: words answered
            answer = replace(answer, notes=(NOT_BUILT, *answer.notes))
        self.answer = answer
        self.searching.emit(False)
        query = self.model.query.with_(order_by=request.sort, descending=request.descending)
        self.model.show_keys(answer.keys, query, SearchLoader(request))
        self.answered.emit(answer)

    def _after_load(self, count: int) -> None:
        store = self.model.store
        answer = self.answer if self._was_searching() else None
        # Across sites, that search owns the note line (files skipped, partial matches).
        owns_note = not self.state.across_sites
        if owns_note:
            notes = answer.notes if answer is not None else parse_query(self.full_text).warnings
            self.note.emit("; ".join(n for n in notes if n))
        if store is None or self._shift_facets(store):
            return
        if self.model.reordered and self._facets_hold(store):
            return  # a sort: the same rows in another order, the same counts
        if self.model.edited is not None and self._facet_task is not None and not self._facet_task.done():
            # An edit while the same list's count runs (it may or may not see the edit): count once
            # more after it, rather than a second count of every row at the same time.
            self._count_again = True
            return
        self._compute_facets(store, answer, count)

    def _facets_hold(self, store: Store) -> bool:
        """Whether the counts shown, or being counted, are of this store's current request."""
        if self._facet_task is not None and not self._facet_task.done():
            return self._facet_for == (store, self._generation)
        return self.state.holds(store)

    def _shift_facets(self, store: Store) -> bool:
        """After an edit repainted in place: move the shown counts by the edited rows
        (:meth:`SearchState.shift`); False when they must be counted again."""
        if self._facet_task is not None and not self._facet_task.done():
            return False  # a count is running: it may or may not have seen the edit
        return self.state.shift(store, self.model.edited)

    def _written(self, *_args: object) -> None:
        """A file was written (or replaced): no listing's counts can be trusted any more."""
        self.state.written()

    def _compute_facets(self, store: Store, answer: SearchAnswer | None, count: int) -> None:
        self._count_again = False
        if self._facet_task is not None and not self._facet_task.done():
            self._facet_task.cancel()
        cleared, self._search_cleared = self._search_cleared, False
        if answer is None:
            request = self.request()
            counted = self.state.listing_counts(store, request.query_text(), count) if cleared else None
            if counted is not None:
                self.state.show(store, self._generation, counted)
                return
            answer = SearchAnswer.listing(request, parse_query(request.query_text()), count)
        self._facet_for = (store, self._generation)
        self._facet_task = asyncio.ensure_future(
            self._facets(self._generation, store, answer, self._cancel), loop=self.ctx.loop)

    async def _facets(self, generation: int, store: Store, answer: SearchAnswer, cancel: threading.Event) -> None:
        writes = self.state.writes
        try:
            if answer.ranked:  # typing: count once the words rest, not for every keystroke's hits
                await asyncio.sleep(FACETS_AFTER_MS / 1000)
            if answer.ranked and not self._lists(answer):
                # The rows were read again after a write (a supersede hid one, an edit added one):
                # the answer describes the rows before it, so the search runs again to count these.
                answer = await self.ctx.run(search_memories, store, answer.request.with_(facets=False), cancel, False)
                if generation == self._generation:
                    self.answer = answer
            began = time.monotonic()
            counted: SearchAnswer = await self.ctx.run(count_answer_facets, store, answer, cancel)
            self._counted_at = time.monotonic()
        except Cancelled:
            return
        except OraError as exc:
            log.info("facets: %s", exc)
            self._count_after(generation, store)
            return
        if generation != self._generation or store is not self.model.store:
            return
        if answer.ranked and counted.notes != answer.notes and self.scope != "all":
            self.note.emit("; ".join(n for n in counted.notes if n))  # the total is known now
        groups = counted.facets or {}
        total = counted.total if counted.total is not None else sum(groups.get("type", {}).values())
        # A listing's counts are kept while no write comes (clearing a search shows them at once).
        self.state.show(store, generation, FacetCounts(total, groups),
                        listing=None if answer.ranked else answer.request.query_text(), writes=writes)
        built = self._index_built
        if not answer.ranked and built is not None and built[0] is store and built[1] >= began:
            self._add_tag_groups(store)  # the index was built while this count ran
        self._count_after(generation, store)

    def _lists(self, answer: SearchAnswer) -> bool:
        """Whether the table lists exactly ``answer``'s rows (in any order)."""
        keys = self.model.keys
        return len(keys) == len(answer.keys) and (keys == answer.keys or set(keys) == set(answer.keys))

    def _count_after(self, generation: int, store: Store) -> None:
        """Count again now that the running count ended, if an edit came meanwhile."""
        if self._count_again and generation == self._generation and store is self.model.store:
            self._facet_task = None  # this one is ending: not to be cancelled by the next
            self._compute_facets(store, self.answer if self._was_searching() else None, self.model.rowCount())

    def _search_everywhere(self, request: SearchRequest) -> None:
        asked = (request.query_text(), request.mode)
        if asked == self._everywhere_asked:
            return  # the same search again (the box's debounce after a scope change): keep the list and its selection
        self._everywhere_asked = asked
        if self._everywhere_task is not None and not self._everywhere_task.done():
            self._everywhere_task.cancel()
        text = self.text

        async def run() -> None:
            hits, note = await self.ctx.run(search_everywhere, self.ctx.home, request)
            if text == self.text:
                self.everywhere_ready.emit(hits, note)
                self.note.emit(note)

        self._everywhere_task = asyncio.ensure_future(run(), loop=self.ctx.loop)
