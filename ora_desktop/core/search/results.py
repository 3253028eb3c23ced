"""What a search returns: hits with snippets and highlight spans, facets, and index state.

Snippet markers: :data:`MARK_OPEN` and :data:`MARK_CLOSE` (``[`` and ``]``) surround every
matched term in :attr:`Hit.snippet`. Content may itself hold brackets, so a GUI should
highlight from :attr:`Hit.snippet_spans` (offsets into :attr:`Hit.snippet_text`) or from
:attr:`Hit.spans` (offsets into the full ``memory.content``) rather than parse the markers;
:func:`ora_desktop.core.search.match_spans` finds the same spans in any other text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..records import Memory

MARK_OPEN = "["
MARK_CLOSE = "]"

Span = tuple[int, int]  # [start, end) character offsets


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    ``score`` is the blended score (higher is better; see :mod:`.ranking`) for a one-file
    search, or the reciprocal-rank-fusion score when several files were merged
    (``file_score`` then keeps the file's own blended score). ``bm25`` is SQLite's raw value
    (lower is better; ``None`` in fallback mode or for filter-only queries).
    """

    memory: Memory
    score: float
    snippet: str
    snippet_text: str = ""
    snippet_spans: tuple[Span, ...] = ()
    spans: tuple[Span, ...] = ()
    bm25: float | None = None
    file_score: float | None = None
    expired: bool = False
    superseded: bool = False
    #: Where the hit lives (always set; cross-file searches need it to say where).
    path: Path | None = None
    site: str | None = None
    agent: str | None = None
    #: "keyword" for a full-text match, "filter" for a filter-only listing, "neighbor" for a
    #: memory reached over related_to (context assembly), "like" in fallback mode.
    source: str = "keyword"

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def location(self) -> str:
        """``site/agent`` (or the file name when the file is not under ORA_HOME)."""
        if self.site and self.agent:
            return f"{self.site}/{self.agent}"
        return self.path.name if self.path else ""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits best first, the terms to highlight, and notes for the user.

    ``fallback`` is True when the LIKE scan answered (no FTS5, or the index is still being
    built and the caller chose not to wait); ``note`` then says why and that ranking is
    reduced. ``warnings`` list parts of the query that were ignored (unknown type, bad number…)
    and files that could not be searched. ``facets`` are tag counts over the returned hits:
    kind -> value -> count (use :func:`tag_facets` for counts over a whole file).
    """

    query: str
    hits: list[Hit]
    terms: tuple[str, ...] = ()
    fallback: bool = False
    note: str = ""
    warnings: tuple[str, ...] = ()
    facets: dict[str, dict[str, int]] = field(default_factory=dict)
    #: How many memories matched before the limit was applied, when known cheaply.
    total: int | None = None
    elapsed_ms: float = 0.0
    #: True when no memory held every word, so these are the best any-word matches
    #: (``note`` says so, naming the words).
    partial: bool = False

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self):
        return iter(self.hits)

    @property
    def memories(self) -> list[Memory]:
        return [hit.memory for hit in self.hits]


@dataclass(frozen=True, slots=True)
class IndexState:
    """The sidecar index of one database, as :func:`index_state` sees it without building."""

    path: Path
    sidecar: Path
    built: bool
    rows: int = 0
    stale: bool = False
    building: bool = False
    #: (done, total) memories while a build runs in this process, else None.
    progress: tuple[int, int] | None = None
    fts5: bool = True
    version: int | None = None
    reason: str = ""
    #: The text is searchable but tags are still being extracted (facets and tag: filters
    #: are incomplete until :func:`ensure_index` finishes).
    tags_pending: bool = False

    @property
    def fraction(self) -> float | None:
        if not self.progress or not self.progress[1]:
            return None
        return min(1.0, self.progress[0] / self.progress[1])
