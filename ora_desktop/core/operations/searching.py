"""Search one file in the mode it suits: by words, by meaning, or both.

The one place that decides the mode for a single file: the library's ``Store.search``, the
export's ``query=`` and the MCP ``search`` tool all call :func:`search_file`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..search import search
from ..search.semantic import choose_mode, search_by_meaning

if TYPE_CHECKING:
    from ..search.results import SearchResult
    from ..store import Store


def search_file(store: Store, query: Any, limit: int = 50, *, mode: str | None = None, **kw: Any) -> SearchResult:
    """Search ``store``: ``mode`` ``"lexical"`` (:func:`ora_desktop.core.search.search`),
    ``"semantic"`` or ``"hybrid"`` (:mod:`ora_desktop.core.search.semantic`); by default
    hybrid once vectors exist, else lexical."""
    chosen = choose_mode(store, mode)
    if chosen == "lexical":
        return search(store, query, limit, **kw)
    return search_by_meaning(store, query, limit, mode=chosen, **kw)
