"""``Forgetter``: "Delete permanently…", "Empty trash…" and "Recover…" in the window.

Each asks first — naming how many memories and which backups still hold them, or where the
salvaged file goes — then runs the core operation on a worker thread. A purge cannot be undone,
and each confirmation says so; the file's other undo steps stay (core forgets only the journal
steps that held the purged memories' text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from ...core import Change, Initiator, Memory, OraError
from ..context import AppContext
from ..curate.dialogs import PreviewDialog

if TYPE_CHECKING:
    from ...core.operations.purge import PurgePlan

# The operations (purge, recover) are imported when first used: the window starts without them
# and imports them once its first rows are shown (gui/panels.py).

Selection = Callable[[], Awaitable[list[Memory]]]


def recovered_name(path: Path) -> Path:
    """A free name beside ``path`` for its salvage: ``<agent>-recovered[-N].site.db``."""
    stem = path.name[: -len(".site.db")] if path.name.endswith(".site.db") else path.stem
    candidate, n = path.with_name(f"{stem}-recovered.site.db"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{stem}-recovered-{n}.site.db")
    return candidate


class Forgetter(QObject):
    """See the module docstring. ``dialog`` is the confirmation currently open (for tests)."""

    finished = Signal(object)  # the PurgeResult or RecoverReport
    recovered = Signal(object)  # the new file's path

    def __init__(self, ctx: AppContext, selection: Selection, window: QWidget,
                 selection_count: Callable[[], int]) -> None:
        super().__init__(window)
        self.ctx = ctx
        self.selection = selection
        self.selection_count = selection_count
        self.window = window
        self.dialog: PreviewDialog | None = None
        self.purge_action = QAction("Delete &permanently…", window)
        self.purge_action.setStatusTip("Forget the selected memories everywhere: not restorable, not undoable")
        self.purge_action.triggered.connect(lambda _checked=False: self.purge_selected())
        self.empty_action = QAction("Empty &trash…", window)
        self.empty_action.setStatusTip("Forget every deleted memory of this file for good")
        self.empty_action.triggered.connect(lambda _checked=False: self.empty_trash())

    def actions(self) -> list[QAction]:
        return [self.purge_action, self.empty_action]

    def update_actions(self) -> None:
        store = self.ctx.cached_store(self.ctx.current_path()) if self.ctx.current_path() else None
        writable = store is not None and not store.readonly
        self.purge_action.setEnabled(writable and self.selection_count() > 0)
        self.empty_action.setEnabled(writable)

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task:
        return asyncio.ensure_future(work, loop=self.ctx.loop)

    def _writable(self) -> Path | None:
        store = self.ctx.current_store()
        if store is None:
            self.ctx.status.emit("Select a file first")
            return None
        if store.readonly:
            self.ctx.show_error(f"{store.path} is open read-only; nothing can be purged", "Read-only")
            return None
        return store.path

    # ----------------------------------------------------------------- purge
    def purge_selected(self) -> asyncio.Task | None:
        path = self._writable()
        if path is None:
            return None

        async def run() -> None:
            chosen = await self.selection()
            if chosen:
                await self._confirm_purge(path, [m.id for m in chosen])
        return self._spawn(run())

    def purge_ids(self, path: Path, ids: list[str]) -> asyncio.Task:
        """Confirm, then purge ``ids`` of ``path`` (live or in the trash): the Deleted memories view."""
        return self._spawn(self._confirm_purge(Path(path), list(ids)))

    async def _confirm_purge(self, path: Path, ids: list[str]) -> None:
        from ...core.operations.purge import plan_purge, purge, purge_titles

        try:
            store = await self.ctx.run(self.ctx.store_for, path)
            plan: PurgePlan = await self.ctx.run(plan_purge, store, ids)
            titles = await self.ctx.run(purge_titles, store, plan.ids)
        except OraError as exc:
            self.ctx.show_error(exc, "Delete permanently")
            return
        items = [_item(i, titles.get(i, ""), "live" if i in plan.live else "in the trash") for i in plan.ids]
        note = ("Those backups are left as they are: 'ora-desktop purge --rewrite-backups' rewrites them too."
                if plan.backups else "No backup holds them.")
        self._ask("Delete permanently", f"{plan.describe()[0].upper()}{plan.describe()[1:]}.", items,
                  "Delete &permanently", note,
                  lambda: self._run(lambda s: purge(s, ids), path))

    def empty_trash(self, path: Path | None = None) -> asyncio.Task | None:
        path = Path(path) if path is not None else self._writable()
        if path is None:
            return None

        from ...core.operations.purge import empty_trash, plan_empty_trash, purge_titles

        async def run() -> None:
            try:
                store = await self.ctx.run(self.ctx.store_for, path)
                ids = await self.ctx.run(plan_empty_trash, store)
                held = await self.ctx.run(_backups, store, list(ids)) if ids else []
                titles = await self.ctx.run(purge_titles, store, ids)
            except OraError as exc:
                self.ctx.show_error(exc, "Empty trash")
                return
            if not ids:
                self.ctx.status.emit(f"The trash of {path.name} is empty")
                return
            what = "the deleted memory" if len(ids) == 1 else f"all {len(ids):,} memories"
            self._ask("Empty trash", f"Permanently delete {what} in the trash of {path.name}? "
                      "This cannot be undone.", [_item(i, titles.get(i, "")) for i in ids], "&Empty trash",
                      self._backup_note(held),
                      lambda: self._run(empty_trash, path))
        return self._spawn(run())

    @staticmethod
    def _backup_note(backups: list[Path] | tuple[Path, ...]) -> str:
        if not backups:
            return "No backup holds them."
        names = ", ".join(b.name for b in backups[:5]) + (" …" if len(backups) > 5 else "")
        return (f"{len(backups)} backup(s) still hold them and are left as they are: {names}. "
                "Use 'ora-desktop purge --rewrite-backups' to rewrite them too.")

    def _ask(self, title: str, headline: str, items: list[str], confirm: str, note: str,
             then: Callable[[], Awaitable[None]]) -> None:
        note = f"{note} Undo keeps this file's other steps."
        dialog = PreviewDialog(title, headline, items, confirm, self.window, note=note, destructive=True)
        dialog.setObjectName("PurgeConfirm")
        self.dialog = dialog
        dialog.accepted.connect(lambda: self._spawn(then()))
        dialog.open()

    async def _run(self, work: Callable[[Any], Any], path: Path) -> None:
        try:
            store = await self.ctx.run(self.ctx.store_for, path)
            result = await self.ctx.run(work, store)
        except OraError as exc:
            self.ctx.show_error(exc, "Delete permanently")
            return
        if not result.change:  # the store told the views of what it removed; a trash-only purge says here
            self.ctx.notify(path.resolve(), Change.reload(Initiator.USER, source="purge"))
        self.ctx.status.emit(result.message[:1].upper() + result.message[1:])
        self.finished.emit(result)

    # ----------------------------------------------------------------- recover
    def recover(self, path: Path, out: Path | None = None) -> None:
        """Confirm, then salvage ``path`` into a new file beside it (never writing ``path``)."""
        path = Path(path)
        out = Path(out) if out is not None else recovered_name(path)
        self._ask("Recover", f"Salvage what can be read of {path.name} into a new file {out.name}? "
                  f"{path.name} itself is not changed.", [str(out)], "&Recover",
                  "Rows are read through SQLite first, then page by page; the report says how many were saved.",
                  lambda: self._recover(path, out))

    async def _recover(self, path: Path, out: Path) -> None:
        from ...core.operations.recover import recover

        try:
            report = await self.ctx.run(recover, path, out)
        except OraError as exc:
            self.ctx.show_error(exc, "Recover")
            return
        self.ctx.status.emit(report.message[:1].upper() + report.message[1:])
        self.finished.emit(report)
        if report.written:  # nothing recovered: no file, nothing to open or list
            self.recovered.emit(out)


def _item(memory_id: str, title: str, where: str = "") -> str:
    """One line of a confirmation's list: the id, what the memory says, and where it is."""
    text = f"{memory_id}  —  {title or '(no text)'}"
    return f"{text}  ({where})" if where else text


def _backups(store: Any, ids: list[str]) -> list[Path]:
    from ...core.operations.purge import backups_holding

    return backups_holding(store.path, ids)
