"""Searching through ``core.search`` when it answers, else through a ``ListQuery`` (no Qt here).

Everything here runs on a worker thread (``ctx.run``). ``file_keys`` returns the rowids of the
hits of one file, best first, so the table model can show them like any other listing.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...core import ListQuery, Memory, OraError, OraHome, Store
from ...core import search as engine
from ...core.facets import age_facet
from ...core.search.semantic import search_by_meaning
from ...core.store import HEALTH_BUCKETS
from ...core.timefilter import AGE_BUCKETS, age_bucket

log = logging.getLogger("ora_desktop.gui")

SEARCH_LIMIT = 1000
TAG_FACETS_UP_TO = 50_000  # tag counts over a whole larger file take seconds: search first
RANK = "rank"  # the table's order while showing search hits best first


def terms_of(text: str) -> tuple[str, ...]:
    """The words to highlight for ``text`` (the query language's terms; never raises)."""
    return engine.parse_query(text).terms


@dataclass
class FileSearch:
    """One file's answer: hit rowids best first, words to highlight, a note, how many matched."""

    keys: array
    terms: tuple[str, ...] = ()
    note: str = ""
    total: int | None = None
    warnings: tuple[str, ...] = ()
    tags: dict[str, dict[str, int]] = field(default_factory=dict)
    engine: str = "full-text"


def file_keys(store: Store, text: str, base: ListQuery, limit: int = SEARCH_LIMIT, mode: str = "lexical") -> FileSearch:
    """Rowids of the memories of ``store`` matching ``text`` (the query language) within ``base``.

    Ranked by ``core.search`` when it answers; then ``base``'s filters (facets, quick filters)
    narrow the hits keeping their rank. A column sort (``base.order_by`` other than ``rank``)
    orders the hits by that column instead. (Without FTS5 the engine itself answers with ``LIKE``.)
    ``mode`` ``"semantic"`` or ``"hybrid"`` searches by meaning (vectors built on first use).
    """
    if mode in ("semantic", "hybrid"):
        result = search_by_meaning(store, text, limit, mode=mode)
    else:
        result = engine.search(store, text, limit=limit, wait=False)
    rowids = array("q", (h.memory.rowid for h in result.hits if h.memory.rowid is not None))
    ids = tuple(h.memory.id for h in result.hits)
    narrowed = _narrow(store, rowids, ids, base)
    return FileSearch(narrowed, tuple(result.terms), result.note, result.total, tuple(result.warnings),
                      dict(result.facets), "like" if result.fallback else ("full-text" if mode == "lexical" else mode))


def _narrow(store: Store, rowids: array, ids: tuple[str, ...], base: ListQuery) -> array:
    """Keep the hits that also pass ``base``'s filters: in rank order, or sorted by a column."""
    if not ids:
        return array("q")
    filtered = base.with_(ids=ids, limit=None, after=None, superseded="show" if base.superseded == "hide"
                          else base.superseded)
    if base.order_by != RANK:
        return store.row_keys(filtered)
    plain = ListQuery(ids=ids, limit=None, superseded=filtered.superseded)
    if filtered == plain:
        return rowids
    keep = set(store.row_keys(filtered.with_(order_by="rowid")))
    return array("q", (r for r in rowids if r in keep))


@dataclass
class FacetCounts:
    """Counts for the facet panel: field -> value -> count (value labels as shown)."""

    total: int
    groups: dict[str, dict[str, int]]


def facet_counts(store: Store, query: ListQuery, hits: Iterable[Memory] | None = None,
                 tags: dict[str, dict[str, int]] | None = None, text: str = "") -> FacetCounts:
    """Type, sync, importance, health-bucket, created-age and tag counts for what the table shows."""
    if hits is None:
        facets = store.facets(query.with_(order_by="created_at"))
        groups = {
            "type": {str(k): v for k, v in sorted(facets.types.items(), key=lambda kv: -kv[1])},
            "sync": dict(facets.sync_statuses),
            "importance": {str(k): v for k, v in sorted(facets.importance.items(), key=lambda kv: -(kv[0] or 0))},
            "health": {k: v for k, v in reversed(list(facets.health_buckets.items()))},
        }
        total = facets.total
        groups["created"] = {k: v for k, v in age_facet(store, query.with_(order_by="created_at")).items() if v}
    else:
        hits = list(hits)
        groups = {"type": {}, "sync": {}, "importance": {}, "health": {b: 0 for b in reversed(HEALTH_BUCKETS)}}
        for m in hits:
            _bump(groups["type"], str(m.type))
            _bump(groups["sync"], str(m.sync_status))
            _bump(groups["importance"], str(m.importance))
            if m.health_score is not None:
                _bump(groups["health"], HEALTH_BUCKETS[min(9, max(0, int(m.health_score * 10)))])
        groups["type"] = dict(sorted(groups["type"].items(), key=lambda kv: -kv[1]))
        groups["importance"] = dict(sorted(groups["importance"].items(),
                                           key=lambda kv: -int(kv[0]) if kv[0].lstrip("-").isdigit() else 0))
        groups["created"] = {}
        for m in hits:
            if (bucket := age_bucket(m.created_at)) is not None:
                _bump(groups["created"], bucket)
        groups["created"] = {label: groups["created"][label] for label, _, _ in AGE_BUCKETS
                             if label in groups["created"]}
        total = len(hits)
    if tags is None and total <= TAG_FACETS_UP_TO:
        tags = tag_counts(store, text)
    for kind, values in (tags or {}).items():
        groups[f"tag:{kind}"] = dict(sorted(values.items(), key=lambda kv: -kv[1])[:15])
    return FacetCounts(total, groups)


def tag_counts(store: Store, text: str = "") -> dict[str, dict[str, int]]:
    """Tag facets (kind -> value -> count) of the file, or of the hits of ``text``."""
    try:
        return engine.tag_facets(store, text or None, limit=15)
    except OraError as exc:
        log.info("tag facets of %s: %s", store.path, exc)
        return {}


def _bump(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


@dataclass(frozen=True)
class EverywhereHit:
    memory: Memory
    path: Path
    where: str
    score: float | None = None


def search_everywhere(home: OraHome, text: str, limit: int = 200) -> tuple[list[EverywhereHit], str]:
    """Search every agent of every site; each hit says where it lives. Returns (hits, note).

    Files that cannot be searched are named in the note (the engine reports them as warnings).
    """
    result = engine.search_many(home, text, limit=limit, wait=False)
    hits = [EverywhereHit(h.memory, Path(h.path), h.location, h.score) for h in result.hits if h.path]
    return hits, "; ".join(x for x in (result.note, *result.warnings) if x)
