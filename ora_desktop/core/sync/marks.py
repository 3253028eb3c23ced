"""Pins and typed links in sync (:mod:`ora_desktop.core.marks`): made or removed on one machine,
made or removed on every other after their syncs.

The server keeps each mark of a (site, agent) as one ``ora_marks`` row: present or removed, and
when, in the server's time. A sync (holding the (site, agent) lock, after the memories):

1. pulls the rows changed since this file's last look (kept per server in ``ora_desktop_state``);
   where the file disagrees, **the later of the two wins**: the time the mark was made here
   (``pinned_at``/``created_at``) or removed here (``ora_desktop_mark_removals``), moved into
   server time by the measured clock offset, against the row's ``set_at``; a tie goes to the
   server. A mark whose memories are not in this file is not made here;
2. pushes every mark that differs from what the server held after the last sync (the baseline,
   ``ora_desktop_sync_marks``): made here, or removed here, with its time; a mark on a
   ``local_only`` memory stays here, as the memory does;
3. records the server's new state as the baseline.

A sync stopped between the push and step 3 finds its own rows on the next pull, which agree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from .. import engine_tables, marks, timestamps
from ..rawsql import all_rows, run_sql
from ..writes import IDS_JSON
from .clock import Clock

if TYPE_CHECKING:
    from ..store import Store
    from .server import Server

BASELINE = engine_tables.SYNC_MARKS
_STATE = engine_tables.STATE
_KEY = "sync.marks_pull.{}"


@dataclass(frozen=True, slots=True)
class MarksResult:
    """What a sync did to pins and typed links: made or removed here, sent, both sides changed."""

    pulled: int = 0
    pushed: int = 0
    conflicts: int = 0
    ids: frozenset[str] = frozenset()  # memories whose pin or links changed here


def sync_marks(store: Store, server: Server, server_id: str, site: str, agent: str, origin: str,
               clock: Clock) -> MarksResult:
    """Pull, settle and push pins and typed links (see the module doc). Call holding the lock."""
    after = _last_pull(store, server_id)
    rows = server.mark_changes(site, agent, after)
    now = server.now()  # the time of a removal this file did not note (made before it kept them)
    touched: set[str] = set()
    pulled = conflicts = 0
    with store.write():
        store.create_engine_tables(BASELINE)
        here, gone = marks.present(store), marks.removals(store)
        base = _baseline(store, server_id)
        for row in rows:
            mark = (row.kind, row.key)
            if row.kind not in marks.KINDS or (mark in here) == row.present:
                base[mark] = row.present
                continue
            ours = clock.to_server(here[mark] if mark in here else gone.get(mark))
            if (mark in here) != base.get(mark, False):
                conflicts += 1  # changed here and there since the last sync
            if ours is not None and ours > row.set_at:
                base[mark] = row.present  # ours is later: pushed below
                continue
            ids = marks.put(store, mark, row.present, timestamps.to_sql(row.set_at - timedelta(seconds=clock.offset)))
            if row.present and not ids:
                base.pop(mark, None)  # its memories are not here: neither made nor sent back
                continue
            base[mark] = row.present
            touched.update(ids)
            pulled += 1
        here, gone = marks.present(store), marks.removals(store)
        new = {mark: at for mark, at in here.items() if not base.get(mark)}
        ends = sorted({end for mark in new for end in marks.ends(mark)})
        private = {r[0] for r in all_rows(  # (the ends of new marks only: not every private id of the file)
            store, f"SELECT id FROM memories WHERE sync_status = 'local_only' AND id IN {IDS_JSON}",
            (json.dumps(ends),))} if ends else set()
        outgoing = [(kind, key, True, clock.to_server(at) or now) for (kind, key), at in new.items()
                    if not private.intersection(marks.ends((kind, key)))]
        outgoing += [(kind, key, False, clock.to_server(gone.get((kind, key))) or now)
                     for (kind, key), on in base.items() if on and (kind, key) not in here]
        top = max((row.change for row in rows), default=after)
        _save(store, server_id, base, top)
    if outgoing:
        top = max(top, server.push_marks(site, agent, origin, outgoing))
        with store.write():
            _save(store, server_id, {**base, **{(kind, key): on for kind, key, on, _at in outgoing}}, top)
    return MarksResult(pulled, len(outgoing), conflicts, frozenset(touched))


def _last_pull(store: Store, server_id: str) -> int:
    if not store.has_table(_STATE):
        return 0
    rows = all_rows(store, f"SELECT value FROM {_STATE} WHERE key = ?", (_KEY.format(server_id),))
    return int(rows[0][0]) if rows else 0


def _baseline(store: Store, server_id: str) -> dict[marks.Mark, bool]:
    return {(kind, key): True for kind, key in all_rows(store, f"SELECT kind, key FROM {BASELINE} WHERE server_id = ?",
                                                         (server_id,))}


def _save(store: Store, server_id: str, base: dict[marks.Mark, bool], top: int) -> None:
    """The server's marks as this file now knows them, and how far it has read (inside a write)."""
    run_sql(store, f"DELETE FROM {BASELINE} WHERE server_id = ?", (server_id,))
    held = [[kind, key] for (kind, key), on in base.items() if on]
    run_sql(store, f"INSERT INTO {BASELINE} (server_id, kind, key) SELECT ?, json_extract(value, '$[0]'), "
                   "json_extract(value, '$[1]') FROM json_each(?)", (server_id, json.dumps(held)))
    run_sql(store, f"INSERT OR REPLACE INTO {_STATE} (key, value) VALUES (?, ?)", (_KEY.format(server_id), str(top)))


__all__ = ["MarksResult", "sync_marks"]
