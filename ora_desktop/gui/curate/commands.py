"""Undo commands for every edit: thin wrappers over the core operations and their undo.

Each step runs a journalled operation of :mod:`ora_desktop.core.operations` (``edits``,
``merge``) and keeps its journal entry; undo is :func:`ora_desktop.core.operations.undo.undo` of
that entry, so the inverse is computed in core, the same one ``ora-desktop undo`` applies.

``QUndoStack.redo/undo`` are synchronous, but database work must not run on the GUI thread:
each command hands its work to the :class:`~ora_desktop.gui.curate.actions.Curator`, which runs
it on a worker thread, in order. A command is pushed only after its first run succeeded, so
the redo that ``QUndoStack.push`` calls is skipped once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QUndoCommand

from ...core import Memory, Store

# The operations (edits, merge, undo) are imported where a step runs, on the worker thread: the
# window starts without them and imports them once its first rows are shown (gui/panels.py).

if TYPE_CHECKING:
    from .actions import Curator

Work = Callable[[Store], Any]


def memories(count: int) -> str:
    """``1 memory``, ``1,204 memories``."""
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


class StoreCommand(QUndoCommand):
    """Base: ``run_redo(store)`` / ``run_undo(store)`` run on a worker thread for ``path``."""

    def __init__(self, curator: Curator, path: Path, text: str) -> None:
        super().__init__(text)
        self.curator = curator
        self.path = path
        self._pushed = False

    def redo(self) -> None:
        if not self._pushed:  # the first run already happened before the push
            self._pushed = True
            return
        if not self.curator.resyncing:  # the stack is only being put back after a failed step
            self.curator.schedule(self, self.run_redo, f"Redo {self.text()}", undoing=False)

    def undo(self) -> None:
        if not self.curator.resyncing:
            self.curator.schedule(self, self.run_undo, f"Undo {self.text()}", undoing=True)

    def run_redo(self, store: Store) -> Any:
        raise NotImplementedError

    def run_undo(self, store: Store) -> Any:
        raise NotImplementedError


class EditCommand(StoreCommand):
    """Changed fields of one memory; undo puts the previous values back."""

    def __init__(self, curator: Curator, path: Path, base: Memory, changes: Mapping[str, Any]) -> None:
        fields = list(changes)
        names = ", ".join(f.replace("_", " ") for f in fields)
        super().__init__(curator, path, f"edit {names} of “{base.title[:40]}”")
        self.memory_id = base.id
        self.after = dict(changes)
        self.version: str | None = base.version  # what the person saw, then what this step last wrote
        self.written = 0  # when this step last wrote (the curator's write counter), 0 = not yet
        self.entry: int | None = None
        self.result: Memory | None = None

    def _remember(self, memory: Memory) -> Memory:
        self.result = memory
        self.version = memory.version
        self.written = self.curator.remember_write(self.path, memory)
        return memory

    def run_redo(self, store: Store) -> Memory:
        from ...core.operations import edits

        # A redo compares with the version the window's own latest write of this memory left
        # (another step's undo is ours, not "another program"); a write by anyone else still
        # conflicts. The first run compares with what the person saw.
        expected = self.version
        if self.written:
            later = self.curator.written_after(self.path, self.memory_id, self.written)
            if later is not None:
                expected = later
        done = edits.edit(store, self.memory_id, self.after, expected_version=expected)
        self.entry = done.entry
        return self._remember(done.memory)

    def run_undo(self, store: Store) -> Memory:
        from ...core.operations.undo import undo

        undo(store, self.entry)
        return self._remember(store.get(self.memory_id))


class JournalledCommand(StoreCommand):
    """A step whose undo is the core undo of the journal entry its last run left."""

    entry: int | None = None

    def run_undo(self, store: Store) -> Any:
        from ...core.operations.undo import undo

        return undo(store, self.entry).change


class BulkEditCommand(JournalledCommand):
    """The same values on many memories; undo restores each memory's own previous values."""

    def __init__(self, curator: Curator, path: Path, chosen: Sequence[Memory], values: Mapping[str, Any],
                 label: str) -> None:
        super().__init__(curator, path, f"{label} on {memories(len(chosen))}")
        self.ids = [m.id for m in chosen]
        # What the person chose from: a memory changed since refuses the step (nothing written).
        self.versions = {m.id: m.version for m in chosen if m.version is not None}
        self.values = dict(values)

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.bulk_edit(store, self.ids, self.values, expected_versions=self.versions)
        self.entry = done.entry
        return done.change


class DeleteCommand(JournalledCommand):
    """Recoverable delete; undo brings the memories back from the trash."""

    def __init__(self, curator: Curator, path: Path, ids: Sequence[str], reason: str = "deleted in the window") -> None:
        super().__init__(curator, path, f"delete {memories(len(ids))}")
        self.ids = list(ids)
        self.reason = reason
        self.batch: str | None = None

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.delete(store, self.ids, self.reason)
        self.entry, self.batch = done.entry, done.batch
        return done.removed


class RestoreCommand(JournalledCommand):
    """Bring memories back from the trash; undo deletes them again (recoverably)."""

    def __init__(self, curator: Curator, path: Path, trash_ids: Sequence[int]) -> None:
        super().__init__(curator, path, f"restore {memories(len(trash_ids))}")
        self.trash_ids = list(trash_ids)
        self.ids: list[str] = []
        self.skipped: tuple[str, ...] = ()

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        if not self.ids:
            done = edits.restore(store, self.trash_ids)
            self.ids, self.skipped = list(done.restored), done.skipped
        else:  # a redo: the copies the undo put back in the trash
            done = edits.restore_latest(store, self.ids)
        self.entry = done.entry
        return done.change


class AddCommand(JournalledCommand):
    """A new memory (with a fixed id so redo re-creates the same one); undo deletes it recoverably."""

    def __init__(self, curator: Curator, path: Path, fields: Mapping[str, Any], label: str = "new memory") -> None:
        super().__init__(curator, path, label)
        self.fields = dict(fields)
        self.memory: Memory | None = None

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        if self.memory is not None:  # a redo: the memory the undo put in the trash
            done = edits.restore_latest(store, [self.memory.id])
            self.entry = done.entry
            return store.get(self.memory.id)
        added = edits.add(store, **self.fields)
        self.memory, self.entry = added.memory, added.entry
        self.fields["id"] = added.memory.id
        return added.memory


class SupersedeCommand(JournalledCommand):
    def __init__(self, curator: Curator, path: Path, old: Memory, new: Memory) -> None:
        super().__init__(curator, path, f"supersede “{old.title[:30]}” with “{new.title[:30]}”")
        self.old_id, self.new_id, self.previous = old.id, new.id, old.superseded_by
        self.version = old.version  # the memory as the dialog showed it

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.supersede(store, self.old_id, self.new_id, expected_version=self.version)
        self.entry = done.entry
        return done.change


class MergeCommand(JournalledCommand):
    """A new memory that supersedes two; undo restores both and trashes the merged one."""

    def __init__(self, curator: Curator, path: Path, first: Memory, second: Memory, fields: Mapping[str, Any]) -> None:
        super().__init__(curator, path, f"merge “{first.title[:25]}” and “{second.title[:25]}”")
        self.first, self.second = first.id, second.id
        self.versions = {m.id: m.version for m in (first, second) if m.version is not None}
        self.fields = dict(fields)
        self.merged: Memory | None = None

    def run_redo(self, store: Store) -> Any:
        from ...core.operations.merge import merge_into_new

        fields = self.fields if self.merged is None else {**self.fields, "id": self.merged.id}
        done = merge_into_new(store, [self.first, self.second], fields, expected_versions=self.versions)
        self.merged, self.entry = done.kept, done.entry
        return done.kept


class LinkCommand(JournalledCommand):
    def __init__(self, curator: Curator, path: Path, memory_id: str, other_id: str, add: bool) -> None:
        super().__init__(curator, path, f"{'link' if add else 'unlink'} {memory_id} and {other_id}")
        self.memory_id, self.other_id, self.add = memory_id, other_id, add

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.link(store, self.memory_id, self.other_id, remove=not self.add)
        self.entry = done.entry
        return done.change


class RepairLinksCommand(JournalledCommand):
    """A ``related_to`` that is not a list of ids becomes the ids its text names; undo restores the text."""

    def __init__(self, curator: Curator, path: Path, memory_id: str) -> None:
        super().__init__(curator, path, f"repair the links of {memory_id}")
        self.memory_id = memory_id

    def run_redo(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.repair_links(store, self.memory_id)
        self.entry = done.entry
        kept = ", ".join(done.kept) or "no ids"
        self.curator.ctx.status.emit(f"Repaired the links of {self.memory_id}: kept {kept} "
                                     f"(the text was {done.original[:80]!r}; Ctrl+Z puts it back)")
        return done.change


class ConsolidateCommand(JournalledCommand):
    """One reviewed cluster written as a summary (a person's edit of it, or as proposed) that
    supersedes its members; undo trashes the summary and makes the members live again."""

    def __init__(self, curator: Curator, path: Path, cluster: Any, summary: str) -> None:
        super().__init__(curator, path, f"consolidate {memories(len(cluster.ids))}")
        self.cluster, self.summary = cluster, summary
        self.written: Memory | None = None

    def run_redo(self, store: Store) -> Any:
        from ...core.operations.consolidate import apply_cluster

        self.written, self.entry = apply_cluster(store, self.cluster, summary=self.summary)
        return self.written
