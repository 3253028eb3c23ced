"""Pins and typed links as one set of *marks*, the shape sync moves between machines.

A mark is ``(kind, key)``: kind ``pin`` with the memory id as key, or kind ``link`` with
``source``, ``target`` and ``type`` joined by U+001F (:func:`link_key`). A mark present here has
the time it was made (``pinned_at`` / ``created_at``); a mark removed here keeps the time it was
removed in the plain table ``ora_desktop_mark_removals`` (written by unpin and by removing a
typed link, cleared when the mark is made again), so the later of a removal and a making wins
wherever they happened. This module reads and writes those tables for the operations in
``operations/pins.py`` and ``operations/links.py`` and for ``sync/marks.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from . import engine_tables, timestamps
from .rawsql import all_rows, run_sql

if TYPE_CHECKING:
    from .store import Store

PIN, LINK = "pin", "link"
KINDS = (PIN, LINK)
REMOVALS = engine_tables.MARK_REMOVALS
_SEP = "\x1f"

Mark = tuple[str, str]  # (kind, key)


def link_key(source: str, target: str, type: str) -> str:
    """The key of the typed link ``source --type--> target``."""
    return _SEP.join((source, target, type))


def split_link(key: str) -> tuple[str, str, str]:
    """(source, target, type) of a link key."""
    source, target, type_ = key.split(_SEP, 2)
    return source, target, type_


def ends(mark: Mark) -> tuple[str, ...]:
    """The memory ids a mark is about: the pinned one, or a link's two ends."""
    kind, key = mark
    return (key,) if kind == PIN else split_link(key)[:2]


def made(store: Store, kind: str, keys: Iterable[str]) -> None:
    """Forget the removal time of marks made (again) here (inside their write)."""
    keys = list(keys)
    if keys and store.has_table(REMOVALS):
        run_sql(store, f"DELETE FROM {REMOVALS} WHERE kind = ? AND key IN (SELECT value FROM json_each(?))",
                (kind, json.dumps(keys)))


def removed(store: Store, kind: str, keys: Iterable[str], at: str | None = None) -> None:
    """Note when marks were removed here (inside their write; creates the table)."""
    keys = list(keys)
    if not keys:
        return
    store.create_engine_tables(REMOVALS)
    run_sql(store, f"INSERT OR REPLACE INTO {REMOVALS} (kind, key, removed_at) SELECT ?, value, ? FROM json_each(?)",
            (kind, at or timestamps.now_sql(), json.dumps(keys)))


def present(store: Store) -> dict[Mark, str]:
    """Every mark of the file with the time it was made."""
    out: dict[Mark, str] = {}
    if store.has_table(engine_tables.PINS):
        out.update(((PIN, str(i)), at) for i, at in all_rows(store, f"SELECT memory_id, pinned_at FROM "
                                                                       f"{engine_tables.PINS}"))
    if store.has_table(engine_tables.LINKS):
        out.update(((LINK, link_key(s, t, k)), at) for s, t, k, at in all_rows(
            store, f"SELECT source, target, type, created_at FROM {engine_tables.LINKS}"))
    return out


def removals(store: Store) -> dict[Mark, str]:
    """Every mark removed here, with when."""
    if not store.has_table(REMOVALS):
        return {}
    return {(k, key): at for k, key, at in all_rows(store, f"SELECT kind, key, removed_at FROM {REMOVALS}")}


def put(store: Store, mark: Mark, on: bool, at: str) -> tuple[str, ...]:
    """Make (``on``) or remove ``mark`` here as of ``at`` (a time in the file's format), inside a
    write; a mark whose memories are not in this file is left alone. Returns the memory ids it
    touched (empty when nothing changed)."""
    kind, key = mark
    ids = ends(mark)
    if on and len(store.get_many(list(ids))) != len(ids):
        return ()
    if kind == PIN:
        table, where, values = engine_tables.PINS, "memory_id = ?", (key,)
        insert = f"INSERT OR IGNORE INTO {table} (memory_id, pinned_at, pinned_by) VALUES (?, ?, 'sync')"
        row: tuple = (key, at)
    else:
        source, target, type_ = split_link(key)
        table, where, values = engine_tables.LINKS, "source = ? AND target = ? AND type = ?", (source, target, type_)
        insert = f"INSERT OR IGNORE INTO {table} (source, target, type, created_at) VALUES (?, ?, ?, ?)"
        row = (source, target, type_, at)
    if on:
        store.create_engine_tables(table)
        done = run_sql(store, insert, row).rowcount > 0
        made(store, kind, [key])
    else:
        done = store.has_table(table) and run_sql(store, f"DELETE FROM {table} WHERE {where}", values).rowcount > 0
        removed(store, kind, [key], at)
    return ids if done else ()


__all__ = ["KINDS", "LINK", "PIN", "Mark", "ends", "link_key", "made", "present", "put", "removals", "removed",
           "split_link"]
