"""``Curator``: the curating actions (menus, toolbar, shortcuts) and the runner of the window's steps.

Every change goes through :meth:`Curator.execute`: the step runs its journalled core operation
on a worker thread, one at a time, in order. Undo and Redo (:mod:`.undo_redo`) are the file's
core journal, so they reach every step, the window's and any other program's. An edit that meets
a change made underneath (``Conflict``) asks the person: keep theirs, use mine, or cancel — it
is never overwritten silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from ...core import AgentFile, Change, Conflict, Initiator, Memory, OraError, Store
from ..context import AppContext
from ..detail.view import DetailPane
from ..keyboard import keys
from .commands import (
    AddCommand,
    BulkEditCommand,
    DeleteCommand,
    EditCommand,
    LinkCommand,
    MergeCommand,
    RepairLinksCommand,
    RestoreCommand,
    StoreCommand,
    SupersedeCommand,
    memories,
)
from .dialogs import BulkEditDialog, ConflictDialog, MemoryFieldsDialog, PreviewDialog, SupersedeDialog
from .trash import DeletedView
from .undo_redo import UndoRedo

log = logging.getLogger("ora_desktop.gui")


Selection = Callable[[], Awaitable[list[Memory]]]


class Curator(QObject):
    """See the module docstring."""

    done = Signal(object, object)  # command, result of its first run
    conflict_shown = Signal(object)  # the ConflictDialog (for tests and screenshots)
    deleted_view_made = Signal(object)  # the DeletedView, once (other features add to it)

    def __init__(self, ctx: AppContext, selection: Selection, detail: DetailPane, window: QWidget,
                 selection_count: Callable[[], int]) -> None:
        super().__init__(window)
        self.ctx = ctx
        self.selection = selection
        self.selection_count = selection_count
        self.detail = detail
        self.window = window
        self._lock: asyncio.Lock | None = None
        self.dialog: QWidget | None = None  # the dialog currently open (kept referenced)
        self._deleted_view: DeletedView | None = None  # made when first shown
        detail.save_requested.connect(self.save_edit)
        detail.link_requested.connect(self.link)
        detail.repair_requested.connect(self.repair_links)
        self._make_actions()
        # Bound methods (not lambdas): Qt drops these connections when the window goes.
        ctx.current_changed.connect(self._refresh_actions)

    # ----------------------------------------------------------------- actions
    def _make_actions(self) -> None:
        def action(text: str, slot: Callable[[], Any], shortcut: Any = None, tip: str = "") -> QAction:
            act = QAction(text, self.window)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.setToolTip(tip or text.replace("&", "").rstrip("…"))
            act.triggered.connect(lambda _checked=False: slot())
            return act

        self.new_action = action("&New memory…", self.new_memory, QKeySequence.StandardKey.New,
                                 "Write a new memory into the selected file (Ctrl+N)")
        self.delete_action = action("&Delete", self.delete_selected, QKeySequence.StandardKey.Delete,
                                    "Delete the selected memories (kept in Deleted memories; Ctrl+Z undoes)")
        self.deleted_action = action("Deleted &memories…", self.show_deleted, None,
                                     "See and restore memories deleted from this file")
        self.bulk_actions = {
            field: action(f"Set {label}…", lambda field=field: self.bulk_edit(field), None,
                          f"Set the {label} of every selected memory")
            for field, label in (("type", "type"), ("importance", "importance"),
                                 ("sync_status", "sync status"), ("expires_at", "expiry"))
        }
        self.replace_action = action("Find and &Replace…", self.find_replace, None,
                                     "Replace text in the selected memories or the whole file, previewed first")
        self.replace_action.setShortcuts(keys(QKeySequence.StandardKey.Replace, "Ctrl+H"))
        self.history_action = action("Change &history…", self.show_history, None,
                                     "Every journalled change of this file, from any window, command or agent")
        self.local_action = action("Mark &local-only", self.mark_local_only, None,
                                   "Keep the selected memories out of sync (sync status local_only)")
        self.supersede_action = action("&Supersede…", self.supersede, None,
                                       "Mark one of two selected memories as replaced by the other")
        self.merge_action = action("&Merge…", self.merge, None,
                                   "Write a new memory from two selected ones; it supersedes both")
        self.promote_action = action("&Promote to parent…", self.promote, None,
                                     "Copy a finished task agent's important memories into its parent agent")
        #: Undo and Redo: the core journal of the file on screen (one history per file).
        self.undo_redo = UndoRedo(self.ctx, self._serial, self.detail, self.window)
        self.undo_action, self.redo_action = self.undo_redo.undo_action, self.undo_redo.redo_action
        self.update_actions()

    def edit_actions(self) -> list[QAction | None]:
        """The Edit menu, in order (``None`` is a separator)."""
        return [self.undo_action, self.redo_action, None, self.new_action, self.delete_action, None,
                *self.bulk_actions.values(), self.local_action, self.replace_action, None, self.supersede_action,
                self.merge_action,
                self.promote_action, None, self.deleted_action, self.history_action]

    def _refresh_actions(self, *_args: object) -> None:
        self.update_actions()

    def update_actions(self) -> None:
        store = self.ctx.cached_store(self.ctx.current_path()) if self.ctx.current_path() else None
        writable = store is not None and not store.readonly
        count = self.selection_count()
        self.new_action.setEnabled(writable)
        self.delete_action.setEnabled(writable and count > 0)
        for act in (*self.bulk_actions.values(), self.local_action):
            act.setEnabled(writable and count > 0)
        self.supersede_action.setEnabled(writable and count == 2)
        self.merge_action.setEnabled(writable and count == 2)
        self.replace_action.setEnabled(writable)
        agent = self.ctx.current
        self.promote_action.setEnabled(writable and isinstance(agent, AgentFile) and agent.is_task_agent)
        self.deleted_action.setEnabled(store is not None)
        self.history_action.setEnabled(store is not None)

    # ----------------------------------------------------------------- running commands
    def _serial(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def execute(self, command: StoreCommand, ask_on_conflict: bool = True) -> asyncio.Task:
        """Run ``command`` on a worker thread, after the steps before it; its result, or ``None``.
        ``ask_on_conflict``: an edit refused because another program changed the memory offers
        to save over it; otherwise the refusal is said in the status bar (nothing changed)."""
        return asyncio.ensure_future(self._execute(command, ask_on_conflict), loop=self.ctx.loop)

    def edit_cell(self, path: Path, base: Memory, changes: dict) -> asyncio.Task:
        """A field edited in its table cell (``base``: the memory as the cell showed it)."""
        return self.execute(EditCommand(self, path, base, changes), ask_on_conflict=False)

    async def _execute(self, command: StoreCommand, ask_on_conflict: bool = True) -> Any:
        async with self._serial():
            try:
                store = await self.ctx.run(self.ctx.store_for, command.path)
                result = await self.ctx.run(command.run, store)
            except Conflict as exc:
                if not ask_on_conflict:
                    self.ctx.status.emit(f"Not saved: {exc}")
                elif isinstance(command, EditCommand):
                    await self._conflict(command, exc)
                else:
                    self.ctx.show_error(exc, "Changed by another program")
                return None
            except OraError as exc:
                self.ctx.show_error(exc, f"Could not {command.text()}")
                return None
        self.ctx.status.emit(_done_text(command))
        self.undo_redo.refresh(written=True)  # the step is the file's newest: Undo names it
        self.done.emit(command, result)
        return result

    async def _settled_selection(self) -> list[Memory]:
        """The selected memories once the window's own queued steps have run and been reported:
        a step that passes their versions back must not meet an undo of ours as "another program"."""
        async with self._serial():
            pass
        return await self.selection()

    # ----------------------------------------------------------------- edit and conflicts
    def save_edit(self, base: Memory, changes: dict) -> asyncio.Task:
        # The file the edit was made in (the selection may be moving to another file right now).
        path = self.detail.store.path if self.detail.store is not None else self._current_path()
        command = EditCommand(self, path, base, changes)
        return asyncio.ensure_future(self._save(command), loop=self.ctx.loop)

    async def _save(self, command: EditCommand) -> None:
        result = await self._execute(command)
        if isinstance(result, Memory) and self.detail.memory is not None and self.detail.memory.id == result.id:
            self.detail.saved(result)

    async def _conflict(self, command: EditCommand, exc: Conflict) -> None:
        store = self.ctx.store_for(command.path)
        current = await self.ctx.run(store.find, command.memory_id)
        dialog = ConflictDialog(current, command.after, str(exc), self.window)
        self.dialog = dialog

        def theirs() -> None:
            self.detail.memory = None
            self.detail.show_memory(current, store)
            self.ctx.status.emit("Kept their version; your changes were discarded")

        def mine() -> None:
            if current is None:
                return
            # Saved over their version; undo brings theirs back.
            retry = EditCommand(self, command.path, current, command.after)
            asyncio.ensure_future(self._save(retry), loop=self.ctx.loop)

        dialog.theirs.connect(theirs)
        dialog.mine.connect(mine)
        dialog.rejected.connect(lambda: self.ctx.status.emit("Not saved: your changes are still in the editor"))
        dialog.open()
        self.conflict_shown.emit(dialog)

    # ----------------------------------------------------------------- the actions
    def _current_path(self) -> Path:
        path = self.ctx.current_path()
        if path is None:
            raise OraError("Select a file first")
        return path

    def _store(self) -> Store | None:
        store = self.ctx.current_store()
        if store is None:
            self.ctx.status.emit("Select a file first")
        elif store.readonly:
            self.ctx.show_error(f"{store.path} is open read-only; nothing can be changed", "Read-only")
            return None
        return store

    def new_memory(self) -> None:
        store = self._store()
        if store is None:
            return
        dialog = MemoryFieldsDialog("New memory", self.window, intro=f"A new memory in {store.path.name}.")
        self.dialog = dialog
        dialog.accepted.connect(lambda: self.execute(AddCommand(self, store.path, dialog.fields())))
        dialog.open()

    def delete_selected(self) -> asyncio.Task | None:
        store = self._store()
        if store is None:
            return None

        async def run() -> None:
            chosen = await self.selection()
            if chosen:
                await self._execute(DeleteCommand(self, store.path, [m.id for m in chosen]))
                self.ctx.status.emit(f"Deleted {memories(len(chosen))} — Ctrl+Z or Edit > Deleted memories "
                                     "brings them back")
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    @property
    def deleted_view(self) -> DeletedView:
        if self._deleted_view is None:
            self._deleted_view = DeletedView(self.ctx, self.window)
            self._deleted_view.restore_requested.connect(self.restore)
            self.deleted_view_made.emit(self._deleted_view)
        return self._deleted_view

    def show_deleted(self) -> None:
        self.deleted_view.show_for(self.ctx.current_store())

    def restore(self, path: Path, trash_ids: list[int]) -> asyncio.Task:
        command = RestoreCommand(self, Path(path), trash_ids)

        async def run() -> Any:
            if self._deleted_view is not None:
                self._deleted_view.said.clear()  # (a failure is said in a dialog)
            result = await self._execute(command)
            if result is not None and self._deleted_view is not None:
                self._deleted_view.said.setText(_done_text(command))  # (what the status bar says)
            return result
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    def bulk_edit(self, field: str = "type") -> None:
        store = self._store()
        count = self.selection_count()
        if store is None or count == 0:
            return
        dialog = BulkEditDialog(count, self.window, field)
        self.dialog = dialog
        dialog.accepted.connect(lambda: self.apply_bulk(dialog.values(), dialog.label()))
        dialog.open()

    def apply_bulk(self, values: dict, label: str) -> asyncio.Task:
        path = self._current_path()

        async def run() -> None:
            chosen = await self._settled_selection()
            if chosen:
                await self._execute(BulkEditCommand(self, path, chosen, values, label))
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    def show_history(self) -> asyncio.Task | None:
        """Open the file's change history (its undo journal) as a table."""
        store = self._store()
        if store is None:
            return None
        from .history import HistoryDialog

        dialog = HistoryDialog(self.ctx, store, self.window)
        self.dialog = dialog
        dialog.open()
        return dialog.refresh()

    def find_replace(self) -> asyncio.Task | None:
        """Open Find and Replace on the selection (when there is one) or the whole file."""
        store = self._store()
        if store is None or store.readonly:
            return None
        from .replace import ReplaceCommand, ReplaceDialog

        async def run() -> None:
            chosen = await self.selection() if self.selection_count() else []
            dialog = ReplaceDialog(self.ctx, store, [m.id for m in chosen], self.window)
            dialog.replace_asked.connect(lambda ids, find, replacement: asyncio.ensure_future(
                self._execute(ReplaceCommand(self, store.path, ids, find, replacement)), loop=self.ctx.loop))
            self.dialog = dialog
            dialog.open()
        return asyncio.ensure_future(run(), loop=self.ctx.loop)

    def mark_local_only(self) -> asyncio.Task | None:
        if self._store() is None:
            return None
        return self.apply_bulk({"sync_status": "local_only"}, "mark local-only")

    def _with_two(self, what: str, make_dialog: Callable[[Store, Memory, Memory], QWidget]) -> None:
        """Open the dialog of an action on exactly two selected memories."""
        store = self._store()
        if store is None:
            return

        async def run() -> None:
            chosen = await self._settled_selection()
            if len(chosen) != 2:
                self.ctx.status.emit(f"Select exactly two memories to {what}")
                return
            dialog = make_dialog(store, chosen[0], chosen[1])
            self.dialog = dialog
            dialog.open()
        asyncio.ensure_future(run(), loop=self.ctx.loop)

    def supersede(self) -> None:
        def make(store: Store, first: Memory, second: Memory) -> QWidget:
            dialog = SupersedeDialog(first, second, self.window)
            dialog.accepted.connect(lambda: self.execute(SupersedeCommand(self, store.path, *dialog.old_and_new())))
            return dialog
        self._with_two("supersede one with the other", make)

    def merge(self) -> None:
        def make(store: Store, first: Memory, second: Memory) -> QWidget:
            a, b = sorted((first, second), key=lambda m: -(m.importance or 0))
            dialog = MemoryFieldsDialog(
                "Merge two memories", self.window, content=f"{a.content}\n\n{b.content}", type_=a.type or "fact",
                importance=max(a.importance or 5, b.importance or 5),
                intro="The merged memory is written as a new one that supersedes both (Ctrl+Z undoes).")
            dialog.accepted.connect(lambda: self.execute(MergeCommand(self, store.path, a, b, dialog.fields())))
            return dialog
        self._with_two("merge", make)

    def link(self, memory_id: str, other_id: str, add: bool) -> asyncio.Task | None:
        store = self._store()
        if store is None:
            return None
        return self.execute(LinkCommand(self, store.path, memory_id, other_id, add))

    def repair_links(self, memory_id: str) -> asyncio.Task | None:
        store = self._store()
        if store is None:
            return None
        return self.execute(RepairLinksCommand(self, store.path, memory_id))

    def promote(self) -> asyncio.Task | None:
        store = self._store()
        if store is None:
            return None
        return asyncio.ensure_future(self._promote(store), loop=self.ctx.loop)

    async def _promote(self, store: Store) -> None:
        from ...core.maintenance import run_job  # here, not at start-up: the jobs pull in sync and backup

        preview = await self.ctx.run(run_job, "promote", store.path, dry_run=True, home=self.ctx.home, record=False)
        if not preview.ok:
            self.ctx.show_error(preview.message or preview.outcome, "Promote")
            return
        items = [f"{memory_id}  —  {text}" for memory_id, text in preview.would_change]
        dialog = PreviewDialog(
            "Promote to parent", f"{_capital(preview.message)}.", items, "&Promote", self.window,
            note="The copies get ids starting with “extracted-”. Promotion is recorded so it happens once; it is "
                 "not on the undo stack — delete the copies from the parent (recoverably) to take it back.")
        self.dialog = dialog

        async def confirmed() -> None:
            report = await self.ctx.run(run_job, "promote", store.path, home=self.ctx.home)
            if report.ok:
                self.ctx.status.emit(_capital(report.message))
                for agent in self.ctx.home.agents():
                    cached = self.ctx.cached_store(agent.path)
                    if cached is not None:
                        self.ctx.report_change(agent.path, report.change or Change.reload(Initiator.JOB))
            else:
                self.ctx.show_error(report.message or report.outcome, "Promote")
        dialog.accepted.connect(lambda: asyncio.ensure_future(confirmed(), loop=self.ctx.loop))
        dialog.open()


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _done_text(command: StoreCommand) -> str:
    """``Restore 3 memories — done (Ctrl+Z undoes)``, after the operation's note if it had one."""
    said = _capital(f"{command.text()} — done (Ctrl+Z undoes)")
    return f"{command.note}. {said}" if command.note else said
