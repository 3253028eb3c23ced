"""Identical text: the rule behind exact duplicates (``add(on_duplicate=)``, ``duplicates``).

Two memories hold the same text when their contents are equal after case folding and
collapsing every run of whitespace to one space (leading and trailing whitespace dropped).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from .rawsql import all_rows

if TYPE_CHECKING:
    from .store import Store

_LIKE_SPECIAL = re.compile(r"([%_\\])")


def normalized(text: str) -> str:
    """``text`` case-folded with whitespace collapsed: equal for exact duplicates."""
    return " ".join(str(text).casefold().split())


def identical_live(store: Store, content: str, same: Callable[[str], str] = normalized, *,
                   more_after: bool = False) -> str | None:
    """The id of a live (not superseded) memory whose text is ``content``'s, normalized; else None.

    One scan narrowed by SQL (``LIKE`` on the words in order, case-insensitive for ASCII),
    confirmed in Python by comparing ``same(text)`` (default :func:`normalized`). ``more_after``
    lets the SQL narrowing accept text after the last word (for a ``same`` that drops some).
    """
    words = str(content).split()
    if not words:
        return None
    pattern = "%".join(_LIKE_SPECIAL.sub(r"\\\1", w) for w in words) + ("%" if more_after else "")
    live = "superseded_by IS NULL AND " if "superseded_by" in store.columns else ""
    target = same(content)
    try:
        rows = all_rows(store, f"SELECT id, content FROM memories WHERE {live}content LIKE ? ESCAPE '\\' "
                               "ORDER BY rowid", (pattern,))
    except sqlite3.Error:
        return None
    for memory_id, text in rows:
        if isinstance(text, str) and same(text) == target:
            return str(memory_id)
    return None
