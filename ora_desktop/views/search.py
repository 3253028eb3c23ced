"""``SearchState``: what the person asks the list for, and the facet counts that answer it.

The inputs (typed text, quick filters and facet ticks, mode, scope) become one core
:class:`~ora_desktop.core.operations.search.SearchRequest`; its filters travel as query-language
words, parsed and rendered as SQL only in core. The state tells a new question (the list then
selects its top row) from the same one asked again (a refresh keeps the selection), keeps the
facet counts shown and what they describe, shifts them by an edit's old and new values
(:func:`~ora_desktop.views.facets.shift_facets`) instead of counting every row again, and keeps
a listing's counts until any file is written (clearing a search brings them back at once).
The window's ``SearchController`` runs the engine on its worker and forwards to this; the counts
shown reach it through the ``facets_shown`` callback.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass

from ..core.listing import ListQuery
from ..core.operations.search import SearchRequest, search_memories
from ..core.store import Store
from .facets import shift_facets
from .filters import FilterState
from .table import Edited


@dataclass
class FacetCounts:
    """Counts for the facet panel: field -> value -> count (value labels as shown)."""

    total: int
    groups: dict[str, dict[str, int]]


class SearchLoader:
    """Row keys of one search request, for the table's reloads after a write or a sort
    (the keystroke itself hands the table its answer's keys: one engine call)."""

    def __init__(self, request: SearchRequest) -> None:
        self.request = request

    def __call__(self, store: Store, query: ListQuery) -> array:
        request = self.request.with_(sort=query.order_by, descending=query.descending, facets=False)
        return search_memories(store, request, wait=False).keys


class SearchState:
    """The search inputs and the facet counts shown for them (see the module docstring).
    ``store`` arguments are whatever identifies the file shown (the window passes its store)."""

    def __init__(self, facets_shown: Callable[[FacetCounts], None] | None = None) -> None:
        self.text = ""
        self.scope = "file"  # or "all"
        self.mode = "lexical"  # or "semantic", "hybrid" (search by meaning)
        self.filters = FilterState()
        #: Called with the counts to show, whenever they change (counted or shifted).
        self.facets_shown = facets_shown or (lambda _counts: None)
        #: The request being shown: a newer one makes every answer to an older one obsolete.
        self.generation = 0
        #: Files whose vectors build the person cancelled: words answer until they ask again.
        self.declined: set[str] = set()
        self.sort_before_search: tuple[str, bool] = ("created_at", True)
        self._asked: tuple = ()  # the inputs last applied: (store, query text, mode, scope)
        #: The counts last shown and the store and request they describe (None once outdated).
        self.shown: tuple[object, int, FacetCounts] | None = None
        #: Counts of listings (no words) by store and filters, kept until any file is written.
        self._listing_counts: dict[tuple[object, str], FacetCounts] = {}
        self.writes = 0  # writes seen (own or another program's), to date a count

    # ----------------------------------------------------------------- inputs
    def request(self, sort: str, descending: bool) -> SearchRequest:
        """The current inputs as one core search request, sorted as the list is."""
        return self.filters.request(self.text, sort=sort, descending=descending, mode=self.mode)

    @property
    def across_sites(self) -> bool:
        """Words searched across every site (that list, not the table, answers them)."""
        return self.scope == "all" and bool(self.text.strip())

    def ask(self, store: object, request: SearchRequest) -> bool:
        """A request is applied (answers to older ones become obsolete); returns whether it is a
        new question (other text, filters, mode, scope or file), not the same one asked again (a
        refresh, a sort)."""
        self.generation += 1
        asked = (store, request.query_text(), request.mode, self.scope)
        if asked == self._asked:
            return False
        self._asked = asked
        return True

    def selects_top(self, store: object) -> bool:
        """Whether a new question's answer selects the list's top row: when the table shows it
        (a file is shown, and the words are not searched across sites)."""
        return store is not None and not self.across_sites

    # ----------------------------------------------------------------- facet counts
    def written(self) -> None:
        """A file was written (or replaced): no listing's counts can be trusted any more."""
        self.writes += 1
        self._listing_counts.clear()

    def holds(self, store: object) -> bool:
        """Whether the counts shown are of ``store``'s current request."""
        return self.shown is not None and self.shown[0] is store and self.shown[1] == self.generation

    def show(self, store: object, generation: int, counts: FacetCounts, listing: str | None = None,
             writes: int | None = None) -> None:
        """Show ``counts`` of ``store``'s request ``generation``. ``listing``: the query text of
        a listing (no words) counted while ``writes`` files had been written; kept while no more are."""
        self.shown = (store, generation, counts)
        if listing is not None and writes == self.writes:
            self._listing_counts[(store, listing)] = counts
        self.facets_shown(counts)

    def add_groups(self, store: object, generation: int, groups: dict[str, dict[str, int]]) -> bool:
        """Groups counted later (the tag groups, once the index a count ran beside is built) join
        the counts shown, if those still describe ``store``'s request ``generation``."""
        if not groups or generation != self.generation or self.shown is None or self.shown[:2] != (store, generation):
            return False
        counts = self.shown[2]
        joined = FacetCounts(counts.total, {**counts.groups, **groups})
        for key, kept in list(self._listing_counts.items()):
            if kept is counts:
                self._listing_counts[key] = joined
        self.show(store, generation, joined)
        return True

    def listing_counts(self, store: object, listing: str, total: int) -> FacetCounts | None:
        """The counts of a listing kept from before a search, if they still describe ``total`` rows."""
        counts = self._listing_counts.get((store, listing))
        return counts if counts is not None and counts.total == total else None

    def shift(self, store: object, edited: Edited | None) -> bool:
        """After an edit repainted in place, move the shown counts by the edited rows' old and new
        values (a row added counts in, one removed out); False when they must be counted again."""
        if edited is None or not self.holds(store):
            return False
        assert self.shown is not None
        counts = self.shown[2]
        groups = shift_facets(counts.groups, *edited)
        if groups is None:
            return False
        before, after = edited
        total = counts.total
        if total is not None:
            total += sum(m is not None for m in after) - sum(m is not None for m in before)
        self.show(store, self.generation, FacetCounts(total, groups))
        return True
