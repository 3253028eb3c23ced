"""Search by meaning: semantic (vectors alone) and hybrid (vectors fused with the full-text
ranking), with the query language's filters in both.

* **semantic** — cosine similarity of the query's words (filters removed) with every memory's
  vector, an exact scan of the in-memory int8 matrix (:meth:`.vectors.VectorIndex.nearest`).
  The best rows (2x, then 16x the number wanted) are checked against the filters in SQL; when
  too few pass, the vectors of every memory that passes the filters are scanned instead.
* **hybrid** — weighted reciprocal rank fusion, the seed's ``hybrid_alpha`` applied to ranks
  (BM25 and cosine are not comparable scales)::

      score(m) = alpha / (K + rank_semantic(m)) + (1 - alpha) / (K + rank_lexical(m))

  with ``K = 60`` and ``alpha = 0.5`` by default (a memory absent from one list gets nothing
  from it). A lexical hit whose text holds the whole query as written (case and spacing
  aside) is an exact match: exact matches come first, in their lexical order. Each side gives
  its best :func:`hybrid_pool` candidates; the vector scan runs beside the word ranking.

:func:`ensure_vectors` builds or refreshes the vector sidecar (:mod:`.vectors`) after the FTS
index, with progress and cancel.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..connection import translate
from ..errors import OraError
from ..records import Memory, row_to_memory
from ..schema import MEMORY_COLUMNS, sniff_file
from .build import ensure_index
from .engine import path_of
from .engine import search as lexical_search
from .filters import filter_sql, pins_on
from .highlight import fts_spans_many, match_spans
from .hits import location, make_hit
from .index import get_index
from .query import ParsedQuery, parse_query
from .results import Hit, SearchResult, Span
from .sidecar import fts5_available
from .words import any_word_query

if TYPE_CHECKING:
    from ..embeddings import Provider
    from .vectors import VectorIndex

ProgressFn = Callable[[int, int], None]
MODES = ("lexical", "semantic", "hybrid")
HYBRID_ALPHA = 0.5
#: The meaning side's weight when no memory holds every word of the query: the words' side then
#: ranks memories holding any one of them, weak evidence that RRF's flat ranks would let outvote
#: the meaning's order (paraphrase recall@5 0.38 at 0.5, 0.45 at 0.9, the meaning's own 0.50 at
#: 1.0; bench_meaning_quality). So those memories only follow the meaning's candidates.
PARTIAL_ALPHA = 1.0
HYBRID_K = 60
POOL_MIN = 100
#: Hybrid fuses each side's best ``4 x limit`` candidates, but never more than this or the limit
#: (whichever is larger): past it a candidate's RRF share is below 1/(2 x (60 + that)), and
#: at the window's limit of 1,000 the words' side no longer ranks and reads 4,000 rows.
HYBRID_POOL = 200
#: Cosine below which a memory is not "about" the query at all (measured on the labelled set of
#: tests/benchmarks/bench_meaning.py: unrelated pairs of the bundled model sit below 0.15).
MIN_SIMILARITY = 0.15


class VectorsUnavailable(OraError):
    """Search by meaning is not possible here (no FTS5 to track changes, or cancelled)."""


def has_vectors(target: Any, provider: Provider | None = None) -> bool:
    """Whether vectors made by ``provider`` (default: the configured model) exist for this file."""
    from .vectors import get_vectors

    return get_vectors(path_of(target), provider).exists()


def ensure_vectors(target: Any, progress: ProgressFn | None = None, cancel: object = None,
                   provider: Provider | None = None) -> VectorIndex:
    """The file's vectors, built or brought up to date (the FTS index first, as it tracks changes).

    ``progress(done, total)`` counts the memories embedded of all the index holds (a resumed
    build starts from what an earlier one kept, the total unchanged); ``cancel`` (an Event or a callable)
    stops between batches, keeping what was embedded. Raises :class:`VectorsUnavailable`.
    """
    path = path_of(target)
    sniff_file(path)
    if not fts5_available():
        raise VectorsUnavailable(f"{path}: search by meaning needs SQLite's FTS5, which this Python lacks")
    index = get_index(path)
    if index.usable()[0]:
        index.refresh()  # cheap when the file has not moved
    else:
        state = ensure_index(path, cancel=cancel)
        if not state.built:
            raise VectorsUnavailable(f"{path}: the search index is not built ({state.reason})")
    from .vectors import get_vectors

    vectors = get_vectors(path, provider)
    try:
        done = vectors.refresh(index.sidecar, progress, cancel)
    except sqlite3.Error as exc:
        raise translate(vectors.sidecar, exc) from exc
    if not done:
        raise VectorsUnavailable(f"{path}: building the vectors was cancelled")
    return vectors


def query_text(parsed: ParsedQuery) -> str:
    """The words a query means (filters and exclusions left out)."""
    return " ".join(t.text for group in parsed.groups for t in group)


def search_by_meaning(target: Any, query: str | ParsedQuery, limit: int = 50, *, mode: str = "hybrid",
                      progress: ProgressFn | None = None, cancel: object = None, provider: Provider | None = None,
                      alpha: float = HYBRID_ALPHA, snippet_chars: int = 160,
                      min_similarity: float = MIN_SIMILARITY, snippets: bool = True,
                      known: Mapping[str, Memory] | None = None) -> SearchResult:
    """Semantic or hybrid search of one file (see the module doc); filters apply in both modes.
    ``min_similarity``: memories less like the query than this are not found by meaning.
    ``snippets=False``: hits without snippets or spans (a caller that reads only the memories).
    ``known``: memories the caller read already (by id), used as they are rather than read again
    (one may hold megabytes)."""
    if mode not in ("semantic", "hybrid"):
        raise OraError(f"search mode {mode!r} is not one of {', '.join(MODES)}")
    started = time.perf_counter()
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    path = path_of(target)
    limit = max(0, min(int(limit), 1000))
    site, agent = location(path)
    if parsed.is_empty or limit == 0 or (parsed.sites and site not in parsed.sites) or (
            parsed.agents and agent not in parsed.agents):
        return SearchResult(query=parsed.text, hits=[], terms=parsed.terms, warnings=parsed.warnings)
    vectors = ensure_vectors(path, progress, cancel, provider)
    text = query_text(parsed)
    if mode == "semantic" and not text:  # filters only: the lexical engine lists them
        return lexical_search(path, parsed, limit, snippet_chars=snippet_chars)
    warnings = list(parsed.warnings)
    note = ""
    lexical: list[Hit] = []
    matched = parsed  # what the lexical hits matched (their any-word form when no memory holds every word)
    if mode == "semantic":
        semantic = _semantic_ids(path, vectors, parsed, text, limit, floor=min_similarity) if text else []
        ranked = [(mid, cos, "semantic") for mid, cos in semantic[:limit]]
    else:
        pool = hybrid_pool(limit)
        # The vector scan runs on one core while SQLite ranks the words on the other (both
        # release the GIL): the hybrid costs about the slower of the two, not their sum.
        scan = (_background().submit(_semantic_ids, path, vectors, parsed, text, pool, 1, min_similarity)
                if text else None)
        try:
            result = lexical_search(path, parsed, pool, snippets=False, facets=False)
        finally:
            semantic = scan.result() if scan is not None else []
        lexical, note = result.hits, result.note
        weight = alpha
        if result.partial:
            matched = any_word_query(parsed) or parsed
            weight = max(alpha, PARTIAL_ALPHA)
        warnings.extend(w for w in result.warnings if w not in warnings)
        ranked = fuse(lexical, semantic, parsed, weight)[:limit]
    hits = _hits(path, parsed, matched, ranked, {h.memory.id: h for h in lexical},
                 snippet_chars if snippets else None, known or {})
    return SearchResult(query=parsed.text, hits=hits, terms=parsed.terms, warnings=tuple(warnings), note=note,
                        elapsed_ms=(time.perf_counter() - started) * 1000.0)


def hybrid_pool(limit: int) -> int:
    """How many candidates of each side hybrid fuses for ``limit`` hits: at least the limit, so
    the fused list is as long as before (and the total said is the same)."""
    return max(POOL_MIN, min(limit * 4, max(limit, HYBRID_POOL)))


def exact_matches(lexical: list[Hit], parsed: ParsedQuery) -> list[str]:
    """Ids of the lexical hits whose text holds the query's words as written (case and spacing
    aside), in their lexical order: hybrid keeps these first. (A search that stops at the first
    occurrence: a 10 MB memory is not lowered and split whole.)"""
    words = query_text(parsed).split()
    if not words:
        return []
    phrase = re.compile(r"\s+".join(map(re.escape, words)), re.IGNORECASE)
    return [h.memory.id for h in lexical if phrase.search(h.memory.content)]


def fuse(lexical: list[Hit], semantic: list[tuple[str, float]], parsed: ParsedQuery,
         alpha: float = HYBRID_ALPHA) -> list[tuple[str, float, str]]:
    """(id, hybrid score, source) best first: weighted RRF, exact lexical matches first."""
    scores: dict[str, float] = {}
    for rank, hit in enumerate(lexical):
        scores[hit.memory.id] = scores.get(hit.memory.id, 0.0) + (1 - alpha) / (HYBRID_K + rank + 1)
    for rank, (mid, _) in enumerate(semantic):
        scores[mid] = scores.get(mid, 0.0) + alpha / (HYBRID_K + rank + 1)
    exact = exact_matches(lexical, parsed)
    lexical_ids = {h.memory.id for h in lexical}
    first = [(mid, scores[mid], "keyword") for mid in exact]
    rest = sorted(((mid, s, "keyword" if mid in lexical_ids else "semantic")
                   for mid, s in scores.items() if mid not in set(exact)), key=lambda item: -item[1])
    return first + rest


def _semantic_ids(path: Path, vectors: VectorIndex, parsed: ParsedQuery, text: str,
                  wanted: int, threads: int = 0, floor: float = MIN_SIMILARITY) -> list[tuple[str, float]]:
    """(id, cosine) of the memories nearest ``text`` that pass the query's filters, best first.

    Every row's cosine is computed once (:meth:`VectorIndex.cosines`, an exact scan). Filters
    the kept columns can test (:mod:`.vecfilters`) pick the best passing rows at once; else the best
    rows are checked against the filters, twice the number wanted, then 16 times; when still
    too few pass, every memory that passes them is listed (one SQL query) and the best of
    those taken — three steps at most, however rare the filter.
    """
    _, mids = vectors.snapshot()
    if not len(mids):
        return []
    from .vecfilters import filter_columns
    from .vectors import best

    query = vectors.provider.embed([text])[0]
    index = get_index(path)
    # Only the default hiding of superseded memories (rare ones): the pool below checks it in SQL.
    mask = filter_columns(vectors).mask(path, vectors, parsed) if parsed.has_filters else None
    cosines = vectors.cosines(query, threads)  # one scan; each step picks from it
    if mask is not None and len(mask) == len(cosines):  # the filters, tested beside the vectors
        rows, scores = best(cosines, wanted, mask.nonzero()[0])
        return _similar(mids, rows, scores, floor)[:wanted]
    for pool in (2 * max(wanted, POOL_MIN), 16 * max(wanted, POOL_MIN)):
        rows, scores = best(cosines, pool)
        candidates = _similar(mids, rows, scores, floor)
        passing = _passing(index, parsed, [mid for mid, _ in candidates])
        found = [(mid, cos) for mid, cos in candidates if mid in passing]
        if len(found) >= wanted or len(rows) >= len(mids) or (len(scores) and scores[-1] < floor):
            return found[:wanted]
    rows, scores = best(cosines, wanted, vectors.rows_of(_passing(index, parsed, None)))
    return _similar(mids, rows, scores, floor)[:wanted]


def _similar(mids: list[str | None], rows: Any, scores: Any, floor: float = MIN_SIMILARITY) -> list[tuple[str, float]]:
    """(id, cosine) of the rows at or above ``floor``, in order."""
    return [(mids[i], float(c)) for i, c in zip(rows.tolist(), scores.tolist(), strict=True)
            if c >= floor and i < len(mids) and mids[i] is not None]


def _passing(index: Any, parsed: ParsedQuery, ids: list[str] | None) -> set[str]:
    """Those of ``ids`` (None: of every memory) that pass the query's field filters (superseded
    hidden unless asked)."""
    if ids is not None and not ids:
        return set()
    with index.lock:
        conn = index.connection()
        where, params = filter_sql(parsed, index.columns, pins=pins_on(conn, parsed))
        if parsed.excluded:
            where += (" AND NOT EXISTS (SELECT 1 FROM docs hidden JOIN fts ON fts.rowid = hidden.fid "
                      "WHERE hidden.mid = id AND fts MATCH ?)")
            params = [*params, " OR ".join(t.fts() for t in parsed.excluded)]
        if ids is None:
            rows = conn.execute(f"SELECT id FROM src.memories WHERE {where}", params).fetchall()
        else:
            rows = conn.execute(f"SELECT id FROM src.memories WHERE id IN (SELECT value FROM json_each(?)) "
                                f"AND {where}", [json.dumps(ids), *params]).fetchall()
    return {r[0] for r in rows}


def _hits(path: Path, parsed: ParsedQuery, matched: ParsedQuery, ranked: list[tuple[str, float, str]],
          lexical: dict[str, Hit], snippet_chars: int | None, known: Mapping[str, Memory]) -> list[Hit]:
    """Hits for the ``ranked`` ids: lexical ones from their hit (spans of ``matched``), the others
    read now (spans of ``parsed``); spans are computed for these rows only, in one statement each
    (none when ``snippet_chars`` is None)."""
    index = get_index(path)
    need = [mid for mid, _, _ in ranked if mid not in lexical and mid not in known]
    rows: dict[str, Any] = {mid: known[mid] for mid, _, _ in ranked if mid not in lexical and mid in known}
    if need:
        with index.lock:
            conn = index.connection()
            cols = ", ".join(c if c in index.columns else f"NULL AS {c}" for c in MEMORY_COLUMNS)
            for row in conn.execute(f"SELECT rowid, {cols} FROM src.memories WHERE id IN "
                                    "(SELECT value FROM json_each(?))", (json.dumps(need),)):
                memory = row_to_memory(row)
                rows[memory.id] = memory
    where = location(path)
    chosen = [(score, source, lexical.get(mid), lexical[mid].memory if mid in lexical else rows[mid])
              for mid, score, source in ranked if mid in lexical or mid in rows]
    if snippet_chars is None:
        return [Hit(memory=m, score=score, snippet="", bm25=None if old is None else old.bm25,
                    expired=m.is_expired(), superseded=m.is_superseded, path=path, site=where[0], agent=where[1],
                    source=source) for score, source, old, m in chosen]
    by_words = iter(_spans([m.content for _, _, old, m in chosen if old is not None], matched))
    by_meaning = iter(_spans([m.content for _, _, old, m in chosen if old is None], parsed))
    return [make_hit(memory, score, next(by_words) if old is not None else next(by_meaning),
                     None if old is None else old.bm25, path, snippet_chars, source, where)
            for score, source, old, memory in chosen]


def _spans(texts: list[str], parsed: ParsedQuery) -> list[list[Span]]:
    """Where ``parsed``'s words occur in each text (one statement for all; see :mod:`.highlight`)."""
    if not parsed.groups:
        return [[] for _ in texts]
    found = fts_spans_many(texts, parsed)
    if found is None:
        return [match_spans(text, parsed) for text in texts]
    return found


_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _background() -> ThreadPoolExecutor:
    """Threads for the vector half of hybrid searches (one per search running at once)."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ora-meaning")
        return _executor


def choose_mode(target: Any, mode: str | None, provider: Provider | None = None) -> str:
    """``mode`` checked; ``None`` means hybrid when vectors exist, else lexical."""
    if mode is None:
        try:
            return "hybrid" if fts5_available() and has_vectors(target, provider) else "lexical"
        except OraError:  # e.g. a config naming a provider that cannot load: words still work
            return "lexical"
    if mode not in MODES:
        raise OraError(f"search mode {mode!r} is not one of {', '.join(MODES)}")
    return mode
