"""Undo of a journalled operation, computed in core for every face (CLI ``undo``, the window's Ctrl+Z).

:func:`undo` takes a :mod:`.journal` entry (default: the file's latest) and, in one
``BEGIN IMMEDIATE`` transaction:

1. refuses with :class:`~ora_desktop.core.errors.Conflict` — nothing changed — when any row the
   operation touched differs from how the operation left it (another program, or a later edit
   not undone first, changed it), or when the trash rows a delete filled are gone;
2. deletes again (recoverably) the memories the operation created;
3. restores the trash batch the operation filled (links included, see ``trash_links``);
4. writes back the previous values of every column the operation changed, ``updated_at`` and
   ``sync_status`` included, so the rows read as before the operation;
   for a decay, puts back every health value it lowered and the previous decay mark
   (:func:`~ora_desktop.core.maintenance.decay.take_back`);
5. forgets the entry, so the next undo takes the one before.

The undo itself is not journalled: undo twice undoes two operations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import Conflict, NotFound
from ..records import Change, ChangeKind, Initiator
from . import journal

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True, slots=True)
class Undone:
    """The journal entry that was undone and what the undo changed."""

    entry: journal.Entry
    change: Change


def undo(store: Store, entry_id: int | None = None, *, initiator: Initiator = Initiator.USER) -> Undone:
    """Reverse journal entry ``entry_id`` (default: the latest); see the module docstring."""
    with store.write():
        if entry_id is None:
            latest = journal.entries(store, limit=1)
            if not latest:
                raise NotFound(f"{store.path}: nothing to undo (no operation is journalled in this file)")
            entry = latest[0]
        else:
            found = journal.get(store, entry_id)
            if found is None:
                raise NotFound(f"{store.path}: that operation is no longer in the undo journal (nothing undone)")
            entry = found
        _refuse_if_stale(store, entry)
        # refuses too when a deleted memory is no longer in the trash
        trash_rows = _trash_rows(store, entry) if entry.undo.batch is not None else []
        change = _revert(store, entry, trash_rows)
        journal.forget(store, entry.id)
    return Undone(entry, change.but(kind=ChangeKind.UNDONE, initiator=initiator, source=f"undo {entry.label}"))


def drop_latest(store: Store) -> journal.Entry:
    """Forget the latest journal entry without undoing it (e.g. one refused as stale), so the
    operation before it can be undone."""
    with store.write():
        latest = journal.entries(store, limit=1)
        if not latest:
            raise NotFound(f"{store.path}: nothing to undo (no operation is journalled in this file)")
        journal.forget(store, latest[0].id)
    return latest[0]


def _refuse_if_stale(store: Store, entry: journal.Entry) -> None:
    now = journal.fingerprints(store, entry.after)
    for memory_id, expected in entry.after.items():
        if now.get(memory_id) != expected:
            what = "was added again" if expected is None else (
                "was deleted" if now.get(memory_id) is None else "was changed")
            raise Conflict(memory_id, f"{store.path}: cannot undo “{entry.label}”: memory {memory_id!r} {what} "
                           "by another program or a later step since; nothing undone")


def _trash_rows(store: Store, entry: journal.Entry) -> list[int]:
    """The trash rows that bring back what a delete removed: its own batch's, or, for a memory
    restored and deleted again since (e.g. by undoing that restore), its latest trashed copy —
    the same row, as the fingerprint check has shown."""
    removed = [i for i, fp in entry.after.items() if fp is None]
    rows = store.batch_rows(entry.undo.batch) if entry.undo.batch else {}
    missing = [i for i in removed if i not in rows]
    rows.update(store.latest_trash_ids(missing))
    gone = [i for i in removed if i not in rows]
    if gone:
        raise Conflict(gone[0], f"{store.path}: cannot undo “{entry.label}”: memory {gone[0]!r} is no longer "
                       "in the trash (purged since); nothing undone")
    return list(rows.values())


def _revert(store: Store, entry: journal.Entry, trash_rows: list[int]) -> Change:
    undo = entry.undo
    added: set[str] = set()
    changed: set[str] = set()
    removed: set[str] = set()
    if undo.added:
        gone = store.delete(list(undo.added), reason=f"undo {entry.label}")
        removed |= gone.change.removed
        changed |= gone.change.changed
    if undo.batch is not None:
        back, _skipped = store.restore_deleted(trash_rows)
        added |= back.added
        changed |= back.changed
    if undo.rows:
        _write_back(store, undo.rows)
        changed |= set(undo.rows)
    if undo.decay is not None:
        from ..maintenance import decay  # the one journalled job

        decay.take_back(store, undo.decay, entry.label)
        # which rows is not listed (a decay may touch a million): views reload
        store._emit(Change(source="undo", kind=ChangeKind.UNDONE))  # noqa: SLF001
    changed -= added | removed
    return Change(frozenset(added), frozenset(changed), frozenset(removed))


def _write_back(store: Store, rows: Mapping[str, Mapping[str, object]]) -> None:
    """Put previous column values back exactly (no sync rule: the row returns to how it was)."""
    groups: dict[tuple[str, ...], list[list[object]]] = {}
    for memory_id, values in rows.items():
        cols = tuple(c for c in values if c in store.columns)
        groups.setdefault(cols, []).append([values[c] for c in cols] + [memory_id])
    for cols, params in groups.items():
        if cols:
            sets = ", ".join(f'"{c}" = ?' for c in cols)
            store.db.cursor().executemany(f"UPDATE memories SET {sets} WHERE id = ?", params)
    # Listeners hear of the rows written back (after the commit, as with every write).
    store._emit(Change(changed=frozenset(rows), source="undo", kind=ChangeKind.UNDONE))  # noqa: SLF001
