"""Merging memories, undoably: the one place the merge rules live (CLI, window and duplicates panel).

Two shapes of merge, both journalled (:mod:`.journal`) so :func:`.undo.undo` takes them back:

* :func:`merge_duplicates` keeps one member of a group (``keep``, default :func:`best_member`),
  optionally with merged text; it takes the group's highest importance and every member's
  links, and supersedes the others. Nothing is deleted. (``ora-desktop merge``, the Duplicates panel.)
* :func:`merge_into_new` writes a new memory that supersedes the originals (the window's
  Merge dialog, where the person writes the merged text and fields).

:func:`unmerge` is the undo of either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue, NotFound
from ..fingerprint import check_version
from ..records import Change, ChangeKind, Initiator, Memory
from . import journal
from .edits import SYNC_COLUMNS

if TYPE_CHECKING:
    from ..store import Store

#: Columns a duplicates merge may change on its members (and the undo puts back).
RESTORED = ("content", "importance", "related_to", "superseded_by", *SYNC_COLUMNS)


@dataclass(frozen=True, slots=True)
class MergeResult:
    """A merge: the memory kept (or written), the ones it now supersedes, the ``Change`` and the
    journal entry that :func:`unmerge` reverses."""

    kept: Memory
    superseded: tuple[str, ...]
    change: Change
    entry: int | None


def best_member(memories: Sequence[Memory]) -> Memory:
    """The member to keep: most important, then healthiest, then most recently changed."""
    def key(m: Memory) -> tuple:
        stamp = m.updated_at or m.created_at
        return (m.importance or 0, m.health_score or 0.0, stamp.timestamp() if stamp else 0.0)
    return max(memories, key=key)


def _check(ids: Sequence[str], versions: Mapping[str, str] | None) -> list[str]:
    """The distinct ids (at least two), the versions' shape checked: before any SQL."""
    ids = list(dict.fromkeys(str(i) for i in ids))
    if len(ids) < 2:
        raise InvalidValue("ids", "a merge needs at least two memories")
    for version in (versions or {}).values():
        check_version(version)
    return ids


def _members(store: Store, ids: list[str], versions: Mapping[str, str] | None) -> tuple[list[str], dict[str, Memory]]:
    """The members as they are inside the merge's transaction; ``Conflict`` when one given a
    version in ``versions`` (what the person merged from) changed or went since."""
    if versions:
        store.require_versions({i: v for i, v in versions.items() if i in ids})
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {missing[0]!r} (nothing merged)")
    return ids, found


def merge_duplicates(store: Store, ids: Sequence[str], keep: str | None = None, text: str | None = None, *,
                     expected_versions: Mapping[str, str] | None = None, initiator: Initiator = Initiator.USER,
                     journal_it: bool = True) -> MergeResult:
    """Keep one member of a group, superseding the others (one transaction, journalled).
    ``expected_versions``: id -> ``version`` of the members as the person saw them; a member changed
    since refuses the merge (``Conflict``, nothing changed)."""
    ids = _check(ids, expected_versions)
    with store.write():
        ids, found = _members(store, ids, expected_versions)
        if keep is not None and keep not in found:
            raise InvalidValue("keep", f"{keep!r} is not one of the merged memories")
        members = [found[i] for i in ids]
        kept = found[keep] if keep is not None else best_member(members)
        others = [m for m in members if m.id != kept.id]
        links = [r for m in [kept, *others] for r in m.related_to if r not in found]
        changes: dict[str, Any] = {}
        if text is not None and text != kept.content:
            changes["content"] = text
        top = max((m.importance or 0) for m in members)
        if "importance" in store.columns and top != (kept.importance or 0):
            changes["importance"] = top
        merged_links = list(dict.fromkeys(links))
        if merged_links != list(kept.related_to):
            changes["related_to"] = merged_links
        before = journal.capture(store, ids, RESTORED)
        if changes:
            store.update(kept.id, **changes)
        for other in others:
            store.supersede(other.id, kept.id)
        change = Change(changed=frozenset(ids), source="merge", kind=ChangeKind.MERGED, initiator=initiator)
        entry = journal.record(store, change, f"merge {len(ids)} memories into {kept.id}",
                               journal.Undo(rows=before)) if journal_it else None
        kept = store.get(kept.id)
    return MergeResult(kept, tuple(m.id for m in others), change, entry)


def merge_into_new(store: Store, ids: Sequence[str], fields: Mapping[str, Any], *,
                   expected_versions: Mapping[str, str] | None = None, initiator: Initiator = Initiator.USER,
                   journal_it: bool = True) -> MergeResult:
    """A new memory (``Store.add``'s fields: content, type, importance …) superseding every one of
    ``ids``; type and importance not given are those of :func:`best_member`, with the group's
    highest importance. ``expected_versions`` as for :func:`merge_duplicates`."""
    if not fields.get("content"):
        raise InvalidValue("content", "the merged memory needs its text")
    ids = _check(ids, expected_versions)
    with store.write():
        ids, found = _members(store, ids, expected_versions)
        best = best_member(list(found.values()))
        top = max((m.importance or 0) for m in found.values()) or None
        defaults = {"type": best.type or "fact", "importance": top or 5}
        before = journal.capture(store, ids, ["superseded_by", *SYNC_COLUMNS])
        merged = store.add(**{**defaults, **fields})
        for memory_id in ids:
            store.supersede(memory_id, merged.id)
        change = Change(added=frozenset({merged.id}), changed=frozenset(ids), source="merge",
                        kind=ChangeKind.MERGED, initiator=initiator)
        entry = journal.record(store, change, f"merge {len(ids)} memories into new {merged.id}",
                               journal.Undo(added=(merged.id,), rows=before)) if journal_it else None
    return MergeResult(merged, tuple(ids), change, entry)


def unmerge(store: Store, merge: MergeResult) -> Change:
    """Undo a merge: every member back as it was; a merged memory that was new goes to the trash."""
    from .undo import undo

    if merge.entry is None:
        raise InvalidValue("merge", "this merge was not journalled, so it cannot be undone")
    return undo(store, merge.entry).change
