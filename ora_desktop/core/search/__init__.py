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
"""

from .across import search_many
from .build import BuildTask, drop_index, ensure_index, index_state
from .engine import search, tag_facets
from .highlight import match_spans
from .query import ParsedQuery, Term, parse_query
from .ranking import DEFAULT_WEIGHTS, RRF_K, Weights, blend, rrf
from .results import MARK_CLOSE, MARK_OPEN, Hit, IndexState, SearchResult
from .sidecar import fts5_available, sidecar_path
from .tags import TAG_KINDS, extract_tags

__all__ = [
    "BuildTask", "DEFAULT_WEIGHTS", "Hit", "IndexState", "MARK_CLOSE", "MARK_OPEN", "ParsedQuery",
    "RRF_K", "SearchResult", "TAG_KINDS", "Term", "Weights", "blend", "drop_index", "ensure_index",
    "extract_tags", "fts5_available", "index_state", "match_spans", "parse_query", "rrf", "search",
    "search_many", "sidecar_path", "tag_facets",
]
