"""Chinese, Japanese and Korean words inside a sentence: found as substrings.

``unicode61`` makes one token of a whole run of CJK characters, so in "部署前先运行数据库迁移"
the word 数据库 is not a token and a token search cannot find it. The sidecar therefore keeps
a second FTS5 table, ``cjk``, with SQLite's ``trigram`` tokenizer, holding only the memories
whose text has CJK characters (so it stays small). A search term with CJK characters is looked
up there as a substring — ``MATCH`` for three characters or more, ``LIKE`` (over that small
table) for one or two — while every other term keeps porter stemming in ``fts``.
"""

from __future__ import annotations

import re
from typing import Any

from .query import ParsedQuery, Term

#: Han (CJK unified ideographs and extension A, compatibility ideographs), hiragana, katakana
#: (and the prolonged-sound mark), Hangul syllables and jamo.
_RANGES = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK = re.compile(f"[{_RANGES}]")
SCHEMA = "CREATE VIRTUAL TABLE IF NOT EXISTS cjk USING fts5(content, tokenize='trigram')"


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a Chinese, Japanese or Korean character."""
    return bool(CJK.search(text))


def cjk_terms(parsed: ParsedQuery) -> list[Term]:
    """The positive and excluded terms of ``parsed`` that hold CJK characters."""
    terms = [t for group in parsed.groups for t in group] + list(parsed.excluded)
    return [t for t in terms if has_cjk(t.text)]


def _term_sql(term: Term) -> tuple[str, list[Any]]:
    """Rowids (``docs.fid``) of the memories holding ``term``."""
    if not has_cjk(term.text):
        return "SELECT rowid FROM fts WHERE fts MATCH ?", [term.fts()]
    text = term.text
    if len(text) >= 3:
        return "SELECT rowid FROM cjk WHERE cjk MATCH ?", ['"' + text.replace('"', '""') + '"']
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "SELECT rowid FROM cjk WHERE content LIKE ? ESCAPE '\\'", [f"%{escaped}%"]


def candidates_sql(parsed: ParsedQuery) -> tuple[str, list[Any]] | None:
    """SQL listing the fids that match ``parsed``'s terms when some hold CJK characters
    (groups intersected, each group's terms united, exclusions removed); None otherwise."""
    if not parsed.groups or not cjk_terms(parsed):
        return None
    parts, params = [], []
    for group in parsed.groups:
        pieces = [_term_sql(term) for term in group]
        parts.append("SELECT rowid FROM (" + " UNION ".join(sql for sql, _ in pieces) + ")")
        params.extend(p for _, values in pieces for p in values)
    sql = " INTERSECT ".join(parts)
    for term in parsed.excluded:
        piece, values = _term_sql(term)
        sql += f" EXCEPT {piece}"
        params.extend(values)
    return sql, params


def substring_spans(text: str, parsed: ParsedQuery) -> list[tuple[int, int]]:
    """[start, end) of every occurrence of the query's CJK terms in ``text``."""
    spans = []
    for term in cjk_terms(replace_excluded(parsed)):
        start = text.find(term.text)
        while start >= 0:
            spans.append((start, start + len(term.text)))
            start = text.find(term.text, start + len(term.text))
    return spans


def replace_excluded(parsed: ParsedQuery) -> ParsedQuery:
    """``parsed`` without its exclusions (only the positive terms are highlighted)."""
    from dataclasses import replace

    return replace(parsed, excluded=())
