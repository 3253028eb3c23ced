"""Where matched terms sit in a text: spans, snippets with markers, and a light stemmer.

With FTS5 the spans come from FTS5's own ``highlight()`` (so they match exactly what the
index matched: porter stems, prefixes, phrases). Without FTS5 they come from
:func:`python_spans`, which matches words by a light suffix-stripping stem.
"""

from __future__ import annotations

import re
import sqlite3
import threading

from .query import ParsedQuery, Term, parse_query
from .results import MARK_CLOSE, MARK_OPEN, Span

OPEN, CLOSE = "\x02", "\x03"
_SUFFIXES = ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "ly", "s")
_local = threading.local()


def light_stem(word: str) -> str:
    """A crude English stem (``running`` → ``run``, ``databases`` → ``databas``)."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    return word


def spans_from_marked(marked: str) -> tuple[str, list[Span]]:
    """Remove OPEN/CLOSE markers from ``marked``; return the plain text and the marked spans."""
    if OPEN not in marked:
        return marked.replace(CLOSE, ""), []
    plain: list[str] = []
    spans: list[Span] = []
    length = 0
    pos = 0
    while True:
        start = marked.find(OPEN, pos)
        if start < 0:
            break
        end = marked.find(CLOSE, start + 1)
        if end < 0:
            break
        plain.append(marked[pos:start])
        length += start - pos
        inner = marked[start + 1:end]
        if inner:
            spans.append((length, length + len(inner)))
        plain.append(inner)
        length += len(inner)
        pos = end + 1
    plain.append(marked[pos:])
    return "".join(plain).replace(OPEN, "").replace(CLOSE, ""), spans


def _term_pattern(term: Term) -> str:
    if term.kind == "phrase":
        words = re.findall(r"[^\W_]+", term.text)
        return r"\b" + r"[\W_]+".join(re.escape(light_stem(w)) + r"\w*" for w in words) if words else ""
    words = re.findall(r"[^\W_]+", term.text)
    if not words:
        return ""
    if len(words) > 1:  # src/app.ts: the tokens in sequence
        return r"\b" + r"[\W_]+".join(re.escape(w) for w in words) + r"\w*"
    stem = words[0] if term.kind == "prefix" else light_stem(words[0])
    return r"\b" + re.escape(stem) + r"\w*"


def python_spans(text: str, parsed: ParsedQuery) -> list[Span]:
    """Spans of the positive terms in ``text`` by light-stem matching (no FTS5 needed)."""
    patterns = [p for g in parsed.groups for t in g if (p := _term_pattern(t))]
    if not patterns or not text:
        return []
    regex = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    return [(m.start(), m.end()) for m in regex.finditer(text) if m.end() > m.start()]


def _memory_fts() -> sqlite3.Connection | None:
    conn = getattr(_local, "conn", None)
    if conn is None:
        try:
            conn = sqlite3.connect(":memory:")
            conn.execute("CREATE VIRTUAL TABLE h USING fts5(c, tokenize='porter unicode61')")
        except sqlite3.Error:
            return None
        _local.conn = conn
    return conn


def fts_spans(text: str, parsed: ParsedQuery) -> list[Span] | None:
    """Spans as FTS5 would highlight them (None when FTS5 is not available)."""
    expr = parsed.positive_expression()
    if not expr or not text:
        return []
    conn = _memory_fts()
    if conn is None:
        return None
    try:
        conn.execute("DELETE FROM h")
        conn.execute("INSERT INTO h(rowid, c) VALUES (1, ?)", (text,))
        row = conn.execute("SELECT highlight(h, 0, ?, ?) FROM h WHERE h MATCH ?", (OPEN, CLOSE, expr)).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return []
    return spans_from_marked(row[0])[1]


def fts_spans_many(texts: list[str], parsed: ParsedQuery) -> list[list[Span]] | None:
    """:func:`fts_spans` for several texts in one statement (None without FTS5)."""
    expr = parsed.positive_expression()
    if not expr or not texts:
        return [[] for _ in texts]
    conn = _memory_fts()
    if conn is None:
        return None
    try:
        conn.execute("DELETE FROM h")
        conn.executemany("INSERT INTO h(rowid, c) VALUES (?, ?)", enumerate(texts))
        found = dict(conn.execute("SELECT rowid, highlight(h, 0, ?, ?) FROM h WHERE h MATCH ?", (OPEN, CLOSE, expr)))
    except sqlite3.Error:
        return None
    return [spans_from_marked(found[i])[1] if i in found else [] for i in range(len(texts))]


def match_spans(text: str, query: str | ParsedQuery) -> list[Span]:
    """[start, end) offsets in ``text`` of the query's positive terms, matched the way the
    index matches them (stemmed, prefixes, phrases); a light stemmer when FTS5 is absent."""
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    if not isinstance(text, str):
        return []
    from .sidecar import fts5_available

    if fts5_available():
        spans = fts_spans(text, parsed)
        if spans is not None:
            return spans
    return python_spans(text, parsed)


def _flat(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ").replace("\t", " ")


def snippet(content: str, spans: list[Span], chars: int = 160) -> tuple[str, tuple[Span, ...], str]:
    """(snippet text, spans within it, snippet with MARK_OPEN/MARK_CLOSE around matches).

    The window of about ``chars`` characters starts a little before the first match, on a
    word boundary; ``…`` marks text cut off at either end. Line breaks become spaces.
    """
    chars = max(20, chars)
    if len(content) <= chars:
        start, end = 0, len(content)
    else:
        first = spans[0][0] if spans else 0
        start = max(0, first - chars // 4)
        if start > 0:
            space = content.rfind(" ", max(0, start - 20), start + 1)
            start = space + 1 if space >= 0 else start
        end = min(len(content), start + chars)
        if end < len(content):
            space = content.rfind(" ", start + chars // 2, end)
            end = space if space > 0 else end
    lead = "…" if start > 0 else ""
    tail = "…" if end < len(content) else ""
    body = _flat(content[start:end])
    text = lead + body + tail
    inside = tuple(
        (max(s, start) - start + len(lead), min(e, end) - start + len(lead))
        for s, e in spans if e > start and s < end
    )
    marked, last = [], 0
    for s, e in inside:
        marked.append(text[last:s])
        marked.append(MARK_OPEN + text[s:e] + MARK_CLOSE)
        last = e
    marked.append(text[last:])
    return text, inside, "".join(marked)
