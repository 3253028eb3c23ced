"""Undo commands for every edit. Each holds what it needs to redo and undo itself.

``QUndoCommand.redo/undo`` are synchronous, but database work must not run on the GUI thread:
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
from . import operations as ops

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
        restore = [*fields] + ([] if "sync_status" in fields else ["sync_status"])
        self.before = ops.values_of(base, restore)
        self.version: str | None = base.version  # what the person saw, then what this step last wrote
        self.written = 0  # when this step last wrote (the curator's write counter), 0 = not yet
        self.result: Memory | None = None

    def _apply(self, store: Store, fields: Mapping[str, Any]) -> Memory:
        # An undo or redo compares with the version the window's own latest write of this memory
        # left (another step's undo is ours, not "another program"); a write by anyone else still
        # conflicts. The first run compares with what the person saw.
        expected = self.version
        if self.written:
            later = self.curator.written_after(self.path, self.memory_id, self.written)
            if later is not None:
                expected = later
        self.result = ops.edit(store, self.memory_id, fields, expected)
        self.version = self.result.version
        self.written = self.curator.remember_write(self.path, self.result)
        return self.result

    def run_redo(self, store: Store) -> Memory:
        return self._apply(store, self.after)

    def run_undo(self, store: Store) -> Memory:
        return self._apply(store, self.before)


class BulkEditCommand(StoreCommand):
    """The same values on many memories; undo restores each memory's own previous values."""

    def __init__(self, curator: Curator, path: Path, ids: Sequence[str], values: Mapping[str, Any],
                 label: str) -> None:
        super().__init__(curator, path, f"{label} on {memories(len(ids))}")
        self.ids = list(ids)
        self.values = dict(values)
        self.before: list[tuple[dict[str, Any], list[str]]] = []

    def run_redo(self, store: Store) -> Any:
        if not self.before:
            self.before = ops.bulk_before(store, self.ids, list(self.values))
        return ops.bulk_apply(store, [(self.values, self.ids)])

    def run_undo(self, store: Store) -> Any:
        return ops.bulk_apply(store, self.before)


class DeleteCommand(StoreCommand):
    """Recoverable delete; undo brings the memories back from the trash."""

    def __init__(self, curator: Curator, path: Path, ids: Sequence[str], reason: str = "deleted in the window") -> None:
        super().__init__(curator, path, f"delete {memories(len(ids))}")
        self.ids = list(ids)
        self.reason = reason
        self.batch: str | None = None

    def run_redo(self, store: Store) -> Any:
        removed, self.batch = ops.delete(store, self.ids, self.reason)
        return removed

    def run_undo(self, store: Store) -> Any:
        return ops.restore_ids(store, self.ids)


class RestoreCommand(StoreCommand):
    """Bring memories back from the trash; undo deletes them again (recoverably)."""

    def __init__(self, curator: Curator, path: Path, trash_ids: Sequence[int]) -> None:
        super().__init__(curator, path, f"restore {memories(len(trash_ids))}")
        self.trash_ids = list(trash_ids)
        self.ids: list[str] = []
        self.batch: str | None = None
        self.skipped: tuple[str, ...] = ()

    def run_redo(self, store: Store) -> Any:
        if self.batch is None:
            change, self.skipped = ops.restore(store, self.trash_ids)
            self.ids = sorted(change.added)
            return change
        return ops.restore_ids(store, self.ids)

    def run_undo(self, store: Store) -> Any:
        removed, self.batch = ops.delete(store, self.ids, "undo restore")
        return removed


class AddCommand(StoreCommand):
    """A new memory (with a fixed id so redo re-creates the same one); undo deletes it recoverably."""

    def __init__(self, curator: Curator, path: Path, fields: Mapping[str, Any], label: str = "new memory") -> None:
        super().__init__(curator, path, label)
        self.fields = dict(fields)
        self.memory: Memory | None = None
        self.batch: str | None = None

    def run_redo(self, store: Store) -> Any:
        if self.batch is not None and self.memory is not None:
            return ops.restore_ids(store, [self.memory.id])
        self.memory = ops.add(store, self.fields)
        self.fields["id"] = self.memory.id
        return self.memory

    def run_undo(self, store: Store) -> Any:
        assert self.memory is not None
        removed, self.batch = ops.delete(store, [self.memory.id], "undo new memory")
        return removed


class SupersedeCommand(StoreCommand):
    def __init__(self, curator: Curator, path: Path, old: Memory, new: Memory) -> None:
        super().__init__(curator, path, f"supersede “{old.title[:30]}” with “{new.title[:30]}”")
        self.old_id, self.new_id, self.previous = old.id, new.id, old.superseded_by

    def run_redo(self, store: Store) -> Any:
        return ops.set_superseded(store, self.old_id, self.new_id)

    def run_undo(self, store: Store) -> Any:
        return ops.set_superseded(store, self.old_id, self.previous)


class MergeCommand(StoreCommand):
    """A new memory that supersedes two; undo restores both and trashes the merged one."""

    def __init__(self, curator: Curator, path: Path, first: Memory, second: Memory, fields: Mapping[str, Any]) -> None:
        super().__init__(curator, path, f"merge “{first.title[:25]}” and “{second.title[:25]}”")
        self.first, self.second = first.id, second.id
        self.fields = dict(fields)
        self.merged: Memory | None = None
        self.before: dict[str, Any] = {}
        self.batch: str | None = None

    def run_redo(self, store: Store) -> Any:
        if self.merged is not None:
            if self.batch:
                ops.restore_ids(store, [self.merged.id])
            store.supersede(self.first, self.merged.id)
            return store.supersede(self.second, self.merged.id)
        self.merged, self.before = ops.merge(store, self.first, self.second, self.fields)
        return self.merged

    def run_undo(self, store: Store) -> Any:
        assert self.merged is not None
        change = ops.unmerge(store, self.merged.id, self.before)
        self.batch = getattr(store, "last_trash_batch", None)
        return change


class LinkCommand(StoreCommand):
    def __init__(self, curator: Curator, path: Path, memory_id: str, other_id: str, add: bool) -> None:
        super().__init__(curator, path, f"{'link' if add else 'unlink'} {memory_id} and {other_id}")
        self.memory_id, self.other_id, self.add = memory_id, other_id, add

    def run_redo(self, store: Store) -> Any:
        call = store.link if self.add else store.unlink
        return call(self.memory_id, self.other_id)

    def run_undo(self, store: Store) -> Any:
        call = store.unlink if self.add else store.link
        return call(self.memory_id, self.other_id)
