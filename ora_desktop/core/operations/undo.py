"""Undo and redo of journalled operations, computed in core for every face (CLI ``undo``/``redo``,
the window's Undo/Redo): one history per file, the file's :mod:`.journal`.

:func:`undo` takes a journal entry (default: the file's latest step not undone) and, in one
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
5. marks the entry undone, keeping what redoes it — the undo of the undo, in the same shape
   (the rows as they were, the batch the delete filled, the ids restored) — so the next undo
   takes the step before and :func:`redo` the step just undone. A decay's undo cannot be redone:
   its entry is forgotten.

:func:`redo` does the same with the step undone last, checked the same way, and marks it done
again. A new journalled write drops every undone step (:func:`.journal.record`).

A step touching more than :data:`~..chunks.FIRST` memories, asked outside a caller's transaction,
goes in short transactions instead (:mod:`.chunked_undo`): the same checks, each in the chunk that
touches the memory, the chunks written taken back on a refusal, the entry moved with the last one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import chunks
from ..errors import Conflict, NotFound
from ..records import Change, ChangeKind, Initiator
from . import chunked_undo, journal, review

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True, slots=True)
class Undone:
    """The journal entry that was undone and what the undo changed; ``note``: a step in chunks
    stopped part-way before, whose writes were taken back first (:mod:`.chunked_undo`)."""

    entry: journal.Entry
    change: Change
    note: str | None = None


def undo(store: Store, entry_id: int | None = None, *, initiator: Initiator = Initiator.USER) -> Undone:
    """Reverse journal entry ``entry_id`` (default: the latest not undone); see the module docstring."""
    return _step(store, entry_id, "undo", initiator)


def redo(store: Store, entry_id: int | None = None, *, initiator: Initiator = Initiator.USER) -> Undone:
    """Do again journal entry ``entry_id`` (default: the step undone last; ``NotFound`` when it is
    not undone), checked as :func:`undo` checks."""
    return _step(store, entry_id, "redo", initiator)


#: verb -> (nothing to do at all, the entry asked for cannot be taken)
_MISSING = {
    "undo": ("nothing to undo (no operation is journalled in this file)",
             "that operation is no longer in the undo journal (nothing undone)"),
    "redo": ("nothing to redo (no step is undone in this file, or a write since ended the redo branch)",
             "that step can no longer be redone (redone already, or a write since ended the redo branch; "
             "nothing redone)"),
}


def _step(store: Store, entry_id: int | None, verb: str, initiator: Initiator) -> Undone:
    note = None
    if not store.db.in_transaction():
        note = chunked_undo.recover(store)  # a step in chunks whose process ended: taken back first
        entry = _find(store, entry_id, verb)
        if _in_chunks(entry):
            change = _take_back_in_chunks(store, entry, verb, initiator)
            return Undone(entry, change, note)
    with store.write():
        entry = _find(store, entry_id, verb)
        change = _take_back(store, entry, verb)
    return Undone(entry, change.but(kind=ChangeKind.UNDONE, initiator=initiator, source=f"{verb} {entry.label}"),
                  note)


def _find(store: Store, entry_id: int | None, verb: str) -> journal.Entry:
    undoing = verb == "undo"
    if entry_id is None:
        latest = (journal.entries if undoing else journal.redoable)(store, limit=1)
        entry = latest[0] if latest else None
        missing = _MISSING[verb][0]
    else:
        entry = journal.get(store, entry_id)
        entry = entry if entry is not None and entry.undone != undoing else None
        missing = _MISSING[verb][1]
    if entry is None:
        raise NotFound(f"{store.path}: {missing}")
    return entry


def _in_chunks(entry: journal.Entry) -> bool:
    """Whether ``entry`` touches enough memories to be taken back in chunks (decays and review
    marks never are: their reverse lives in their own tables)."""
    return entry.undo.decay is None and entry.undo.review is None and len(entry.after) > chunks.FIRST


def _take_back_in_chunks(store: Store, entry: journal.Entry, verb: str, initiator: Initiator) -> Change:
    """:func:`_take_back` in short transactions (:mod:`.chunked_undo`): one step still, moved to
    the other list with the last chunk."""
    plan = chunked_undo.Plan(
        verb, entry.label, again=entry.undo.added, reason=f"{'redo' if entry.undone else 'undo'} {entry.label}",
        trash=_trash_rows(store, entry, verb) if entry.undo.batch is not None else (),
        rows=entry.undo.rows, expect=entry.after, initiator=initiator)

    def finish(progress: chunked_undo.Progress) -> Change:
        if journal.undone_now(store, entry.id) != entry.undone:
            raise Conflict(next(iter(entry.after)), f"{store.path}: cannot {verb} “{entry.label}”: another "
                           f"process {verb}ne it meanwhile, or it left the journal; nothing {verb}ne")
        change = progress.change()
        reverse = journal.Undo(added=tuple(sorted(change.added)), batch=progress.batch)
        journal.flip(store, entry, reverse, [*entry.after, *change.ids], after=progress.after,
                     rows=progress.previous)
        return change.but(kind=ChangeKind.UNDONE, initiator=initiator, source=f"{verb} {entry.label}")

    return _announced(chunked_undo.apply(store, plan, finish), initiator, f"{verb} {entry.label}")


def _announced(progress: chunked_undo.Progress, initiator: Initiator, source: str) -> Change:
    return progress.change().but(kind=ChangeKind.UNDONE, initiator=initiator, source=source)


def _take_back(store: Store, entry: journal.Entry, verb: str) -> Change:
    """Apply ``entry``'s reverse and flip it (undone <-> done) with the reverse of that."""
    _refuse_if_stale(store, entry, verb)
    # refuses too when a deleted memory is no longer in the trash
    trash_rows = _trash_rows(store, entry, verb) if entry.undo.batch is not None else []
    reverse_rows = journal.capture(store, entry.undo.rows, {c for v in entry.undo.rows.values() for c in v})
    reverse_review = None
    if entry.undo.review is not None:
        reviewer = entry.undo.review["reviewer"]
        reverse_review = {"reviewer": reviewer, "rows": [list(r) for r in review.snapshot(store, reviewer)]}
    change, trashed = _revert(store, entry, trash_rows)
    if entry.undo.decay is not None:
        journal.forget(store, entry.id)  # a decay's undo is not redone
    else:
        reverse = journal.Undo(added=tuple(sorted(change.added)), batch=trashed, rows=reverse_rows,
                               review=reverse_review)
        journal.flip(store, entry, reverse, [*entry.after, *change.ids])
    return change


def drop_latest(store: Store) -> journal.Entry:
    """Forget the latest journal entry without undoing it (e.g. one refused as stale), so the
    operation before it can be undone."""
    with store.write():
        latest = journal.entries(store, limit=1)
        if not latest:
            raise NotFound(f"{store.path}: nothing to undo (no operation is journalled in this file)")
        journal.forget(store, latest[0].id)
    return latest[0]


def _refuse_if_stale(store: Store, entry: journal.Entry, verb: str) -> None:
    now = journal.fingerprints(store, entry.after)
    for memory_id, expected in entry.after.items():
        if now.get(memory_id) != expected:
            what = "was added again" if expected is None else (
                "was deleted" if now.get(memory_id) is None else "was changed")
            raise Conflict(memory_id, f"{store.path}: cannot {verb} “{entry.label}”: memory {memory_id!r} {what} "
                           f"by another program or a later step since; nothing {verb}ne")


def _trash_rows(store: Store, entry: journal.Entry, verb: str) -> list[int]:
    """The trash rows that bring back what a delete removed: its own batch's, or, for a memory
    restored and deleted again since (e.g. by undoing that restore), its latest trashed copy —
    the same row, as the fingerprint check has shown."""
    removed = [i for i, fp in entry.after.items() if fp is None]
    rows = store.batch_rows(entry.undo.batch) if entry.undo.batch else {}
    missing = [i for i in removed if i not in rows]
    rows.update(store.latest_trash_ids(missing))
    gone = [i for i in removed if i not in rows]
    if gone:
        raise Conflict(gone[0], f"{store.path}: cannot {verb} “{entry.label}”: memory {gone[0]!r} is no longer "
                       f"in the trash (purged since); nothing {verb}ne")
    return list(rows.values())


def _revert(store: Store, entry: journal.Entry, trash_rows: list[int]) -> tuple[Change, str | None]:
    """Apply the entry's reverse; returns the change and the trash batch its deletes filled."""
    undo = entry.undo
    trashed: str | None = None
    added: set[str] = set()
    changed: set[str] = set()
    removed: set[str] = set()
    if undo.added:
        gone = store.delete(list(undo.added), reason=f"{'redo' if entry.undone else 'undo'} {entry.label}")
        trashed = gone.batch
        removed |= gone.change.removed
        changed |= gone.change.changed
    if undo.batch is not None:
        back, _skipped = store.restore_deleted(trash_rows)
        added |= back.added
        changed |= back.changed
    if undo.rows:
        _write_back(store, undo.rows, "redo" if entry.undone else "undo")
        changed |= set(undo.rows)
    if undo.review is not None:  # marks are not memory rows: no fingerprints, listeners hear of them
        review.restore(store, undo.review["reviewer"], tuple(tuple(r) for r in undo.review["rows"]))
    if undo.decay is not None:
        from ..maintenance import decay  # the one journalled job

        decay.take_back(store, undo.decay, entry.label)
        # which rows is not listed (a decay may touch a million): views reload
        store._emit(Change(source="undo", kind=ChangeKind.UNDONE))  # noqa: SLF001
    changed -= added | removed
    return Change(frozenset(added), frozenset(changed), frozenset(removed)), trashed


def _write_back(store: Store, rows: Mapping[str, Mapping[str, object]], source: str) -> None:
    """Put previous column values back exactly (no sync rule: the row returns to how it was)."""
    journal.write_back(store, rows)
    # Listeners hear of the rows written back (after the commit, as with every write).
    store._emit(Change(changed=frozenset(rows), source=source, kind=ChangeKind.UNDONE))  # noqa: SLF001
