"""Search as of a past time: the memories as they were then, as far as the undo journal knows.

:func:`search_as_of` starts from the file's rows now and takes back, newest first, every
journalled step made after ``when`` (:mod:`.journal`): memories those steps added leave, the
values they changed return, memories they deleted come back from the trash batch they filled.
Memories created after ``when`` leave too (whoever wrote them). The result is written to a
temporary file in a folder only this user can read with the seed's schema, searched there with the plain-text scan
(:mod:`..search.fallback`), and removed. The agent's file is only read.

What the journal cannot know is said in ``notes``: changes by programs that do not journal their
writes (shown as they are now), a journal that no longer reaches back to ``when`` (it keeps the
file's last 50 steps), decays (health as it is now).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import timestamps
from ..errors import InvalidValue
from ..rawsql import all_rows
from ..schema import MEMORY_COLUMNS, create_database
from . import journal

if TYPE_CHECKING:
    from ..search.results import Hit
    from ..store import Store


@dataclass(frozen=True, slots=True)
class AsOfAnswer:
    """Hits among the memories as they were at ``when``, and what the history could not cover."""

    when: datetime
    hits: tuple[Hit, ...]
    memories: int  # how many memories the file held then (as reconstructed)
    notes: tuple[str, ...]


def parse_when(text: str, name: str = "as_of") -> datetime:
    """A past time as given: a date (its end: ``2026-11-01`` reads as 23:59:59 that day, UTC) or a
    time (UTC unless it carries an offset); ``InvalidValue`` naming ``name`` otherwise."""
    when = timestamps.parse(text.strip())
    if when is None:
        raise InvalidValue(name, f"{text!r} is not a date or time (2026-11-01, 2026-11-01T09:30)")
    return when + timedelta(days=1, seconds=-1) if len(text.strip()) == 10 else when


def rows_as_of(store: Store, when: datetime) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(id -> column values at ``when``, notes on what the history does not cover)."""
    cols = list(store.columns)
    select = ", ".join(f'"{c}"' for c in cols)
    rows = {str(r[cols.index("id")]): dict(zip(cols, r, strict=True))
            for r in all_rows(store, f"SELECT {select} FROM memories")}
    entries = journal.entries(store)
    notes: list[str] = []
    later = [e for e in entries if e.at is not None and e.at > when]  # newest first
    if len(entries) >= journal.KEEP and later and later[-1] is entries[-1]:
        notes.append(f"the journal reaches back only to {timestamps.to_sql(entries[-1].at)} UTC (it keeps the last "
                     f"{journal.KEEP} steps): earlier changes after the date are not taken back")
    # A memory a later step touched, changed again since by someone who does not journal: the
    # newest step's fingerprint of it no longer matches the row.
    newest: dict[str, str | None] = {}
    for entry in later:
        for memory_id, fingerprint in entry.after.items():
            newest.setdefault(memory_id, fingerprint)
    now = journal.fingerprints(store, [i for i, f in newest.items() if f is not None])
    outside = {i for i, f in newest.items() if f is not None and now.get(i) not in (None, f)}
    for entry in later:
        for memory_id in entry.undo.added:
            rows.pop(memory_id, None)
        if entry.undo.batch is not None and store.has_table("ora_desktop_trash"):
            for (text,) in all_rows(store, "SELECT row_json FROM ora_desktop_trash WHERE batch = ?",
                                    (entry.undo.batch,)):
                data = json.loads(text)
                rows[str(data["id"])] = {c: data.get(c) for c in cols}
        for memory_id, before in entry.undo.rows.items():
            if memory_id in rows:
                rows[memory_id].update({c: v for c, v in before.items() if c in rows[memory_id]})
        if entry.undo.decay is not None:
            notes.append("a decay ran since: health is shown as it is now")
    created = {i: timestamps.parse(r.get("created_at")) for i, r in rows.items()}
    rows = {i: r for i, r in rows.items() if created[i] is None or created[i] <= when}
    touched = len(outside & rows.keys()) + sum(
        1 for i, r in rows.items() if i not in newest and (t := timestamps.parse(r.get("updated_at"))) and t > when)
    if touched:
        notes.append(f"{touched:,} memor{'y was' if touched == 1 else 'ies were'} changed after the date by programs "
                     "that do not journal their writes: shown as they are now")
    return rows, list(dict.fromkeys(notes))


def search_as_of(store: Store, query: str, when: datetime, limit: int = 50) -> AsOfAnswer:
    """Search ``query`` among the memories as they were at ``when`` (see the module doc)."""
    from ..search.fallback import fallback_hits
    from ..search.query import parse_query
    from ..search.ranking import DEFAULT_WEIGHTS

    rows, notes = rows_as_of(store, when)
    parsed = parse_query(query)
    with tempfile.TemporaryDirectory(prefix="ora-desktop-as-of-") as folder:  # mode 0700: it holds memory text
        path = Path(folder) / "as-of.site.db"
        create_database(path)
        conn = sqlite3.connect(path)
        try:
            present = [c for c in MEMORY_COLUMNS if c in store.columns]
            conn.executemany(f"INSERT INTO memories ({', '.join(present)}) VALUES ({', '.join('?' * len(present))})",
                             [tuple(r.get(c) for c in present) for r in rows.values()])
            conn.commit()
        finally:
            conn.close()
        hits, warnings = fallback_hits(path, parsed, limit, DEFAULT_WEIGHTS, 160)
    return AsOfAnswer(when, tuple(hits), len(rows), tuple([*parsed.warnings, *notes, *warnings]))


__all__ = ["AsOfAnswer", "parse_when", "rows_as_of", "search_as_of"]
