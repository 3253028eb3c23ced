"""The window's steps: thin wrappers that run one journalled core operation on a worker thread.

Each step runs an operation of :mod:`ora_desktop.core.operations` (``edits``, ``merge`` …) that
journals itself in the file, so Undo and Redo are the core journal's
(:mod:`ora_desktop.gui.curate.undo_redo`), the same history ``ora-desktop undo``/``redo`` walk.
The :class:`~ora_desktop.gui.curate.actions.Curator` runs a step with :meth:`StoreCommand.run`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core import Memory, Store

# The operations (edits, merge, undo) are imported where a step runs, on the worker thread: the
# window starts without them and imports them once its first rows are shown (gui/panels.py).

if TYPE_CHECKING:
    from .actions import Curator

Work = Callable[[Store], Any]


def memories(count: int) -> str:
    """``1 memory``, ``1,204 memories``."""
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


class StoreCommand:
    """Base: ``run(store)`` runs the step on a worker thread for ``path``; ``text()`` names it."""

    #: What the step's operation said beside doing it (a step stopped part-way before, taken back
    #: first), shown before its "done" line.
    note: str | None = None

    def __init__(self, curator: Curator, path: Path, text: str) -> None:
        self.curator = curator
        self.path = path
        self._text = text

    def text(self) -> str:
        return self._text

    def run(self, store: Store) -> Any:
        raise NotImplementedError


class EditCommand(StoreCommand):
    """Changed fields of one memory; undo puts the previous values back."""

    def __init__(self, curator: Curator, path: Path, base: Memory, changes: Mapping[str, Any]) -> None:
        fields = list(changes)
        names = ", ".join(f.replace("_", " ") for f in fields)
        super().__init__(curator, path, f"edit {names} of “{base.title[:40]}”")
        self.memory_id = base.id
        self.after = dict(changes)
        self.version: str | None = base.version  # what the person saw: a change since is a conflict
        self.entry: int | None = None

    def run(self, store: Store) -> Memory:
        from ...core.operations import edits

        done = edits.edit(store, self.memory_id, self.after, expected_version=self.version)
        self.entry = done.entry
        return done.memory


class JournalledCommand(StoreCommand):
    """A step that leaves one journal entry (``entry``) in its file."""

    entry: int | None = None


class BulkEditCommand(JournalledCommand):
    """The same values on many memories; undo restores each memory's own previous values."""

    def __init__(self, curator: Curator, path: Path, chosen: Sequence[Memory], values: Mapping[str, Any],
                 label: str) -> None:
        super().__init__(curator, path, f"{label} on {memories(len(chosen))}")
        self.ids = [m.id for m in chosen]
        # What the person chose from: a memory changed since refuses the step (nothing written).
        self.versions = {m.id: m.version for m in chosen if m.version is not None}
        self.values = dict(values)

    def run(self, store: Store) -> Any:
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

    def run(self, store: Store) -> Any:
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

    def run(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.restore(store, self.trash_ids)
        self.ids, self.skipped = list(done.restored), done.skipped
        self.entry, self.note = done.entry, done.note
        return done.change


class AddCommand(JournalledCommand):
    """A new memory; undo deletes it recoverably."""

    def __init__(self, curator: Curator, path: Path, fields: Mapping[str, Any], label: str = "new memory") -> None:
        super().__init__(curator, path, label)
        self.fields = dict(fields)
        self.memory: Memory | None = None

    def run(self, store: Store) -> Any:
        from ...core.operations import edits

        added = edits.add(store, **self.fields)
        self.memory, self.entry = added.memory, added.entry
        return added.memory


class SupersedeCommand(JournalledCommand):
    def __init__(self, curator: Curator, path: Path, old: Memory, new: Memory) -> None:
        super().__init__(curator, path, f"supersede “{old.title[:30]}” with “{new.title[:30]}”")
        self.old_id, self.new_id, self.previous = old.id, new.id, old.superseded_by
        self.version = old.version  # the memory as the dialog showed it

    def run(self, store: Store) -> Any:
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

    def run(self, store: Store) -> Any:
        from ...core.operations.merge import merge_into_new

        done = merge_into_new(store, [self.first, self.second], self.fields, expected_versions=self.versions)
        self.merged, self.entry = done.kept, done.entry
        return done.kept


class LinkCommand(JournalledCommand):
    def __init__(self, curator: Curator, path: Path, memory_id: str, other_id: str, add: bool) -> None:
        super().__init__(curator, path, f"{'link' if add else 'unlink'} {memory_id} and {other_id}")
        self.memory_id, self.other_id, self.add = memory_id, other_id, add

    def run(self, store: Store) -> Any:
        from ...core.operations import edits

        done = edits.link(store, self.memory_id, self.other_id, remove=not self.add)
        self.entry = done.entry
        return done.change


class RepairLinksCommand(JournalledCommand):
    """A ``related_to`` that is not a list of ids becomes the ids its text names; undo restores the text."""

    def __init__(self, curator: Curator, path: Path, memory_id: str) -> None:
        super().__init__(curator, path, f"repair the links of {memory_id}")
        self.memory_id = memory_id

    def run(self, store: Store) -> Any:
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

    def run(self, store: Store) -> Any:
        from ...core.operations.consolidate import apply_cluster

        self.written, self.entry = apply_cluster(store, self.cluster, summary=self.summary)
        return self.written
