"""One search over several files (every agent of a site, or every site), merged by RRF."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..home import AgentFile, OraHome
from .query import ParsedQuery
from .results import SearchResult


def search_many(targets: OraHome | Iterable[str | Path | AgentFile] | None, query: str | ParsedQuery,
                site: str | None = None, agent: str | None = None, limit: int = 50,
                **options: object) -> SearchResult:
    """Search many files and merge their rankings with reciprocal rank fusion (k=60).

    ``targets`` is an ``OraHome`` (``None`` means the default one), or paths/``AgentFile``s.
    ``site``/``agent`` (and ``site:``/``agent:`` in the query) narrow the files searched.
    Every hit carries ``site``, ``agent`` and ``path``; ``hit.score`` is the fused score and
    ``hit.file_score`` the file's own blended score. A file that cannot be searched adds a
    warning and the others are still searched. ``options`` go to :func:`search`.
    """
    raise NotImplementedError
