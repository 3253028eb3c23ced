"""Search without a full-text index: a LIKE scan of the file, same API, reduced ranking.

Used when this SQLite lacks FTS5 (or ``ORA_DESKTOP_NO_FTS5=1``), or while the index is being
built and the caller chose not to wait. Words match as case-insensitive substrings of a light
stem (``running`` → ``%run%``), phrases as substrings, exclusions as ``NOT LIKE``. Matches are
ordered by importance then recency, the best ``cap`` are scored by how often the terms occur
and blended with importance, health and recency (no BM25). ``tag:`` filters become text
matches. The caller's result carries a note saying all this.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

from .. import timestamps
from ..connection import BUSY_TIMEOUT_MS, connect_readonly, translated
from ..decoding import tolerant
from ..records import row_to_memory
from ..schema import MEMORY_COLUMNS
from .filters import filter_sql, like_escape, pins_on
from .highlight import light_stem, python_spans
from .hits import make_hit
from .query import ParsedQuery, Term
from .ranking import Weights, blend
from .results import Hit

NOTE = ("ranking is reduced: no full-text index ({why}), so words were matched as plain text "
        "(light stemming, no BM25) and ordered by matches, importance, health and recency")


def _like(term: Term) -> str:
    if term.kind == "word":
        return f"%{like_escape(light_stem(term.text))}%"
    return f"%{like_escape(term.text)}%"


def connect_source(path: Path) -> sqlite3.Connection:
    conn = connect_readonly(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    conn.text_factory = tolerant  # an agent's row may hold bytes that are not UTF-8
    return conn


def fallback_hits(path: Path, parsed: ParsedQuery, limit: int, weights: Weights,
                  snippet_chars: int, seconds: float | None = None) -> tuple[list[Hit], list[str]]:
    """(hits best first, warnings) from a LIKE scan of ``path``.

    With ``seconds`` (an answer while the index builds) the scan walks the memories most
    important first and stops after that long, answering with what it found and saying so.
    """

    warnings: list[str] = []
    if parsed.tags or parsed.not_tags:
        warnings.append("tag: filters were matched as plain text (no full-text index)")
    with translated(path), contextlib.closing(connect_source(path)) as conn:
        columns = tuple(r[1] for r in conn.execute("PRAGMA table_info(memories)"))
        select = ", ".join(c if c in columns else f"NULL AS {c}" for c in MEMORY_COLUMNS)
        where, params = filter_sql(parsed, columns, tags="like", pins=pins_on(conn, parsed))
        parts, args = [where], list(params)
        for group in parsed.groups:
            parts.append("(" + " OR ".join("content LIKE ? ESCAPE '\\'" for _ in group) + ")")
            args.extend(_like(t) for t in group)
        for term in parsed.excluded:
            parts.append("content NOT LIKE ? ESCAPE '\\'")
            args.append(_like(term))
        cap = max(limit * 20, 2000)
        updated = "julianday(updated_at)" if "updated_at" in columns else "NULL"
        importance = "importance" if "importance" in columns else "NULL"
        if seconds is None:
            rows = conn.execute(
                f"SELECT rowid, {select} FROM memories WHERE {' AND '.join(parts)} "
                f"ORDER BY {importance} DESC, {updated} DESC LIMIT ?", [*args, cap],
            ).fetchall()
        else:  # the importance index's order (rows stream as found), stopped at the deadline
            rows, stopped = _bounded(conn, f"SELECT rowid, {select} FROM memories WHERE {' AND '.join(parts)} "
                                     f"ORDER BY {importance} DESC, rowid DESC LIMIT ?", [*args, cap], seconds)
            if stopped:
                warnings.append(f"the plain scan stopped after {seconds:g} s: more memories may match")
    now = timestamps.now()
    scored = []
    for row in rows:
        memory = row_to_memory(row)
        spans = python_spans(memory.content, parsed)
        scored.append((memory, spans, len(spans)))
    best = max((n for _, _, n in scored), default=0) or 1
    ranked = sorted(
        ((blend(m, n / best if parsed.groups else 0.0, weights, now), m, spans) for m, spans, n in scored),
        key=lambda item: -item[0],
    )[:limit]
    hits = [make_hit(m, score, spans, None, path, snippet_chars, "like") for score, m, spans in ranked]
    return hits, warnings


def _bounded(conn: sqlite3.Connection, sql: str, params: list, seconds: float) -> tuple[list, bool]:
    """The rows ``sql`` yields within ``seconds`` and whether it was stopped before the end."""
    deadline = time.monotonic() + seconds
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 20000)
    rows: list = []
    try:
        cursor = conn.execute(sql, params)
        while batch := cursor.fetchmany(200):
            rows.extend(batch)
    except sqlite3.OperationalError as exc:
        if "interrupt" not in str(exc).lower():
            raise
        return rows, True
    finally:
        conn.set_progress_handler(None, 0)
    return rows, False
