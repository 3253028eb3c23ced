"""Search one memory file: parse, refresh the sidecar, rank, snippet (or fall back to LIKE)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .query import ParsedQuery
from .ranking import DEFAULT_WEIGHTS, Weights
from .results import SearchResult, Span

if TYPE_CHECKING:
    from ..store import Store

ProgressFn = Callable[[int, int], None]


def search(target: Store | str | Path, query: str | ParsedQuery, limit: int = 50, *,
           weights: Weights = DEFAULT_WEIGHTS, wait: bool = True, progress: ProgressFn | None = None,
           cancel: object = None, fallback: bool | None = None, snippet_chars: int = 160) -> SearchResult:
    """Search one file. Never raises for what the user typed (see :mod:`.query`); a file that
    cannot be opened raises the core ``OraError`` naming it.

    * ``target``: a path or an open ``Store`` (its path is used; the file is only read).
    * ``limit``: at most this many hits, best first (blended score, :mod:`.ranking`).
    * ``wait``: when the index is not built yet, build it now (``progress(done, total)`` is
      called, ``cancel`` — an Event or a callable — stops it); with ``wait=False`` the LIKE
      fallback answers meanwhile and ``result.note`` says so.
    * ``fallback``: True forces the LIKE scan (also ``ORA_DESKTOP_NO_FTS5=1``).

    Superseded memories are hidden unless the query says ``is:superseded``/``is:any``; expired
    ones are returned with ``hit.expired`` set.
    """
    raise NotImplementedError


def tag_facets(target: Store | str | Path, query: str | ParsedQuery | None = None,
               limit: int = 50) -> dict[str, dict[str, int]]:
    """Tag counts: kind -> value -> number of memories, the ``limit`` most frequent per kind.

    With ``query``, only memories matching it are counted; superseded ones are not counted.
    """
    raise NotImplementedError


def match_spans(text: str, query: str | ParsedQuery) -> list[Span]:
    """[start, end) offsets in ``text`` of the query's positive terms, matched exactly as the
    index matches them (stemmed, prefixes, phrases)."""
    raise NotImplementedError
