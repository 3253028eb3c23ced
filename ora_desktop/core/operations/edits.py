"""A person's writes to memories: edit, bulk edit, add, delete, restore from the trash, supersede, link.

The CLI and the window call these (never ``Store`` writes of their own). Each runs in one
``BEGIN IMMEDIATE`` transaction, validates before any SQL (``Store`` does), and returns a frozen
result carrying the :class:`~ora_desktop.core.records.Change` (kind, exact ids, initiator) and
the id of its :mod:`.journal` entry, which :func:`ora_desktop.core.operations.undo.undo` reverses.
Pass ``journal=False`` for a write that must not be undoable from the journal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import chunks, feedreaders, timestamps
from ..errors import InvalidValue, NotFound
from ..fingerprint import check_version
from ..records import Change, ChangeKind, Initiator, Memory, Removed
from ..validation import check_id
from . import chunked_undo, journal
from .undo import undo

if TYPE_CHECKING:
    from ..store import Store

#: Columns every edit also moves (the sync rule): an undo puts them back too.
SYNC_COLUMNS = ("updated_at", "sync_status")


@dataclass(frozen=True, slots=True)
class Written:
    """What any journalled write returns: its ``Change`` and its journal entry (``None``: not journalled)."""

    change: Change
    entry: int | None


@dataclass(frozen=True, slots=True)
class Edited(Written):
    """One memory after an edit."""

    memory: Memory


@dataclass(frozen=True, slots=True)
class Added(Written):
    """The new memory as stored."""

    memory: Memory


@dataclass(frozen=True, slots=True)
class Deleted(Written):
    """What a recoverable delete removed, and the trash batch and rows that hold it."""

    removed: tuple[Memory, ...]
    batch: str | None
    trash_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Restored(Written):
    """Memories brought back from the trash; ``skipped`` ids exist again, so stayed in the trash;
    ``note``: a step in chunks stopped part-way before, taken back first (:mod:`.chunked_undo`)."""

    restored: tuple[str, ...]
    skipped: tuple[str, ...]
    note: str | None = None


def require_ids(store: Store, ids: Sequence[str]) -> dict[str, Memory]:
    """The memories with these ids; ``NotFound`` naming every missing id (nothing changed)."""
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {', '.join(repr(i) for i in missing)} (nothing changed)")
    return found


def field_values(memory: Memory, fields: Sequence[str]) -> dict[str, Any]:
    """Column values of ``memory`` for ``fields``, in the form :func:`edit` accepts (a timestamp
    the file holds in a form we could not read is given back as its raw text)."""
    out: dict[str, Any] = {}
    for name in fields:
        value = getattr(memory, name)
        if name == "expires_at":
            raw = dict(memory.unparsed).get(name)
            value = raw if raw is not None else (None if value is None else timestamps.to_sql(value))
        elif name == "related_to":
            value = list(value) if value else None
        out[name] = value
    return out


def _finish(store: Store, change: Change, label: str, undo: journal.Undo, journalled: bool,
            actor: str | None = None, whole: bool = True, after: journal.Ahead | None = None,
            rows: journal.Ahead | None = None) -> int | None:
    """Journal ``change`` when asked to and it touched anything (inside the operation's write);
    listeners hear ``change`` as this commit (:meth:`Store.announce`), once (``whole``: it is the
    whole transaction's). ``after``, ``rows``: what earlier chunks prepared (``journal.record``)."""
    if whole:
        store.announce(change)
    if not (journalled and change):
        return None
    return journal.record(store, change, label, undo, actor, after, rows)


def _plural(count: int) -> str:
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


def edit(store: Store, memory_id: str, fields: Mapping[str, Any], *, expected_version: str | None = None,
         initiator: Initiator = Initiator.USER, journal_it: bool = True, actor: str | None = None) -> Edited:
    """Change fields of one memory through the sync rule; ``Conflict`` (nothing written) if any
    column changed since ``expected_version`` (the ``version`` of the record the edit started
    from), compared inside the write transaction."""
    memory_id = check_id(memory_id)
    if not fields:
        raise InvalidValue("fields", "nothing to change")
    if expected_version is not None:
        check_version(expected_version)
    with store.write():
        store.require_versions({memory_id: expected_version})  # gone or moved on: nothing written
        before = journal.capture(store, [memory_id], [*fields, *SYNC_COLUMNS])
        memory = store.update(memory_id, **fields)
        change = Change(changed=frozenset({memory_id}), source="edit", kind=ChangeKind.EDITED, initiator=initiator)
        names = ", ".join(f.replace("_", " ") for f in fields)
        entry = _finish(store, change, f"edit {names} of {memory_id}", journal.Undo(rows=before), journal_it, actor)
    return Edited(change, entry, memory)


def bulk_edit(store: Store, ids: Iterable[str], fields: Mapping[str, Any], *,
              expected_versions: Mapping[str, str] | None = None, initiator: Initiator = Initiator.USER,
              journal_it: bool = True, actor: str | None = None) -> Written:
    """The same values on many memories in one statement; every id must exist and, where
    ``expected_versions`` gives its ``version`` as read, still be at it (else ``Conflict``):
    otherwise nothing changes."""
    ids = list(dict.fromkeys(ids))
    if not fields:
        raise InvalidValue("fields", "nothing to change")
    for version in (expected_versions or {}).values():
        check_version(version)
    label = f"set {', '.join(f.replace('_', ' ') for f in fields)} on {_plural(len(ids))}"
    if len(ids) > chunks.FIRST and not store.db.in_transaction():
        return _bulk_edit_in_chunks(store, ids, fields, expected_versions or {}, initiator, journal_it, actor, label)
    with store.write():
        store.require_versions({i: (expected_versions or {}).get(i) for i in ids})  # all there, none moved on
        before = journal.capture(store, ids, [*fields, *SYNC_COLUMNS])
        changed = store.update_many(ids, **fields).changed
        change = Change(changed=changed, source="bulk edit", kind=ChangeKind.EDITED, initiator=initiator)
        entry = _finish(store, change, label, journal.Undo(rows=before), journal_it, actor)
    return Written(change, entry)


def _bulk_edit_in_chunks(store: Store, ids: list[str], fields: Mapping[str, Any], expected: Mapping[str, str],
                         initiator: Initiator, journal_it: bool, actor: str | None, label: str) -> Written:
    """:func:`bulk_edit` of many memories in short transactions (:mod:`..chunks`), so an agent
    writing beside it never waits long for the lock. Each chunk checks its memories are all there
    and at their expected versions, and keeps their values as they were and their versions as it
    leaves them (encoded between chunks, outside the lock); the last one journals the whole edit
    (one undo step). A chunk that finds a memory gone or moved on undoes the chunks before it
    and raises, so nothing changes, as in one transaction (unless another program changed one of
    those memories meanwhile: then that undo is refused, and says so)."""
    before, after = journal.Ahead(), journal.Ahead()
    changed: set[str] = set()
    entry: int | None = None
    sizer, at = chunks.new_sizer(), 0
    try:
        while at < len(ids):
            part = ids[at:at + sizer.size]
            at += len(part)
            kept: dict[str, Any] = {}

            def chunk(part: list[str] = part, final: bool = at >= len(ids), kept: dict[str, Any] = kept) -> int:
                store.require_versions({i: expected.get(i) for i in part})
                kept["before"] = journal.capture(store, part, [*fields, *SYNC_COLUMNS])
                kept["changed"] = done = store.update_many(part, **fields).changed
                store.announce(_bulk_change(done, initiator))  # (listeners hear each chunk's commit)
                if final:
                    kept["entry"] = _finish(store, _bulk_change(changed | done, initiator), label,
                                            journal.Undo(rows=kept["before"]), journal_it, actor, whole=False,
                                            after=after, rows=before)
                else:
                    kept["after"] = journal.fingerprints(store, done)
                return len(part)

            chunks.timed_write(store, sizer, chunk)  # (what it kept counts once it committed)
            changed.update(kept["changed"])
            entry = kept.get("entry")
            if "after" in kept:  # (encoded here, between two chunks)
                before.add(kept["before"])
                after.add(kept["after"])
    except Exception:  # (a conflict, a file gone read-only, a failed statement: nothing half done)
        if changed:
            _take_back(store, _bulk_change(changed, initiator), label, before, after)
        raise
    return Written(_bulk_change(changed, initiator), entry)


def _bulk_change(changed: set[str], initiator: Initiator) -> Change:
    return Change(changed=frozenset(changed), source="bulk edit", kind=ChangeKind.EDITED, initiator=initiator)


def _take_back(store: Store, change: Change, label: str, before: journal.Ahead, after: journal.Ahead) -> None:
    """Undo the chunks of a bulk edit that stopped part way (journalled, then undone at once)."""
    with store.write():
        entry = journal.record(store, change, f"{label} (stopped part way)", journal.Undo(), after=after, rows=before)
    undo(store, entry)
    with store.write():
        journal.forget(store, entry)  # (a step stopped part way is not one to redo)


def add(store: Store, content: str, type: str = "fact", importance: int = 5, *, initiator: Initiator = Initiator.USER,
        journal_it: bool = True, actor: str | None = None, **fields: Any) -> Added:
    """A new memory (``Store.add``'s arguments, ``on_duplicate`` included)."""
    with store.write():
        memory = store.add(content, type, importance, **fields)
        change = Change(added=frozenset({memory.id}), source="add", kind=ChangeKind.ADDED, initiator=initiator)
        entry = _finish(store, change, f"add {memory.id}", journal.Undo(added=(memory.id,)), journal_it, actor)
    return Added(change, entry, memory)


def delete(store: Store, ids: str | Iterable[str], reason: str = "deleted", *, initiator: Initiator = Initiator.USER,
           journal_it: bool = True, actor: str | None = None) -> Deleted:
    """Delete recoverably (full rows to the trash first); every id must exist, or nothing goes."""
    wanted = [ids] if isinstance(ids, str) else list(dict.fromkeys(ids))
    if not wanted:
        raise InvalidValue("ids", "no memory to delete")
    require_ids(store, wanted)
    # Many ids go in short transactions (the write lock is never held long) under one trash
    # batch; the journal entry is written with the last of them, so one undo restores them all.
    # The links other memories lose go back with the batch; their previous updated_at and
    # sync_status are kept here so an undo leaves them exactly as they were.
    linking: dict[str, dict[str, Any]] = {}
    entries: list[int | None] = []
    gone = journal.absent(wanted) if journal_it and len(wanted) > 1 else None  # (encoded before the lock)

    def journal_it_now(removed: Removed) -> None:
        change = removed.change.but(kind=ChangeKind.DELETED, initiator=initiator)
        rows = {i: v for i, v in linking.items() if i in change.changed}
        entries.append(_finish(store, change, f"delete {_plural(len(wanted))}",
                               journal.Undo(batch=removed.batch, rows=rows), journal_it, actor, whole=False,
                               after=gone))

    with feedreaders.initiated(initiator):  # (heard once, after the last chunk)
        removed = store.delete(wanted, reason=reason, previous=linking, last_step=journal_it_now)
    trash_ids = tuple(sorted(store.batch_rows(removed.batch).values()))
    change = removed.change.but(kind=ChangeKind.DELETED, initiator=initiator)
    entry = entries[-1] if entries else None
    return Deleted(change, entry, tuple(removed), removed.batch, trash_ids)


def restore(store: Store, trash_ids: Iterable[int], *, initiator: Initiator = Initiator.USER,
            journal_it: bool = True, actor: str | None = None) -> Restored:
    """Bring trashed rows back by trash id (``NotFound`` for an unknown one, nothing restored)."""
    wanted = list(dict.fromkeys(int(t) for t in trash_ids))
    note = None
    if not store.db.in_transaction():
        note = chunked_undo.recover(store)  # a step in chunks whose process ended: taken back first
        if len(wanted) > chunks.FIRST:
            _unknown_trash_rows(store, wanted)
            return _restore_in_chunks(store, wanted, initiator, journal_it, actor, note)
    with store.write():
        _unknown_trash_rows(store, wanted)
        change, skipped = store.restore_deleted(wanted)
        change = change.but(initiator=initiator)
        entry = _finish(store, change, f"restore {_plural(len(change.added))} from the trash",
                        journal.Undo(added=tuple(sorted(change.added))), journal_it, actor)
    return Restored(change, entry, tuple(sorted(change.added)), skipped, note)


def _unknown_trash_rows(store: Store, wanted: list[int]) -> None:
    known = store.trash_ids_present(wanted)
    unknown = [t for t in wanted if t not in known]
    if unknown or not wanted:
        raise NotFound(f"{store.path}: no trash row {', '.join(map(str, unknown)) or '(none given)'} "
                       "(see 'ora-desktop trash'; nothing restored)")


def _restore_in_chunks(store: Store, wanted: list[int], initiator: Initiator, journal_it: bool, actor: str | None,
                       note: str | None) -> Restored:
    """:func:`restore` of many rows in short transactions (:mod:`.chunked_undo`), one journal
    step, heard once at the last chunk."""
    chosen, skipped = store.restore_choice(wanted)
    label = f"restore {_plural(len(chosen))} from the trash"
    entry: list[int | None] = []

    def finish(progress: chunked_undo.Progress) -> Change:
        change = _restored(progress, initiator)
        undo = journal.Undo(added=tuple(sorted(change.added)))
        entry.append(journal.record(store, change, label, undo, actor, after=progress.after)
                     if journal_it and change else None)
        return change

    plan = chunked_undo.Plan("restore", label, trash=list(chosen), skip_present=True, initiator=initiator)
    progress = chunked_undo.apply(store, plan, finish)
    change = _restored(progress, initiator)
    return Restored(change, entry[-1], tuple(sorted(change.added)), (*skipped, *progress.skipped), note)


def _restored(progress: chunked_undo.Progress, initiator: Initiator) -> Change:
    return progress.change().but(source="restore", kind=ChangeKind.RESTORED, initiator=initiator)


def restore_latest(store: Store, ids: Sequence[str], *, initiator: Initiator = Initiator.USER,
                   journal_it: bool = True, actor: str | None = None) -> Restored:
    """Bring ``ids`` back from the trash: the most recently deleted copy of each."""
    latest = store.latest_trash_ids(ids)
    missing = [i for i in ids if i not in latest]
    if missing:
        raise NotFound(f"{store.path}: {', '.join(map(repr, missing[:5]))} not in the trash (nothing restored)")
    return restore(store, [latest[i] for i in ids], initiator=initiator, journal_it=journal_it, actor=actor)


def supersede(store: Store, old_id: str, new_id: str | None, *, expected_version: str | None = None,
              initiator: Initiator = Initiator.USER, journal_it: bool = True, actor: str | None = None) -> Written:
    """Mark ``old_id`` as superseded by ``new_id`` (cycles refused), or clear it with ``None``;
    ``Conflict`` (nothing written) if ``old_id`` changed since ``expected_version``."""
    old_id = check_id(old_id, "old_id")
    if expected_version is not None:
        check_version(expected_version)
    with store.write():
        store.require_versions({old_id: expected_version})  # gone or moved on: nothing written
        before = journal.capture(store, [old_id], ["superseded_by", *SYNC_COLUMNS])
        if new_id:
            store.supersede(old_id, check_id(new_id, "new_id"))
        else:
            store.update(old_id, superseded_by=None)
        change = Change(changed=frozenset({old_id}), source="supersede", kind=ChangeKind.SUPERSEDED,
                        initiator=initiator)
        label = f"supersede {old_id} with {new_id}" if new_id else f"clear what supersedes {old_id}"
        entry = _finish(store, change, label, journal.Undo(rows=before), journal_it, actor)
    return Written(change, entry)


def link(store: Store, a: str, b: str, *, mutual: bool = True, remove: bool = False,
         initiator: Initiator = Initiator.USER, journal_it: bool = True, actor: str | None = None) -> Written:
    """Relate two memories through ``related_to`` (both ways unless ``mutual=False``), or unlink them."""
    a, b = check_id(a, "id"), check_id(b, "other_id")
    with store.write():
        before = journal.capture(store, [a, b], ["related_to", *SYNC_COLUMNS])
        relinked = store.unlink(a, b, mutual=mutual) if remove else store.link(a, b, mutual=mutual)
        change = Change(changed=relinked.changed, source="unlink" if remove else "link", kind=ChangeKind.LINKED,
                        initiator=initiator)
        rows = {i: v for i, v in before.items() if i in change.changed}
        entry = _finish(store, change, f"{'unlink' if remove else 'link'} {a} and {b}", journal.Undo(rows=rows),
                        journal_it, actor)
    return Written(change, entry)


@dataclass(frozen=True, slots=True)
class LinksRepaired(Written):
    """A ``related_to`` that was not a list of ids, rewritten as the ids it named."""

    original: str
    kept: tuple[str, ...]


_ID_TOKEN = re.compile(r"[^\s\"'\[\]{},;]+")


def repair_links(store: Store, memory_id: str, *, initiator: Initiator = Initiator.USER,
                 journal_it: bool = True) -> LinksRepaired:
    """Rewrite a malformed ``related_to`` as the JSON list of the memory ids found in its text
    (words naming a memory of this file, in order, itself excepted); undoable like any edit, so
    the original text comes back with Ctrl+Z or ``ora-desktop undo``."""
    memory_id = check_id(memory_id)
    with store.write():
        memory = store.get(memory_id)
        if not memory.related_malformed:
            raise InvalidValue("related_to", f"memory {memory_id!r}: related_to is already a list of ids; "
                               "nothing to repair")
        before = journal.capture(store, [memory_id], ["related_to", *SYNC_COLUMNS])
        original = before[memory_id]["related_to"]
        text = original if isinstance(original, str) else str(original)
        words = [w for w in dict.fromkeys(_ID_TOKEN.findall(text)) if w != memory_id]
        found = set(store.get_many(words)) if words else set()
        kept = tuple(w for w in words if w in found)
        store.update(memory_id, related_to=list(kept))
        change = Change(changed=frozenset({memory_id}), source="repair_links", kind=ChangeKind.LINKED,
                        initiator=initiator)
        entry = _finish(store, change, f"repair the links of {memory_id}", journal.Undo(rows=before), journal_it)
    return LinksRepaired(change, entry, text, kept)
