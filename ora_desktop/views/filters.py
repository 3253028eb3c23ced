"""Quick filters and facet choices, turned into one core search request (no Qt, no SQL here:
the request turns them into query-language words, see :mod:`ora_desktop.core.operations.search`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.operations.search import QUICK_FILTERS as QUICK_FILTERS  # name -> (label, tooltip, words)
from ..core.operations.search import RANK, SearchRequest


@dataclass
class FilterState:
    """What the person picked: quick filters and facet values (OR within a group; tags AND)."""

    quick: set[str] = field(default_factory=set)
    facets: dict[str, set[str]] = field(default_factory=dict)

    def clear(self) -> None:
        self.quick.clear()
        self.facets.clear()

    def toggle_facet(self, group: str, value: str, on: bool) -> None:
        values = self.facets.setdefault(group, set())
        if on:
            values.add(value)
        else:
            values.discard(value)
        if not values:
            del self.facets[group]

    def request(self, text: str = "", sort: str = RANK, descending: bool = True, mode: str = "lexical",
                scope: str = "file") -> SearchRequest:
        """The typed ``text`` narrowed by these choices, as one search request."""
        ticks = tuple((group, tuple(sorted(values))) for group, values in sorted(self.facets.items()))
        return SearchRequest(text=text, ticks=ticks, quick=tuple(sorted(self.quick)), sort=sort,
                             descending=descending, mode=mode, scope=scope, facets=False)
