"""Search one memory file: parse, refresh the sidecar, rank, snippet (or fall back to LIKE)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..connection import translate
from ..records import row_to_memory
from ..schema import MEMORY_COLUMNS, check_shape, sniff_file
from .build import ensure_index, finish_tags, index_state
from .cjk import candidates_sql
from .fallback import NOTE, fallback_hits
from .filters import filter_sql, pins_on
from .highlight import fts_spans_many
from .hits import location, make_hit
from .index import SearchIndex, get_index
from .query import ParsedQuery, parse_query
from .ranking import DEFAULT_WEIGHTS, Weights, relevance, score
from .results import Hit, SearchResult
from .sidecar import fts5_available
from .tags import TAG_KINDS, extract_tags
from .words import any_word_query

if TYPE_CHECKING:
    from ..store import Store

ProgressFn = Callable[[int, int], None]
Row = tuple[Any, ...]
MAX_LIMIT = 10000
POOL_MIN = 100
# Past this many candidates, filter inside one SQL join instead of growing the pool again.
POOL_MAX = 5000
#: How long a plain scan may take while the index is being built (wait=False).
SCAN_SECONDS = 1.0
STILL_INDEXING = ("still indexing: tags and Chinese, Japanese and Korean text are being extracted, so tag: "
                  "filters and CJK words may miss memories for now")


def path_of(target: Any) -> Path:
    """The database path of a ``Store``, an ``AgentFile`` or a path."""
    path = getattr(target, "path", target)
    return Path(path).expanduser()


def search(target: Store | str | Path, query: str | ParsedQuery, limit: int = 50, *,
           weights: Weights = DEFAULT_WEIGHTS, wait: bool = True, progress: ProgressFn | None = None,
           cancel: object = None, fallback: bool | None = None, snippet_chars: int = 160,
           any_word: bool = True, snippets: bool = True, facets: bool = True,
           exclude: Collection[str] = ()) -> SearchResult:
    """Search one file. Never raises for what the user typed (see :mod:`.query`); a file that
    cannot be opened raises the core ``OraError`` naming it.

    * ``target``: a path or an open ``Store`` (its path is used; the file is only read).
    * ``limit``: at most this many hits, best first (blended score, :mod:`.ranking`).
    * ``wait``: when the index is not built yet, build it now (``progress(done, total)`` is
      called, ``cancel`` — an Event or a callable — stops it); with ``wait=False`` the LIKE
      fallback answers meanwhile and ``result.note`` says so.
    * ``fallback``: True forces the LIKE scan (also ``ORA_DESKTOP_NO_FTS5=1``).
    * ``any_word``: when every word must match and no memory holds them all (a question such
      as "how should I store the auth token?"), answer with the best matches of any content
      word instead, ``result.partial`` set and ``result.note`` saying so.
    * ``exclude``: ids of memories the caller holds already: they are left out of the hits
      (and their rows are not read), so fewer than ``limit`` may come back.

    Superseded memories are hidden unless the query says ``is:superseded``/``is:any``; expired
    ones are returned with ``hit.expired`` set.
    """
    started = time.perf_counter()
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    path = path_of(target)
    try:
        limit = max(0, min(int(limit), MAX_LIMIT))
    except (TypeError, ValueError):
        limit = 50
    site, agent = location(path)
    warnings = list(parsed.warnings)
    empty = SearchResult(query=parsed.text, hits=[], terms=parsed.terms, warnings=tuple(warnings))
    sniff_file(path)
    if parsed.is_empty or limit == 0:
        return empty
    if (parsed.sites and site not in parsed.sites) or (parsed.agents and agent not in parsed.agents):
        return empty
    why = ""
    index: SearchIndex | None = None
    if fallback or not fts5_available():
        why = "forced" if fallback else "this SQLite has no FTS5"
    else:
        index, why = _ready_index(path, wait, progress, cancel)
    if index is None:
        check_shape(path)  # a file of the wrong shape is refused, naming it, rather than matching nothing
    try:
        if index is None:
            # While the index builds, the scan answers within a bound (the build goes on).
            building = not fallback and fts5_available() and not wait
            hits, extra = fallback_hits(path, parsed, limit, weights, snippet_chars,
                                        SCAN_SECONDS if building else None)
            hits = [h for h in hits if h.memory.id not in exclude] if exclude else hits
            total = None
            warnings.extend(extra)
            tag_counts = _facets_from_text(hits) if facets else {}
        else:
            with index.lock:
                tags_pending = not index.meta().get("tags_done", True)
            if tags_pending and (parsed.tags or parsed.not_tags or candidates_sql(parsed) is not None):
                if wait and finish_tags(index, progress, cancel):
                    tags_pending = False
                else:
                    warnings.append(STILL_INDEXING)
            with index.lock:
                hits, total, fids = _indexed_hits(index, parsed, limit, weights,
                                                  snippet_chars if snippets else None, exclude)
                tag_counts = ({} if not facets else _facets_from_text(hits) if tags_pending
                              else _facets_from_index(index, fids))
    except sqlite3.Error as exc:
        raise translate(path, exc) from exc
    result = SearchResult(
        query=parsed.text, hits=hits, terms=parsed.terms, fallback=index is None,
        note=NOTE.format(why=why) if index is None else "", warnings=tuple(warnings), facets=tag_counts,
        total=total, elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )
    loose = any_word_query(parsed) if any_word and not hits else None
    if loose is None:
        return result
    options = {"weights": weights, "wait": wait, "fallback": fallback, "snippet_chars": snippet_chars,
               "snippets": snippets, "facets": facets, "exclude": exclude}
    return as_partial(parsed, loose, search(path, loose, limit, any_word=False, **options))  # type: ignore[arg-type]


def as_partial(parsed: ParsedQuery, loose: ParsedQuery, result: SearchResult) -> SearchResult:
    """``result`` (of the any-word ``loose`` form of ``parsed``) marked as partial matches."""
    if not result.hits:
        return replace(result, query=parsed.text)
    words = ", ".join(loose.terms)
    note = f"no memory holds every word; showing partial matches: memories holding any of {words}"
    return replace(result, query=parsed.text, partial=True, total=None,
                   note=" ".join(filter(None, (note, result.note))))


def _ready_index(path: Path, wait: bool, progress: ProgressFn | None, cancel: object) -> tuple[SearchIndex | None, str]:
    """The index, up to date; or (None, why) when the fallback must answer."""
    index = get_index(path)
    ok, reason = index.usable()
    if ok:
        try:
            with index.lock:
                index.refresh(wait=wait)
            return index, ""
        except sqlite3.DatabaseError as exc:
            if "locked" in str(exc).lower() or "busy" in str(exc).lower():
                return index, ""  # a writer holds the file: answer from the index as it is
            index.close()  # a damaged sidecar: build it again below
    check_shape(path)  # before building: a file of the wrong shape is refused, naming it
    if not wait:
        return None, _building(index) or f"the index is {reason}"
    try:
        state = ensure_index(path, progress, cancel)
    except (OSError, sqlite3.Error) as exc:  # the cache folder cannot be written
        return None, f"the index cannot be written in {index.sidecar.parent} ({exc})"
    if not state.built:
        return None, "the index build was cancelled" if state.reason == "cancelled" else state.reason
    return index, ""


def _building(index: SearchIndex) -> str:
    """'the index is being built …, N% done' while this process builds it, else ''."""
    state = index.state()
    if not state.building:
        return ""
    done = f", {state.fraction:.0%} done" if state.fraction is not None else ""
    return f"the index is being built in the background{done}; searches use it once its words are in"


def _light(columns: tuple[str, ...]) -> str:
    """What ranking needs of each candidate: day of last change, importance, health."""
    dates = [f"m.{c}" for c in ("updated_at", "created_at") if c in columns]
    day = f"julianday(coalesce({', '.join(dates)}))" if len(dates) > 1 else (
        f"julianday({dates[0]})" if dates else "NULL")
    rest = [f"m.{c}" if c in columns else "NULL" for c in ("importance", "health_score")]
    return f"{day}, {', '.join(rest)}"


def _full_rows(conn: sqlite3.Connection, fids: list[int], columns: tuple[str, ...],
               exclude: Collection[str] = ()) -> dict[int, Row]:
    """(rowid, *MEMORY_COLUMNS) of the memories indexed as ``fids``, but those of ``exclude``."""
    cols = ", ".join(f"m.{c}" if c in columns else f"NULL AS {c}" for c in MEMORY_COLUMNS)
    left_out = f" AND d.mid NOT IN ({','.join('?' * len(exclude))})" if exclude else ""
    rows = conn.execute(
        f"SELECT d.fid, m.rowid, {cols} FROM docs d JOIN src.memories m ON m.id = d.mid "
        f"WHERE d.fid IN ({','.join('?' * len(fids))}){left_out}", [*fids, *exclude]).fetchall()
    return {r[0]: r[1:] for r in rows}


def _indexed_hits(index: SearchIndex, parsed: ParsedQuery, limit: int, weights: Weights,
                  snippet_chars: int | None,
                  exclude: Collection[str] = ()) -> tuple[list[Hit], int | None, list[int]]:
    """(hits best first, how many memories matched when every candidate was seen, else None,
    the hits' index ids). ``snippet_chars`` None: no snippets or spans (computed later for the
    rows shown)."""
    conn = index.connection()
    where, params = filter_sql(parsed, index.columns, pins=pins_on(conn, parsed))
    select = _light(index.columns)
    expr = parsed.fts_expression()
    substrings = candidates_sql(parsed)
    if expr is None:
        rows, complete = _browse(conn, parsed, where, params, select, limit, index.columns)
        source = "filter"
    elif substrings is not None:  # CJK terms: matched as substrings, no BM25
        rows, complete = _substring(conn, substrings, where, params, select, index.columns)
        source = "keyword"
    else:
        # For the last resort (filtering every match), a rare tag is better listed first.
        drive = (filter_sql(parsed, index.columns, tags="drive", pins=pins_on(conn, parsed)) if parsed.tags
                 else (where, params))
        rows, complete = _keyword(conn, expr, where, params, select, limit, drive, _fids_of(conn, exclude))
        source = "keyword"
    # rows: (bm25, (fid, day, importance, health))
    today = time.time() / 86400.0 + 2440587.5
    best = min((bm for bm, _ in rows if bm is not None), default=None)
    scored = sorted(
        ((score(relevance(bm, best) if bm is not None else 0.0, row[2], row[3],
                None if row[1] is None else today - row[1], weights), bm, row[0]) for bm, row in rows),
        key=lambda item: -item[0],
    )[:limit]
    full = _full_rows(conn, [fid for _, _, fid in scored], index.columns, exclude) if scored else {}
    scored = [item for item in scored if item[2] in full]
    fids = [fid for _, _, fid in scored]
    memories = [row_to_memory(full[fid]) for fid in fids]
    where = location(index.db_path)
    if snippet_chars is None:
        return [
            Hit(memory=m, score=value, snippet="", bm25=bm, expired=m.is_expired(), superseded=m.is_superseded,
                path=index.db_path, site=where[0], agent=where[1], source=source)
            for (value, bm, _), m in zip(scored, memories, strict=True)
        ], (len(rows) if complete else None), fids
    spans = fts_spans_many([m.content for m in memories], parsed) or [[] for _ in memories]
    return [
        make_hit(memory, value, found, bm, index.db_path, snippet_chars, source, where)
        for (value, bm, _), memory, found in zip(scored, memories, spans, strict=True)
    ], (len(rows) if complete else None), fids




def _fids_of(conn: sqlite3.Connection, ids: Collection[str]) -> list[int]:
    """The index ids of the memories ``ids``."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [r[0] for r in conn.execute(f"SELECT fid FROM docs WHERE mid IN ({marks})", list(ids))]


def _keyword(conn: sqlite3.Connection, expr: str, where: str, params: list[Any], select: str,
             limit: int, drive: tuple[str, list[Any]] | None = None,
             skip: list[int] | None = None) -> tuple[list[tuple[float | None, Row]], bool]:
    """(bm25, row) for the best BM25 candidates that pass the filters, and whether those are
    all the memories that match. ``skip``: index ids left out before ranking (BM25 over a
    memory with a million matches costs more than the rest of the search).

    The best ``pool`` matches are filtered; when too few pass, the pool grows as far as the
    pass rate says it must (up to POOL_MAX), after which every match is filtered in one join
    (``drive``: the filters in the form for that).
    """
    pool = max(limit * 2, POOL_MIN)
    skip = skip or []
    unless = f" AND rowid NOT IN ({','.join('?' * len(skip))})" if skip else ""
    while pool <= POOL_MAX:
        ranked = conn.execute(f"SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ?{unless} ORDER BY 2 LIMIT ?",
                              (expr, *skip, pool)).fetchall()
        if not ranked:
            return [], True
        bm = dict(ranked)
        fids = list(bm)
        marks = ",".join("?" * len(fids))
        # CROSS JOIN: the candidates first. Left to itself SQLite may walk a filter's index on
        # memories and probe the candidate list for each row (16,000 x 2,000 probes: 40 s at 50k).
        found = conn.execute(
            f"SELECT d.fid, {select} FROM docs d CROSS JOIN src.memories m ON m.id = d.mid "
            f"WHERE d.fid IN ({marks}) AND {where}", [*fids, *params],
        ).fetchall()
        if len(found) >= limit or len(ranked) < pool:
            return [(bm[r[0]], r) for r in found], len(ranked) < pool  # r: (fid, day, importance, health)
        # Grow to what the pass rate so far needs (twice that, for luck), at least 5x.
        needed = pool * limit * 2 // len(found) if found else POOL_MAX + 1
        pool = max(pool * 5, needed)
    where, params = drive or (where, params)
    # MATERIALIZED: rank the matches first; else SQLite may walk the filters' index and probe
    # FTS5 once per row, which is many times slower.
    rows = conn.execute(
        f"WITH h AS MATERIALIZED (SELECT rowid AS fid, bm25(fts) AS bm FROM fts WHERE fts MATCH ?{unless}) "
        f"SELECT h.bm, h.fid, {select} FROM h "
        f"JOIN docs d ON d.fid = h.fid JOIN src.memories m ON m.id = d.mid "
        f"WHERE {where} ORDER BY h.bm LIMIT ?", [expr, *skip, *params, max(limit * 2, POOL_MIN)],
    ).fetchall()
    return [(r[0], r[1:]) for r in rows], False


def _substring(conn: sqlite3.Connection, candidates: tuple[str, list[Any]], where: str, params: list[Any],
               select: str, columns: tuple[str, ...]) -> tuple[list[tuple[float | None, Row]], bool]:
    """(None, row) for the memories holding a query's CJK terms as substrings (see :mod:`.cjk`):
    the ``POOL_MAX`` most important that pass the filters, and whether those are all of them."""
    sql, args = candidates
    order = "ORDER BY m.importance DESC" if "importance" in columns else ""
    rows = conn.execute(
        f"SELECT d.fid, {select} FROM docs d JOIN src.memories m ON m.id = d.mid "
        f"WHERE d.fid IN ({sql}) AND {where} {order} LIMIT ?", [*args, *params, POOL_MAX + 1],
    ).fetchall()
    return [(None, r) for r in rows[:POOL_MAX]], len(rows) <= POOL_MAX


def _browse(conn: sqlite3.Connection, parsed: ParsedQuery, where: str, params: list[Any], select: str,
            limit: int, columns: tuple[str, ...]) -> tuple[list[tuple[float | None, Row]], bool]:
    """Filter-only queries (and pure exclusions): the most important (then most recently
    added) candidates that pass, to be ranked by the blended score. The sidecar is joined
    only to the chosen few."""
    order = ["m.importance DESC"] if "importance" in columns else []
    pool = max(limit * 2, POOL_MIN)
    # Broad filters (type, sync, superseded, common tags) match much of the file: walking the
    # seed's importance index finds the first hundred at once, where SQLite (no statistics)
    # would pick the type index and sort a third of a million rows. Narrow filters are left
    # to the planner; rare tags then drive the query.
    hint = ""
    narrow = parsed.health or parsed.any_of or parsed.expired or parsed.dirty or parsed.pinned
    broad = not narrow and _common_tags(conn, parsed)
    if broad and order and conn.execute(
            "SELECT 1 FROM src.sqlite_master WHERE type = 'index' AND name = 'idx_memories_importance'").fetchone():
        hint = "INDEXED BY idx_memories_importance"
    elif parsed.tags:
        where, params = filter_sql(parsed, columns, tags="drive", pins=pins_on(conn, parsed))
    args = list(params)
    if parsed.excluded:
        where += (" AND NOT EXISTS (SELECT 1 FROM docs hidden JOIN fts ON fts.rowid = hidden.fid "
                  "WHERE hidden.mid = id AND fts MATCH ?)")
        args.append(" OR ".join(t.fts() for t in parsed.excluded))
    rows = conn.execute(
        f"SELECT d.fid, x.* FROM (SELECT m.id AS mid_, {select} FROM src.memories m {hint} WHERE {where} "
        f"ORDER BY {', '.join(order + ['m.rowid DESC'])} LIMIT ?) x JOIN docs d ON d.mid = x.mid_",
        [*args, pool],
    ).fetchall()
    return [(None, (r[0], *r[2:])) for r in rows], len(rows) < pool


def _common_tags(conn: sqlite3.Connection, parsed: ParsedQuery) -> bool:
    """True when every ``tag:`` filter matches at least 1% of the memories (so walking the
    importance index soon meets enough of them); False for rarer tags or without the tag index."""
    if not parsed.tags:
        return True
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'tags_kind_value'").fetchone() is None:
        return False
    rows = SearchIndex._rows(conn)
    for kind, value in parsed.tags:
        kinds = [kind] if kind else list(TAG_KINDS)
        count = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM tags WHERE kind IN ({','.join('?' * len(kinds))}) "
            f"AND value = ? COLLATE NOCASE LIMIT ?)", [*kinds, value, rows // 100 + 1]).fetchone()[0]
        if count * 100 < rows:
            return False
    return True


def _facets_from_index(index: SearchIndex, fids: list[int]) -> dict[str, dict[str, int]]:
    """Tag counts of the hits indexed as ``fids`` (read by the tags' own key, no join)."""
    if not fids:
        return {}
    conn = index.connection()
    out: dict[str, dict[str, int]] = {}
    for kind, value, n in conn.execute(
            f"SELECT kind, value, count(*) FROM tags WHERE fid IN ({','.join('?' * len(fids))}) "
            "GROUP BY kind, value COLLATE NOCASE ORDER BY 3 DESC", fids):
        out.setdefault(kind, {})[value] = n
    return out


def _facets_from_text(hits: list[Hit]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for hit in hits:
        for kind, value in extract_tags(hit.memory.content):
            bucket = out.setdefault(kind, {})
            bucket[value] = bucket.get(value, 0) + 1
    return out


def tag_facets(target: Store | str | Path, query: str | ParsedQuery | None = None,
               limit: int = 50) -> dict[str, dict[str, int]]:
    """Tag counts: kind -> value -> number of memories, the ``limit`` most frequent per kind.

    Without ``query`` every indexed memory counts (a fast count over the sidecar). With
    ``query``, only memories matching it count (superseded ones only if the query shows them).
    Without FTS5 the counts come from scanning the file's text. An unbuilt index is built
    first (tags included), except while this process is already building it: then ``{}``.
    """
    path = path_of(target)
    parsed = None if query is None else (query if isinstance(query, ParsedQuery) else parse_query(query))
    sniff_file(path)
    if not fts5_available():
        result = search(path, parsed or "is:any", limit=MAX_LIMIT, fallback=True)
        return _top(_facets_from_text(result.hits), limit)
    if index_state(path).building:  # a build runs in this process: do not wait for it
        return {}
    index, why = _ready_index(path, True, None, None)
    if index is None:
        return {}
    finish_tags(index)
    try:
        with index.lock:
            conn = index.connection()
            if parsed is None or parsed.is_empty:
                rows = conn.execute(
                    "SELECT kind, value, n FROM (SELECT kind, value, count(*) AS n, row_number() OVER "
                    "(PARTITION BY kind ORDER BY count(*) DESC, value) AS r FROM tags "
                    "GROUP BY kind, value COLLATE NOCASE) WHERE r <= ?", (limit,)).fetchall()
            else:
                where, params = filter_sql(parsed, index.columns, pins=pins_on(conn, parsed))
                head, args = "", []
                source = "docs d CROSS JOIN src.memories m ON m.id = d.mid"
                expr = parsed.fts_expression()
                substrings = candidates_sql(parsed)
                if substrings or expr:
                    # The matches first: else SQLite may walk a filter's index and probe the match
                    # once per row (minutes on a large file).
                    head, args = (f"WITH h AS MATERIALIZED ({substrings[0]}) ", list(substrings[1])) if substrings \
                        else ("WITH h AS MATERIALIZED (SELECT rowid FROM fts WHERE fts MATCH ?) ", [expr])
                    source = "h CROSS JOIN docs d ON d.fid = h.rowid CROSS JOIN src.memories m ON m.id = d.mid"
                elif parsed.excluded:
                    where += " AND d.fid NOT IN (SELECT rowid FROM fts WHERE fts MATCH ?)"
                    params = [*params, " OR ".join(t.fts() for t in parsed.excluded)]
                rows = conn.execute(
                    f"{head}SELECT kind, value, n FROM (SELECT t.kind AS kind, t.value AS value, count(*) AS n, "
                    "row_number() OVER (PARTITION BY t.kind ORDER BY count(*) DESC, t.value) AS r "
                    f"FROM {source} CROSS JOIN tags t ON t.fid = d.fid "
                    f"WHERE {where} GROUP BY t.kind, t.value COLLATE NOCASE) WHERE r <= ?",
                    [*args, *params, limit]).fetchall()
    except sqlite3.Error as exc:
        raise translate(path, exc) from exc
    out: dict[str, dict[str, int]] = {}
    for kind, value, n in rows:
        out.setdefault(kind, {})[value] = n
    return out


def _top(facets: dict[str, dict[str, int]], limit: int) -> dict[str, dict[str, int]]:
    return {k: dict(sorted(v.items(), key=lambda kv: -kv[1])[:limit]) for k, v in facets.items()}
