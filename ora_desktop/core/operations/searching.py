"""Search one file in the mode it suits: by words, by meaning, or both.

The one place that decides the mode for a single file: the library's ``Store.search``, the
export's ``query=`` and the MCP ``search`` tool all call :func:`search_file`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..search import search
from ..search.background import index_soon
from ..search.semantic import choose_mode, search_by_meaning

if TYPE_CHECKING:
    from ..search.results import SearchResult
    from ..store import Store


def search_file(store: Store, query: Any, limit: int = 50, *, mode: str | None = None, **kw: Any) -> SearchResult:
    """Search ``store``: ``mode`` ``"lexical"`` (:func:`ora_desktop.core.search.search`),
    ``"semantic"`` or ``"hybrid"`` (:mod:`ora_desktop.core.search.semantic`); by default
    hybrid once vectors exist, else lexical.

    Unless ``wait`` is given, a lexical search of a file whose index is missing (or being built)
    waits at most :data:`~ora_desktop.core.search.background.FIRST_ANSWER_SECONDS` for the words
    part of a build that goes on in the background, and otherwise answers from a plain scan,
    its note saying so (:func:`~ora_desktop.core.search.background.index_soon`)."""
    chosen = choose_mode(store, mode)
    if chosen == "lexical":
        if kw.get("wait") is None:  # a never-indexed file: answer within seconds, build meanwhile
            kw["wait"] = index_soon(store.path, progress=kw.get("progress"))
        return search(store, query, limit, **kw)
    return search_by_meaning(store, query, limit, mode=chosen, **kw)
