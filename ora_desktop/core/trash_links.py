"""Links kept whole when memories go: the other memories' ``related_to`` and ``superseded_by``.

Removing memories (a delete, expiry cleanup, retention, a purge) takes their ids out of every
other memory's ``related_to`` and re-points a ``superseded_by`` that named one of them to the
live end of its chain (the first newer memory that stays), or clears it when none stays. The
edits run in the caller's write transaction. For a recoverable delete they are recorded, before
and after, in ``ora_desktop_trash_links`` under the delete's trash batch, so restoring the batch
puts every link back exactly as it was (byte for byte when nothing edited them since).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import timestamps
from .rawsql import run_sql

if TYPE_CHECKING:
    from .store import Store

IDS_JSON = "(SELECT value FROM json_each(?))"
# json_each over a malformed value raises even behind an AND: feed it an empty array instead.
_LINKS = "json_each(CASE WHEN json_valid(m.related_to) THEN m.related_to ELSE '[]' END)"
MAX_CHAIN = 10000
_SYNC = ("updated_at", "sync_status")
INSTR_IDS = 32  # up to this many removed ids, candidates are found with instr()


def _dump(ids: list[Any]) -> str | None:
    """``related_to`` text for a list of ids (as the engine writes it; ``NULL`` when empty)."""
    return json.dumps(ids) if ids else None


def _sync_sets(store: Store) -> str:
    """The SET parts of the sync rule (ARCHITECTURE.md, "Rules from the seed") for this file's columns."""
    sets = []
    if "updated_at" in store.columns:
        sets.append("updated_at = ?")
    if "sync_status" in store.columns:
        sets.append("sync_status = CASE WHEN sync_status = 'local_only' THEN 'local_only' ELSE 'pending' END")
    return "".join(f", {s}" for s in sets)


def _write(store: Store, edits: list[tuple[str, str | None, str | None]]) -> None:
    """Set (id, related_to, superseded_by) rows in one executemany, following the sync rule."""
    if not edits:
        return
    stamp = [timestamps.now_sql()] if "updated_at" in store.columns else []
    sets, cols = [], []
    if "related_to" in store.columns:
        sets.append("related_to = ?")
        cols.append(1)
    if "superseded_by" in store.columns:
        sets.append("superseded_by = ?")
        cols.append(2)
    sql = f"UPDATE memories SET {', '.join(sets)}{_sync_sets(store)} WHERE id = ?"
    store.db.cursor().executemany(sql, [[e[c] for c in cols] + stamp + [e[0]] for e in edits])


def linkers(store: Store, removed: Iterable[str]) -> Linkers:
    """Which memories outside ``removed`` link to one of them now, and the highest rowid: read
    once before a removal in chunks, so that each chunk looks only at these and at rows added
    since (:func:`unlink_removed`'s ``among``) instead of scanning the whole table again."""
    removed = frozenset(removed)
    top = run_sql(store, "SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0]
    return Linkers(tuple(r[0] for r in _linking(store, removed)), int(top))


class Linkers(tuple):
    """(ids that link to memories being removed, the highest rowid when they were found)."""

    def __new__(cls, ids: tuple[str, ...], top: int) -> Linkers:
        return super().__new__(cls, (ids, top))


def _linking(store: Store, removed: frozenset[str], among: Linkers | None = None) -> list[tuple[Any, ...]]:
    """(id, related_to, superseded_by, updated_at, sync_status) of the memories outside ``removed``
    that link to one of them (candidates: an id inside another id is told apart by the caller);
    with ``among``, only those memories and the ones added after them are looked at."""
    has_related, has_superseded = "related_to" in store.columns, "superseded_by" in store.columns
    if not removed or not (has_related or has_superseded):
        return []
    gone = json.dumps(sorted(removed))
    clauses, params = [], []
    if has_related:
        # No index can serve this (the seed has none on related_to): one scan of the table. For a
        # few ids, instr() finds candidates about three times faster than parsing every array;
        # candidates are then checked exactly below (an id inside another id is left alone).
        if len(removed) <= INSTR_IDS:
            found = " OR ".join(["instr(m.related_to, ?)"] * len(removed))
            clauses.append(f"(m.related_to IS NOT NULL AND ({found}))")
            params += sorted(removed)
        else:
            clauses.append(f"(m.related_to IS NOT NULL AND m.related_to != '' AND EXISTS "
                           f"(SELECT 1 FROM {_LINKS} j WHERE j.value IN {IDS_JSON}))")
            params.append(gone)
    if has_superseded:
        clauses.append(f"m.superseded_by IN {IDS_JSON}")
        params.append(gone)
    related = "m.related_to" if has_related else "NULL"
    superseded = "m.superseded_by" if has_superseded else "NULL"
    sync = ", ".join(f"m.{c}" if c in store.columns else "NULL" for c in _SYNC)
    narrow, narrowed = "", []
    if among is not None:
        narrow, narrowed = f" AND (m.id IN {IDS_JSON} OR m.rowid > ?)", [json.dumps(list(among[0])), among[1]]
    return run_sql(store,
        f"SELECT m.id, {related}, {superseded}, {sync} FROM memories m "
        f"WHERE m.id NOT IN {IDS_JSON}{narrow} AND ({' OR '.join(clauses)})", [gone, *narrowed, *params],
    ).fetchall()


def unlink_removed(store: Store, removed: Iterable[str], batch: str | None = None,
                   previous: dict[str, dict[str, Any]] | None = None,
                   among: Linkers | None = None) -> frozenset[str]:
    """Take ``removed`` ids out of the links of every memory that stays (call inside a write).

    With ``batch``, each edit is recorded for :func:`restore_links`. With ``previous``, the
    edited memories' link and sync columns as they were are put there (id -> column -> value),
    which is what an undo needs to give them back exactly. With ``among`` (:func:`linkers`), only
    those memories and rows added since are looked at. Returns the edited ids.
    """
    removed = frozenset(removed)
    rows = _linking(store, removed, among)
    if not rows:
        return frozenset()
    chains = _successors(store, removed) if "superseded_by" in store.columns else {}
    edits, records = [], []
    for memory_id, related_text, superseded_by, *sync in rows:
        new_related = related_text
        if related_text:
            try:
                value = json.loads(related_text)
            except (TypeError, ValueError):
                value = None
            if isinstance(value, list):
                kept = [v for v in value if not (isinstance(v, str) and v in removed)]
                if len(kept) != len(value):
                    new_related = _dump(kept)
        new_superseded = chains.get(superseded_by, superseded_by) if superseded_by in removed else superseded_by
        if new_related == related_text and new_superseded == superseded_by:
            continue
        edits.append((memory_id, new_related, new_superseded))
        if previous is not None and memory_id not in previous:  # (an earlier chunk's values are the first)
            values = {"related_to": related_text, "superseded_by": superseded_by, **dict(zip(_SYNC, sync, strict=True))}
            previous[memory_id] = {c: v for c, v in values.items() if c in store.columns}
        records.append((batch, memory_id, related_text, new_related, superseded_by, new_superseded))
    _write(store, edits)
    if batch is not None and records:
        store.db.cursor().executemany(
            "INSERT INTO ora_desktop_trash_links (batch, memory_id, related_before, related_after, "
            "superseded_before, superseded_after) VALUES (?, ?, ?, ?, ?, ?)", records)
    return frozenset(e[0] for e in edits)


def _successors(store: Store, removed: frozenset[str]) -> dict[str, str | None]:
    """For each removed id: the first memory along its ``superseded_by`` chain that stays."""
    nxt: dict[str, str | None] = {}
    frontier = set(removed)
    while frontier and len(nxt) < MAX_CHAIN:
        found = run_sql(store, f"SELECT id, superseded_by FROM memories WHERE id IN {IDS_JSON}",
                              [json.dumps(sorted(frontier))]).fetchall()
        frontier = set()
        for memory_id, newer in found:
            nxt[memory_id] = newer or None
            if newer and newer in removed and newer not in nxt:
                frontier.add(newer)
    live: dict[str, str | None] = {}
    for start in removed:
        seen, current = set(), start
        while current in removed and current not in seen:
            seen.add(current)
            current = nxt.get(current)
        # A cycle among removed memories, or a chain ending in a missing memory: nothing stays.
        live[start] = None if current in removed else (current if _exists(store, current) else None)
    return live


def _exists(store: Store, memory_id: str | None) -> bool:
    if not memory_id:
        return False
    return run_sql(store, "SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None


def restore_links(store: Store, batches: Iterable[str], restored: Iterable[str]) -> frozenset[str]:
    """Put back the link edits recorded with ``batches`` after ``restored`` came back (inside a write).

    Newest edits are undone first. A memory whose links are exactly as the delete left them gets
    its old text back byte for byte when every id it lost exists again; otherwise the old order is
    merged with its current links, keeping only ids that exist. Returns the edited ids.
    """
    batches = sorted(set(batches))
    if not batches or not store.has_table("ora_desktop_trash_links"):
        return frozenset()
    restored = set(restored)
    rows = run_sql(store,
        "SELECT id, memory_id, related_before, related_after, superseded_before, superseded_after "
        f"FROM ora_desktop_trash_links WHERE batch IN {IDS_JSON} ORDER BY id DESC", [json.dumps(batches)],
    ).fetchall()
    has_related, has_superseded = "related_to" in store.columns, "superseded_by" in store.columns
    related = "related_to" if has_related else "NULL"
    superseded = "superseded_by" if has_superseded else "NULL"
    changed: set[str] = set()
    for link_id, memory_id, rel_before, rel_after, sup_before, sup_after in rows:
        current = run_sql(store, f"SELECT {related}, {superseded} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if current is None:
            continue  # the memory itself is gone (or still in the trash)
        cur_related, cur_superseded = current
        new_related = _merged(store, rel_before, rel_after, cur_related, restored)
        new_superseded = cur_superseded
        if cur_superseded == sup_after and sup_before != sup_after and _exists(store, sup_before):
            new_superseded = sup_before
        if (new_related, new_superseded) == (cur_related, cur_superseded):
            continue
        _write(store, [(memory_id, new_related, new_superseded)])
        run_sql(store, "UPDATE ora_desktop_trash_links SET related_after = ?, superseded_after = ? WHERE id = ?",
                      (new_related, new_superseded, link_id))
        changed.add(memory_id)
    return frozenset(changed)


def _merged(store: Store, before: str | None, after: str | None, current: str | None,
            restored: set[str]) -> str | None:
    """The ``related_to`` to restore (see :func:`restore_links`)."""
    if before == after:
        return current
    try:
        old = json.loads(before) if before else []
        now = json.loads(current) if current else []
    except (TypeError, ValueError):
        return current  # edited into something that is not JSON since: leave it to a person
    if not isinstance(old, list) or not isinstance(now, list):
        return current
    lost = [v for v in old if isinstance(v, str) and v not in now]
    present = {v for v in lost if v in restored or _exists(store, v)}
    if current == after and len(present) == len(lost):
        return before  # byte for byte
    merged = [v for v in old if v in now or v in present]
    merged += [v for v in now if v not in merged]
    return _dump(merged) if merged != now else current


def forget_batches(store: Store) -> None:
    """Drop link records whose trash batch no longer holds any memory (inside a write)."""
    if store.has_table("ora_desktop_trash_links"):
        run_sql(store, "DELETE FROM ora_desktop_trash_links WHERE batch NOT IN (SELECT batch FROM ora_desktop_trash)")
