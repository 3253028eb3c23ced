"""Recoverable removal (ARCHITECTURE.md, contract 5): rows go to ``ora_desktop_trash`` before they go.

The copy and the delete happen in one ``BEGIN IMMEDIATE`` transaction, as single statements,
so a crash leaves either both or neither. ``restore_deleted`` puts rows back.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from . import timestamps
from .records import Change, ChangeKind, DeletedMemory, Removed, row_to_memory
from .trash_links import forget_batches, restore_links, unlink_removed

if TYPE_CHECKING:
    from .store import Store


class TrashMixin:
    """Methods of :class:`~ora_desktop.core.store.Store` for recoverable deletes."""

    def remove_where_recoverably(self: Store, where: str, params: Sequence[Any], reason: str,
                                 return_records: bool = True,
                                 previous: dict[str, dict[str, Any]] | None = None) -> Removed:
        """Copy matching rows (every column, extras included) to the trash, then delete them.

        Returns the removed records (none when ``return_records`` is false) with the trash batch
        that holds them, the number of rows deleted and the ``Change``. ``previous`` receives the
        link and sync columns, as they were, of the other memories that lost a link."""
        self._require_writable()
        batch = uuid.uuid4().hex[:12]
        stamp = timestamps.now_sql()
        pairs = ", ".join(f"'{c}', \"{c}\"" for c in self.columns)
        with self.write():
            self.ensure_engine_tables()  # in the same transaction: a failed delete creates nothing
            removed = tuple(self._rows(where, params)) if return_records else ()
            ids = frozenset(m.id for m in removed) if return_records else frozenset(
                r[0] for r in self._fetch_all(f"SELECT id FROM memories WHERE {where}", params))
            self._execute(
                "INSERT INTO ora_desktop_trash (memory_id, deleted_at, reason, batch, row_json) "
                f"SELECT id, ?, ?, ?, json_object({pairs}) FROM memories WHERE {where}",
                [stamp, reason, batch, *params],
            )
            # Links kept whole: the other memories' links to these go too, recorded in the batch.
            relinked = unlink_removed(self, ids, batch, previous) if ids else frozenset()
            count = self._execute(f"DELETE FROM memories WHERE {where}", params).rowcount
        rowids = frozenset(m.rowid for m in removed if m.rowid is not None)
        change = self._emit(Change(changed=relinked - ids, removed=ids, source=reason, kind=ChangeKind.DELETED,
                                   removed_rowids=rowids if len(rowids) == len(ids) else frozenset()))
        return Removed(removed, batch, count, change)

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

    def restore_deleted(self: Store, trash_ids: Iterable[int]) -> tuple[Change, tuple[str, ...]]:
        """Put trashed rows back. Returns (what was added, ids left in the trash because a memory
        with that id exists again or a later-deleted copy of it was restored)."""
        trash_ids = [int(t) for t in trash_ids]
        self._require_writable()
        if not trash_ids or not self.has_table("ora_desktop_trash"):
            return Change(), ()
        wanted = "(SELECT value FROM json_each(?))"
        cols = ", ".join(f'"{c}"' for c in self.columns)
        extracts = ", ".join(f"json_extract(row_json, '$.\"{c}\"')" for c in self.columns)
        with self.write():
            # Of several trashed copies of one id, the latest deleted comes back; the rest, and
            # any whose id exists again, stay in the trash and are reported as skipped.
            chosen = {tid: mid for tid, mid in self._execute(
                f"SELECT max(id), memory_id FROM ora_desktop_trash WHERE id IN {wanted} "
                "AND memory_id NOT IN (SELECT id FROM memories) GROUP BY memory_id",
                [json.dumps(trash_ids)],
            )}
            present = {tid: mid for tid, mid in self._execute(
                f"SELECT id, memory_id FROM ora_desktop_trash WHERE id IN {wanted}", [json.dumps(trash_ids)]
            )}
            skipped = tuple(dict.fromkeys(mid for tid, mid in present.items() if tid not in chosen))
            relinked: frozenset[str] = frozenset()
            if chosen:
                batches = [b for (b,) in self._execute(
                    f"SELECT DISTINCT batch FROM ora_desktop_trash WHERE id IN {wanted}", [json.dumps(list(chosen))])]
                chosen_json = json.dumps(list(chosen))
                self._execute(
                    f"INSERT INTO memories ({cols}) SELECT {extracts} FROM ora_desktop_trash "
                    f"WHERE id IN {wanted}", [chosen_json],
                )
                self._execute(f"DELETE FROM ora_desktop_trash WHERE id IN {wanted}", [chosen_json])
                relinked = restore_links(self, batches, chosen.values())
                forget_batches(self)
        restored = tuple(chosen.values())
        change = Change(added=frozenset(restored), changed=relinked - frozenset(restored), source="restore",
                        kind=ChangeKind.RESTORED)
        self._emit(change)
        return change, skipped

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


from .schema import MEMORY_COLUMNS as _COLUMNS  # noqa: E402
