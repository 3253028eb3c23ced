"""One search over several files (every agent of a site, or every site), merged by RRF."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ..errors import OraError
from ..home import AgentFile, OraHome
from .engine import as_partial, search
from .hits import location
from .query import ParsedQuery, parse_query
from .ranking import fused_order
from .results import Hit, SearchResult
from .tags import extract_tags
from .words import any_word_query


def search_many(targets: OraHome | Iterable[str | Path | AgentFile] | None, query: str | ParsedQuery,
                site: str | None = None, agent: str | None = None, limit: int = 50,
                any_word: bool = True, **options: object) -> SearchResult:
    """Search many files and merge their rankings with reciprocal rank fusion (k=60).

    ``targets`` is an ``OraHome`` (``None`` means the default one), or paths/``AgentFile``s.
    ``site``/``agent`` (and ``site:``/``agent:`` in the query) narrow the files searched.
    Every hit carries ``site``, ``agent`` and ``path``; ``hit.score`` is the fused score and
    ``hit.file_score`` the file's own blended score. A file that cannot be searched adds a
    warning and the others are still searched. ``options`` go to :func:`search`. When no file
    holds every word, the best any-word matches answer, marked partial (see :func:`search`).
    """
    started = time.perf_counter()
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    files = _files(targets, site, agent, parsed)
    per_file = dict(options)
    per_file.pop("limit", None)
    warnings = list(parsed.warnings)
    rankings: list[list[tuple[str, str]]] = []
    hits: dict[tuple[str, str], Hit] = {}
    fell_back, notes = False, []
    for path in files:
        try:
            result = search(path, parsed, limit, any_word=False, **per_file)  # type: ignore[arg-type]
        except OraError as exc:
            warnings.append(f"{path}: not searched ({exc})")
            continue
        fell_back = fell_back or result.fallback
        if result.note and result.note not in notes:
            notes.append(result.note)
        warnings.extend(w for w in result.warnings if w not in warnings)
        keys = []
        for hit in result.hits:
            key = (str(path), hit.memory.id)
            hits[key] = hit
            keys.append(key)
        rankings.append(keys)
    merged = []
    for key, score in fused_order(rankings)[:limit]:
        hit = hits[key]
        merged.append(replace(hit, score=score, file_score=hit.score))
    merged.sort(key=lambda h: (-h.score, -(h.file_score or 0.0)))
    facets: dict[str, dict[str, int]] = {}
    for hit in merged:
        for kind, value in extract_tags(hit.memory.content):
            facets.setdefault(kind, {})[value] = facets.get(kind, {}).get(value, 0) + 1
    result = SearchResult(
        query=parsed.text, hits=merged, terms=parsed.terms, fallback=fell_back, note=" ".join(notes),
        warnings=tuple(warnings), facets=facets, elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )
    loose = any_word_query(parsed) if any_word and not merged else None
    if loose is None:
        return result
    return as_partial(parsed, loose, search_many(files, loose, limit=limit, any_word=False, **options))


def _files(targets: OraHome | Iterable[str | Path | AgentFile] | None, site: str | None, agent: str | None,
           parsed: ParsedQuery) -> list[Path]:
    """The files to search, narrowed by ``site``/``agent`` and the query's site:/agent:."""
    sites = {site} if site else set(parsed.sites)
    agents = {agent} if agent else set(parsed.agents)
    if targets is None or isinstance(targets, OraHome):
        home = targets or OraHome()
        chosen = [a for a in home.agents()
                  if (not sites or a.site in sites) and (not agents or a.agent in agents)]
        return [a.path for a in chosen]
    out = []
    for target in targets:
        path = Path(getattr(target, "path", target))
        file_site, file_agent = location(path)
        if (sites and file_site not in sites) or (agents and file_agent not in agents):
            continue
        out.append(path)
    return out
