"""Full-text search over memory files: a sidecar FTS5 index, tags, a query language,
hybrid ranking, cross-file search, and the LIKE fallback.

The index lives in a rebuildable sidecar under the user cache directory (ARCHITECTURE.md, contract 3);
the agent's file is only ever read. Entry points:

* :func:`search` — one file (path or open :class:`~ora_desktop.core.Store`);
* :func:`search_many` — every agent of a site, or every site under ``ORA_HOME``, merged by RRF;
* :func:`parse_query` — the search-box language (never raises);
* :func:`ensure_index` / :func:`index_state` / :class:`BuildTask` — build with progress and cancel;
* :func:`tag_facets` — tag counts (files, commands, functions, errors, languages, URLs);
* :func:`match_spans` — where a query's terms occur in any text (for highlighting).

Each name is imported on first use (PEP 562), so importing one module of this package (the query
language, say) does not load the engine, the index builder and their dependencies.
"""

from typing import TYPE_CHECKING

from .. import lazy as _lazy

#: Each public name and the module of this package that defines it.
_PUBLIC = {
    "across": ("search_many",),
    "build": ("BuildTask", "drop_index", "ensure_index", "index_state"),
    "engine": ("search", "tag_facets"),
    "highlight": ("match_spans",),
    "query": ("ParsedQuery", "Term", "parse_query"),
    "ranking": ("DEFAULT_WEIGHTS", "RRF_K", "Weights", "blend", "rrf"),
    "results": ("MARK_CLOSE", "MARK_OPEN", "Hit", "IndexState", "SearchResult"),
    "sidecar": ("fts5_available", "sidecar_path"),
    "tags": ("TAG_KINDS", "extract_tags"),
}
__all__, __getattr__, __dir__ = _lazy.exports(__name__, globals(), _PUBLIC)


if TYPE_CHECKING:  # the names, for type checkers and readers (nothing is imported at run time)
    from .across import search_many  # noqa: F401
    from .build import BuildTask, drop_index, ensure_index, index_state  # noqa: F401
    from .engine import search, tag_facets  # noqa: F401
    from .highlight import match_spans  # noqa: F401
    from .query import ParsedQuery, Term, parse_query  # noqa: F401
    from .ranking import DEFAULT_WEIGHTS, RRF_K, Weights, blend, rrf  # noqa: F401
    from .results import MARK_CLOSE, MARK_OPEN, Hit, IndexState, SearchResult  # noqa: F401
    from .sidecar import fts5_available, sidecar_path  # noqa: F401
    from .tags import TAG_KINDS, extract_tags  # noqa: F401
