"""Where matched terms sit in a text: spans, snippets with markers, and a light stemmer.

With FTS5 the spans come from FTS5's own ``highlight()`` (so they match exactly what the
index matched: porter stems, prefixes, phrases). Without FTS5 they come from
:func:`python_spans`, which matches words by a light suffix-stripping stem.

Only what is shown is highlighted, and the work is capped: a text longer than
:data:`WINDOW_CHARS` is highlighted in a window of that size around its first match (FTS5's
``highlight()`` grows its output by copying it for every match — quadratic in the matches — and
a 10 MB memory with a million matches took minutes), and at most :data:`MAX_SPANS` spans are
kept. A NUL or one of our marker characters written by the agent is handed to FTS5 as a space
(same length), so highlights never shift.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import threading

from .cjk import cjk_terms, has_cjk, substring_spans
from .query import ParsedQuery, Term, parse_query
from .results import MARK_CLOSE, MARK_OPEN, Span

OPEN, CLOSE = "\x02", "\x03"
WINDOW_CHARS = 20_000  # longer texts are highlighted in a window of this size around the first match
MAX_SPANS = 1_000  # spans kept per text (a snippet shows a handful; the detail pane, the window)
_UNSAFE = str.maketrans({"\x00": " ", OPEN: " ", CLOSE: " "})  # same length: offsets stay true
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
    if has_cjk(term.text):  # found as a substring (see _with_cjk): a CJK run has no word boundary inside
        return ""
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


def _pattern(parsed: ParsedQuery) -> re.Pattern[str] | None:
    patterns = [p for g in parsed.groups for t in g if (p := _term_pattern(t))]
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE) if patterns else None


def python_spans(text: str, parsed: ParsedQuery, limit: int = MAX_SPANS) -> list[Span]:
    """Spans of the positive terms in ``text`` by light-stem matching (no FTS5 needed); at most ``limit``."""
    regex = _pattern(parsed)
    if not text:
        return []
    found = () if regex is None else (m.span() for m in regex.finditer(text) if m.end() > m.start())
    return _with_cjk(text, parsed, list(itertools.islice(found, limit)), limit)


def _with_cjk(text: str, parsed: ParsedQuery, spans: list[Span], limit: int = MAX_SPANS) -> list[Span]:
    """``spans`` and the query's CJK terms found as substrings (a run of CJK characters is one
    token to FTS5 and has no word boundary inside for a regex: see :mod:`.cjk`)."""
    if not cjk_terms(parsed):
        return spans
    return sorted({*spans, *substring_spans(text, parsed)})[:limit]


def _window(text: str, parsed: ParsedQuery) -> tuple[int, str]:
    """(offset, part of ``text`` to highlight): all of a short text; a long one around its first match."""
    if len(text) <= WINDOW_CHARS:
        return 0, text
    regex = _pattern(parsed)
    first = regex.search(text) if regex is not None else None
    at = first.start() if first else min((i for t in cjk_terms(parsed) if (i := text.find(t.text)) >= 0), default=0)
    start = max(0, at - WINDOW_CHARS // 4)
    if start:  # begin and end on whitespace, so no word is cut in two
        space = text.find(" ", start, start + 200)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + WINDOW_CHARS)
    if end < len(text):
        space = text.rfind(" ", end - 200, end)
        end = space if space > start else end
    return start, text[start:end]


def _memory_fts() -> sqlite3.Connection | None:
    conn = getattr(_local, "conn", None)
    if conn is None:
        try:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            conn.execute("CREATE VIRTUAL TABLE h USING fts5(c, tokenize='porter unicode61')")
        except sqlite3.Error:
            return None
        _local.conn = conn
    return conn


def fts_spans(text: str, parsed: ParsedQuery) -> list[Span] | None:
    """Spans as FTS5 would highlight them (None when FTS5 is not available); windowed and capped."""
    found = fts_spans_many([text], parsed)
    return None if found is None else found[0]


def fts_spans_many(texts: list[str], parsed: ParsedQuery) -> list[list[Span]] | None:
    """:func:`fts_spans` for several texts in one statement (None without FTS5)."""
    expr = parsed.positive_expression()
    if not expr or not texts:
        return [[] for _ in texts]
    conn = _memory_fts()
    if conn is None:
        return None
    windows = [_window(text, parsed) if isinstance(text, str) else (0, "") for text in texts]
    try:  # the texts are rolled back, not deleted (FTS5 would read each one again to delete it)
        conn.execute("BEGIN")
        try:
            conn.executemany("INSERT INTO h(rowid, c) VALUES (?, ?)",
                             ((i, part.translate(_UNSAFE)) for i, (_, part) in enumerate(windows)))
            found = dict(conn.execute("SELECT rowid, highlight(h, 0, ?, ?) FROM h WHERE h MATCH ?",
                                      (OPEN, CLOSE, expr)))
        finally:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        return None
    out = []
    for i, (offset, part) in enumerate(windows):
        if i in found:
            spans = _with_cjk(part, parsed, spans_from_marked(found[i])[1][:MAX_SPANS])
        elif offset or len(part) < len(texts[i]) or cjk_terms(parsed):  # only some terms in the window, or CJK
            spans = python_spans(part, parsed)
        else:
            spans = []
        out.append([(s + offset, e + offset) for s, e in spans] if offset else spans)
    return out


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
