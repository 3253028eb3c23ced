"""Content words of a question: stop words dropped, file paths and URLs kept whole.

Used where a sentence typed by a person or an agent becomes a search: the any-word answer to
a question that no memory matches word for word (:func:`any_word_query`), context assembly
and conversation recall (:func:`keywords`). A file path such as ``src/app.ts`` is one
keyword — a phrase that matches the path (and so the memories tagged ``file:src/app.ts``) —
never ``src``, ``app`` and ``ts`` scattered over unrelated memories.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .query import ParsedQuery, Term
from .tags import extract_tags

_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just let me
more most my myself no nor not now of off on once only or other our ours ourselves out over own same
she should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves tell told know remember said say says please thanks thank
"""
STOPWORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[^\W_][\w'-]*[^\W_]|[^\W_]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def paths_in(text: str) -> list[str]:
    """File paths and URLs in ``text``, as the tag extractor finds them (first seen first)."""
    return [value for kind, value in extract_tags(text) if kind in ("file", "url")]


def is_content_word(word: str) -> bool:
    """True for a word worth searching: not a stop word, and 3+ characters (or any CJK)."""
    lower = word.lower()
    return lower not in STOPWORDS and (len(lower) >= 3 or bool(_CJK.search(lower)))


def keywords(text: str, limit: int = 12) -> list[str]:
    """Content words of a message, first seen first: paths and URLs whole (original case),
    other words lower-cased, stop words and words under 3 characters dropped."""
    whole = paths_in(text)
    for value in whole:
        text = text.replace(value, " ")
    words = [w.lower() for w in _WORD.findall(text)]
    chosen = [*whole, *(w for w in dict.fromkeys(words) if is_content_word(w))]
    return list(dict.fromkeys(chosen))[:limit]


def keyword_terms(text: str, limit: int = 12) -> tuple[Term, ...]:
    """:func:`keywords` as search terms: a path or URL is a phrase, anything else a word."""
    whole = set(paths_in(text))
    return tuple(Term(w, "phrase" if w in whole else "word") for w in keywords(text, limit))


def content_groups(parsed: ParsedQuery) -> tuple[tuple[Term, ...], ...]:
    """``parsed``'s groups without stop words (phrases and prefixes are kept as typed)."""
    groups = (tuple(t for t in group if t.kind != "word" or is_content_word(t.text)) for group in parsed.groups)
    return tuple(g for g in groups if g)


def any_word_query(parsed: ParsedQuery) -> ParsedQuery | None:
    """The any-word form of an all-words query: its content words ORed (BM25 ranks memories
    holding more, and rarer, of them first), filters and exclusions kept. ``None`` when that
    would be the same search, or nothing would be left to search for."""
    terms = tuple(dict.fromkeys(t for group in content_groups(parsed) for t in group))
    if not terms:
        return None
    loose = replace(parsed, groups=(terms,))
    return None if loose.groups == parsed.groups else loose
