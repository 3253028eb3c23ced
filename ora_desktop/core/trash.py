"""Recoverable removal (ARCHITECTURE.md, contract 5): rows go to ``ora_desktop_trash`` before they go.

The copy and the delete happen in one ``BEGIN IMMEDIATE`` transaction, as single statements,
so a crash leaves either both or neither. ``restore_deleted`` puts rows back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from . import chunks, timestamps
from .records import Change, ChangeKind, DeletedMemory, Removed, row_to_memory
from .trash_links import IDS_JSON as _IDS_JSON
from .trash_links import Linkers, forget_batches, linkers, restore_links, unlink_removed

if TYPE_CHECKING:
    from .store import Store


class TrashMixin:
    """Methods of :class:`~ora_desktop.core.store.Store` for recoverable deletes."""

    def remove_where_recoverably(self: Store, where: str, params: Sequence[Any], reason: str,
                                 return_records: bool = True,
                                 previous: dict[str, dict[str, Any]] | None = None,
                                 last_step: Callable[[Removed], None] | None = None,
                                 recheck: str | None = None, batch: str | None = None,
                                 unlink: bool = True) -> Removed:
        """Copy matching rows (every column, extras included) to the trash, then delete them.

        Returns the removed records (none when ``return_records`` is false) with the trash batch
        that holds them, the number of rows deleted and the ``Change``. ``previous`` receives the
        link and sync columns, as they were, of the other memories that lost a link.

        Called outside a transaction, the rows go in chunks (:mod:`.chunks`), each its own short
        transaction, all under one trash batch, so restoring the batch brings back every chunk;
        ``last_step(removed so far)`` runs inside the last chunk's transaction (a journal entry).
        Inside the caller's transaction everything happens in it. ``where`` uses ``?`` parameters.
        Each chunk names its rows (rowid and id, as read before the first) and checks again that
        they still match ``where``, or ``recheck`` (no parameters) when ``where`` is costly to
        repeat in every chunk (a long id list: ``"1"``). ``batch`` adds the rows to that trash
        batch (one an earlier removal of the same step made: an import's chunks share one), so
        one restore of the batch brings back both; by default the removal has a batch of its own.
        ``unlink=False`` leaves the other memories' links to the rows as they are: the rows come
        straight back under the same ids (an import replacing them, or its take-back restoring them).
        """
        self._require_writable()
        batch = batch or uuid.uuid4().hex[:12]
        stamp = timestamps.now_sql()
        done = _Removal(self, reason, batch, stamp, return_records, previous)
        done.unlink = unlink
        try:
            if self.db.in_transaction():
                with self.write():
                    done.step(where, params)
                    if last_step is not None:
                        last_step(done.result(pending=True))
                done.keep()
                return done.result()
            keys = self._fetch_all(f"SELECT rowid, id FROM memories WHERE {where} ORDER BY rowid", params)
            done.among = linkers(self, [k[1] for k in keys]) if unlink else None
            # (the id too: a rowid freed and reused meanwhile names another memory)
            mine = f"rowid IN {_IDS_JSON} AND coalesce(id, '') IN {_IDS_JSON}"
            where, params = (f"{mine} AND ({where})", list(params)) if recheck is None else (
                f"{mine} AND ({recheck})", [])
            sizer, at = chunks.new_sizer(), 0
            while at < len(keys) or (at == 0 and last_step is not None):
                part = keys[at:at + sizer.size]
                at += len(part)

                def chunk(part: list[tuple] = part, final: bool = at >= len(keys)) -> int:
                    named = [json.dumps([k[0] for k in part]), json.dumps([k[1] or "" for k in part])]
                    count = done.step(where, [*named, *params])
                    if final and last_step is not None:
                        last_step(done.result(pending=True))
                    return count

                chunks.timed_write(self, sizer, chunk)
                done.keep()
                if not part:
                    break
            return done.result()
        finally:
            done.tell()

    def trash(self: Store, limit: int | None = 1000, batch: str | None = None) -> list[DeletedMemory]:
        """Rows in the trash, most recently deleted first (empty if nothing was ever deleted)."""
        if not self.has_table("ora_desktop_trash"):
            return []
        where, params = ("batch = ?", [batch]) if batch else ("1", [])
        tail = f" LIMIT {int(limit)}" if limit else ""
        rows = self._fetch_all(
            f"SELECT id, memory_id, deleted_at, reason, batch, row_json FROM ora_desktop_trash "
            f"WHERE {where} ORDER BY id DESC{tail}", params,
        )
        out = []
        for trash_id, _memory_id, deleted_at, reason, batch_id, text in rows:
            data = json.loads(text)
            memory = row_to_memory([None, *(data.get(c) for c in _COLUMNS)])
            out.append(DeletedMemory(trash_id, memory, timestamps.parse(deleted_at), reason, batch_id))
        return out

    def batch_rows(self: Store, batch: str) -> dict[str, int]:
        """memory id -> trash id of the rows a delete's ``batch`` put in the trash (still there)."""
        if not self.has_table("ora_desktop_trash"):
            return {}
        return {r[0]: r[1] for r in self._execute("SELECT memory_id, id FROM ora_desktop_trash WHERE batch = ?",
                                                 [batch])}

    def trash_ids_present(self: Store, trash_ids: Iterable[int]) -> frozenset[int]:
        """Which of ``trash_ids`` the trash holds (one statement)."""
        wanted = [int(t) for t in trash_ids]
        if not wanted or not self.has_table("ora_desktop_trash"):
            return frozenset()
        rows = self._execute("SELECT id FROM ora_desktop_trash WHERE id IN (SELECT value FROM json_each(?))",
                            [json.dumps(wanted)])
        return frozenset(r[0] for r in rows)

    def latest_trash_ids(self: Store, memory_ids: Iterable[str]) -> dict[str, int]:
        """memory id -> trash id of its most recently deleted copy (ids not in the trash are absent)."""
        wanted = list(dict.fromkeys(memory_ids))
        if not wanted or not self.has_table("ora_desktop_trash"):
            return {}
        rows = self._execute("SELECT memory_id, max(id) FROM ora_desktop_trash WHERE memory_id IN "
                            "(SELECT value FROM json_each(?)) GROUP BY memory_id", [json.dumps(wanted)])
        return {r[0]: r[1] for r in rows}

    def trash_count(self: Store) -> int:
        """How many rows the trash holds."""
        if not self.has_table("ora_desktop_trash"):
            return 0
        return self._one("SELECT count(*) FROM ora_desktop_trash")[0]

    def restore_choice(self: Store, trash_ids: Sequence[int]) -> tuple[dict[int, str], tuple[str, ...]]:
        """(trash id -> memory id of the rows a restore of ``trash_ids`` brings back, the memory
        ids it leaves): of several trashed copies of one id, the latest deleted comes back; the
        rest, and any whose id exists again, stay in the trash and are reported as skipped."""
        wanted = "(SELECT value FROM json_each(?))"
        chosen = {tid: mid for tid, mid in self._execute(
            f"SELECT max(id), memory_id FROM ora_desktop_trash WHERE id IN {wanted} "
            "AND memory_id NOT IN (SELECT id FROM memories) GROUP BY memory_id",
            [json.dumps(list(trash_ids))],
        )}
        present = {tid: mid for tid, mid in self._execute(
            f"SELECT id, memory_id FROM ora_desktop_trash WHERE id IN {wanted}", [json.dumps(list(trash_ids))]
        )}
        return chosen, tuple(dict.fromkeys(mid for tid, mid in present.items() if tid not in chosen))

    def restore_deleted(self: Store, trash_ids: Iterable[int]) -> tuple[Change, tuple[str, ...]]:
        """Put trashed rows back. Returns (what was added, ids left in the trash because a memory
        with that id exists again or a later-deleted copy of it was restored)."""
        trash_ids = [int(t) for t in trash_ids]
        self._require_writable()
        if not trash_ids or not self.has_table("ora_desktop_trash"):
            return Change(), ()
        with self.write():
            chosen, skipped = self.restore_choice(trash_ids)
            relinked: frozenset[str] = frozenset()
            if chosen:
                batches = {r[4] for r in self.put_back_part(list(chosen))}
                relinked = restore_links(self, batches, chosen.values())
                forget_batches(self)
        restored = tuple(chosen.values())
        change = Change(added=frozenset(restored), changed=relinked - frozenset(restored), source="restore",
                        kind=ChangeKind.RESTORED)
        self._emit(change)
        return change, skipped

    # --- parts of a restore or an undo written in chunks (core/operations/chunked_undo.py) ---
    def trash_part(self: Store, ids: Sequence[str], reason: str, batch: str,
                   among: Linkers | None = None) -> tuple[frozenset[str], frozenset[str]]:
        """Inside a write: move memories ``ids`` to the trash under ``batch`` (links kept whole, as
        :meth:`remove_where_recoverably` does; ``among``: who linked to them, read before the
        first part), telling no listener. Returns (the ids removed, the other memories that lost
        a link)."""
        done = _Removal(self, reason, batch, timestamps.now_sql(), False, None)
        done.among = among
        done.step(f"id IN {_IDS_JSON}", [json.dumps(list(ids))])
        _removed, gone, relinked, _count = done.chunk
        return gone, relinked

    def put_back_part(self: Store, trash_ids: Sequence[int]) -> list[tuple[int, str, str, str, str]]:
        """Inside a write: put the rows ``trash_ids`` hold back into ``memories`` and take them out
        of the trash, leaving a row whose memory exists again; no links, no listener (the caller
        restores the batches' links once, at its end). Returns (trash id, memory id, deleted at,
        reason, batch) of each row put back, what :meth:`take_back_part` needs to undo it."""
        wanted = json.dumps([int(t) for t in trash_ids])
        records = [tuple(r) for r in self._execute(
            f"SELECT id, memory_id, deleted_at, reason, batch FROM ora_desktop_trash WHERE id IN {_IDS_JSON} "
            "AND memory_id NOT IN (SELECT id FROM memories) ORDER BY id", [wanted])]
        if records:
            chosen = json.dumps([r[0] for r in records])
            cols = ", ".join(f'"{c}"' for c in self.columns)
            extracts = ", ".join(f"json_extract(row_json, '$.\"{c}\"')" for c in self.columns)
            self._execute(f"INSERT INTO memories ({cols}) SELECT {extracts} FROM ora_desktop_trash "
                          f"WHERE id IN {_IDS_JSON}", [chosen])
            self._execute(f"DELETE FROM ora_desktop_trash WHERE id IN {_IDS_JSON}", [chosen])
        return records  # type: ignore[return-value]

    def take_back_part(self: Store, records: Sequence[Sequence[Any]]) -> None:
        """Inside a write: undo :meth:`put_back_part` — each memory back in the trash under its
        old trash id, batch, reason and time, and out of ``memories``."""
        if not records:
            return
        pairs = ", ".join(f"'{c}', m.\"{c}\"" for c in self.columns)
        self._execute(
            "INSERT INTO ora_desktop_trash (id, memory_id, deleted_at, reason, batch, row_json) "
            f"SELECT r.value ->> 0, m.id, r.value ->> 2, r.value ->> 3, r.value ->> 4, json_object({pairs}) "
            "FROM json_each(?) r JOIN memories m ON m.id = r.value ->> 1",
            [json.dumps([list(r) for r in records])])
        self._execute(f"DELETE FROM memories WHERE id IN {_IDS_JSON}", [json.dumps([r[1] for r in records])])

    def purge_trash(self: Store, older_than_days: float) -> int:
        """Forget trashed rows deleted more than N days ago; returns how many."""
        self._require_writable()
        if not self.has_table("ora_desktop_trash"):
            return 0
        with self.write():
            count = self._execute(
                "DELETE FROM ora_desktop_trash WHERE julianday(deleted_at) < julianday('now') - ?",
                (float(older_than_days),),
            ).rowcount
            forget_batches(self)
            return count


class _Removal:
    """One recoverable removal, possibly over several chunks sharing its trash batch."""

    def __init__(self, store: Store, reason: str, batch: str, stamp: str, return_records: bool,
                 previous: dict[str, dict[str, Any]] | None) -> None:
        self.store, self.reason, self.batch, self.stamp = store, reason, batch, stamp
        self.return_records, self.previous = return_records, previous
        self.records: list[Any] = []
        self.ids: set[str] = set()
        self.relinked: set[str] = set()
        self.count = 0
        self.chunk: tuple[tuple, frozenset[str], frozenset[str], int] = ((), frozenset(), frozenset(), 0)
        self.among: Linkers | None = None  # in chunks: who linked to these rows before the first chunk
        self.unlink = True  # take the rows' ids out of the other memories' links (recorded in the batch)

    def step(self, where: str, params: Sequence[Any]) -> int:
        """Trash and delete the rows ``where`` matches (inside a write); returns how many went.
        What went counts once the transaction commits (:meth:`keep`)."""
        store = self.store
        store.ensure_engine_tables()  # in the same transaction: a failed delete creates nothing
        pairs = ", ".join(f"'{c}', \"{c}\"" for c in store.columns)
        removed = tuple(store._rows(where, params)) if self.return_records else ()
        ids = frozenset(m.id for m in removed) if self.return_records else frozenset(
            r[0] for r in store._fetch_all(f"SELECT id FROM memories WHERE {where}", params))
        store._execute(
            "INSERT INTO ora_desktop_trash (memory_id, deleted_at, reason, batch, row_json) "
            f"SELECT id, ?, ?, ?, json_object({pairs}) FROM memories WHERE {where}",
            [self.stamp, self.reason, self.batch, *params],
        )
        # Links kept whole: the other memories' links to these go too, recorded in the batch.
        relinked = unlink_removed(store, ids, self.batch, self.previous, self.among) if ids and self.unlink \
            else frozenset()
        count = store._execute(f"DELETE FROM memories WHERE {where}", params).rowcount
        self.chunk = (removed, ids, relinked, count)
        return count

    def keep(self) -> None:
        """The chunk's transaction committed: count what it removed."""
        removed, ids, relinked, count = self.chunk
        self.records += removed
        self.ids |= ids
        self.relinked |= relinked
        self.count += count
        self.chunk = ((), frozenset(), frozenset(), 0)

    def change(self, pending: bool = False) -> Change:
        removed, ids, relinked, _count = self.chunk if pending else ((), frozenset(), frozenset(), 0)
        gone = frozenset(self.ids | ids)
        rowids = frozenset(m.rowid for m in (*self.records, *removed) if m.rowid is not None)
        return Change(changed=frozenset(self.relinked | relinked) - gone, removed=gone, source=self.reason,
                      kind=ChangeKind.DELETED, removed_rowids=rowids if len(rowids) == len(gone) else frozenset())

    def result(self, pending: bool = False) -> Removed:
        """What went (with ``pending``: including the chunk not yet committed)."""
        removed, _ids, _relinked, count = self.chunk if pending else ((), frozenset(), frozenset(), 0)
        return Removed((*self.records, *removed), self.batch, self.count + count, self.change(pending))

    def tell(self) -> None:
        """Tell listeners once what went (also when a later chunk failed: earlier ones are in);
        inside the caller's transaction the store holds it until that commits."""
        change = self.change()
        if change:
            self.store._emit(change)

from .schema import MEMORY_COLUMNS as _COLUMNS  # noqa: E402
