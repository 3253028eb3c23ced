"""``Exchanger``: File > Export… and File > Import…, run off the GUI thread with progress.

An import is one step (:class:`ImportCommand`) run by the curator; core journals it in the file,
so one Ctrl+Z takes the whole import back and Ctrl+Shift+Z does it again (up to
``importing.JOURNAL_LIMIT`` memories; a bigger import says it cannot be undone).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog, QWidget

from ...core import OraError, Store
from ..curate.commands import StoreCommand, memories

# The exchange formats, operations and dialogs are imported when first used: the window starts without
# them and imports them once its first rows are shown (gui/panels.py).

if TYPE_CHECKING:
    from ...core.operations.export import ExportResult
    from ...core.operations.importing import ImportResult
    from ..context import AppContext
    from ..curate.actions import Curator
    from ..memories.page import MemoryBrowser
    from .dialogs import ImportPreviewDialog

_SUFFIX = {"jsonl": "jsonl", "csv": "csv", "md": "md"}
PREVIEW_ROWS = 20


def _arguments(kw: dict) -> tuple[str, dict]:
    """The dialog's options as the import operations' format and keywords (``local_only`` and
    ``messages`` made ``ImportOptions``)."""
    from ...core.exchange import ImportOptions

    kw = dict(kw)
    local_only, messages = kw.pop("local_only"), kw.pop("messages")
    kw["options"] = ImportOptions(sync_status="local_only" if local_only else "pending", messages=messages,
                                  force_sync_status=local_only)
    return kw.pop("format"), kw


def _run_import(store: Store, source: Path, kw: dict, **extra: Any) -> ImportResult:
    """``import_memories`` with the dialog's options."""
    from ...core.operations.importing import import_memories

    fmt, kw = _arguments(kw)
    return import_memories(store, source, fmt, **kw, **extra)


def _run_import_new(target: Path, source: Path, kw: dict, **extra: Any) -> ImportResult:
    """``import_into_new`` (a new agent's file, created by the import) with the dialog's options."""
    from ...core.operations.import_new import import_into_new

    fmt, kw = _arguments(kw)
    return import_into_new(target, source, fmt, **kw, **extra)


class ImportCommand(StoreCommand):
    """One import, one journalled step of its file."""

    def __init__(self, curator: Curator, path: Path, source: Path, options: dict, progress: Any = None) -> None:
        super().__init__(curator, path, f"import {source.name}")
        self.source, self.options, self.progress = source, options, progress
        self.cancelled = threading.Event()
        self.result: ImportResult | None = None

    def run(self, store: Store) -> ImportResult:
        self.result = _run_import(store, self.source, self.options, progress=self.progress,
                                  cancel=self.cancelled.is_set)
        return self.result


class Exchanger(QObject):
    """The export and import actions of the window."""

    #: An import created this agent file (the window lists and opens it).
    created = Signal(object)

    def __init__(self, ctx: AppContext, browser: MemoryBrowser, curator: Curator, window: QWidget) -> None:
        super().__init__(window)
        self.ctx, self.browser, self.curator, self.window = ctx, browser, curator, window
        self.export_action = QAction("&Export…", window)
        self.export_action.setStatusTip("Export the file, the selection or the search results (JSONL, CSV, Markdown)")
        self.export_action.triggered.connect(lambda _c=False: self.start_export())
        self.import_action = QAction("&Import…", window)
        self.import_action.setStatusTip("Import memories from an export or another memory store (Ctrl+Z undoes)")
        self.import_action.triggered.connect(lambda _c=False: self.start_import())
        self.dialog: QWidget | None = None  # the open dialog (kept referenced)
        self.progress: QProgressDialog | None = None
        self.summary: QMessageBox | None = None
        self._preview_cancel: threading.Event | None = None
        self._preview_task: asyncio.Task | None = None
        # Enabled from the open store only: a file not open yet is opened on a worker by the
        # Memories tab, which then emits store_shown (a broken file: its message, shown once there).
        ctx.current_changed.connect(self.update_actions)
        ctx.store_forgotten.connect(self.update_actions)
        browser.store_shown.connect(self.update_actions)
        self.update_actions()

    def update_actions(self, *_args: object) -> None:
        """Enable Export for an open file, Import for an open writable one (never opens a file)."""
        store = self.ctx.current_store()
        self.export_action.setEnabled(store is not None)
        self.import_action.setEnabled(store is not None and not store.readonly)

    # ----------------------------------------------------------------- export
    def start_export(self) -> None:
        from .dialogs import ExportDialog

        if self.ctx.current_store() is None:
            return
        dialog = ExportDialog(self.browser.table.selected_count(), len(self.browser.model.keys), self.window)
        dialog.chosen.connect(self._choose_export_file)
        self.dialog = dialog
        dialog.open()

    def _choose_export_file(self, scope: str, fmt: str) -> None:
        store = self.ctx.current_store()
        name = f"{store.path.name.removesuffix('.site.db')}.{_SUFFIX[fmt]}" if store else f"memories.{fmt}"
        dialog = QFileDialog(self.window, "Export memories to", str(Path.home() / name))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.fileSelected.connect(lambda path: self.export(scope, fmt, Path(path)))
        self.dialog = dialog
        dialog.open()

    def export(self, scope: str, fmt: str, path: Path) -> asyncio.Task:
        """Export ``scope`` (file, selection, view) of the current file to ``path``."""
        return asyncio.ensure_future(self._export(scope, fmt, path), loop=self.ctx.loop)

    async def _export(self, scope: str, fmt: str, path: Path) -> ExportResult | None:
        from ...core.operations.export import export_memories

        store = self.ctx.current_store()
        if store is None:
            return None
        chosen: dict[str, Any] = {}
        if scope == "selection":
            chosen["ids"] = [m.id for m in await self.browser.selected_memories()]
        elif scope == "view":
            chosen["rowids"] = self.browser.model.keys.tolist()
        cancel = threading.Event()
        progress = self._progress(f"Exporting to {path.name}…", cancel)
        try:
            result = await self.ctx.run(export_memories, [store], path, fmt, progress=self._reporter(progress),
                                        cancel=cancel.is_set, **chosen)
        except OraError as exc:
            self.ctx.show_error(exc, "Export")
            return None
        finally:
            progress.reset()
        self.ctx.status.emit(f"Exported {memories(result.count)} to {path} ({fmt})")
        return result

    # ----------------------------------------------------------------- import
    def start_import(self) -> None:
        store = self.ctx.current_store()
        if store is None or store.readonly:
            return
        dialog = QFileDialog(self.window, "Import memories from")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(lambda path: self.preview(Path(path)))
        self.dialog = dialog
        dialog.open()

    def preview(self, source: Path) -> ImportPreviewDialog | None:
        """Open the preview of importing ``source`` into the current file."""
        from .dialogs import ImportPreviewDialog

        store = self.ctx.current_store()
        if store is None:
            return None
        dialog = ImportPreviewDialog(source, store.path, self.window, home=self.ctx.home)
        dialog.options_changed.connect(lambda: self._refresh_preview(dialog))
        dialog.confirmed.connect(lambda: self._confirmed(dialog))
        dialog.finished.connect(lambda _r: self._stop_preview())
        self.dialog = dialog
        dialog.open()
        self._refresh_preview(dialog)
        return dialog

    def _stop_preview(self) -> None:
        if self._preview_cancel is not None:
            self._preview_cancel.set()

    def _refresh_preview(self, dialog: ImportPreviewDialog) -> None:
        self._stop_preview()
        cancel = self._preview_cancel = threading.Event()
        dialog.reading()
        self._preview_task = asyncio.ensure_future(self._preview(dialog, cancel), loop=self.ctx.loop)

    async def _preview(self, dialog: ImportPreviewDialog, cancel: threading.Event) -> None:
        options = {**dialog.options(), "skip_bad": True}  # list every invalid row in the preview
        try:
            target = dialog.target
            if dialog.creating:  # previewed against an empty scratch file: nothing is created yet
                result = await self.ctx.run(_run_import_new, target, dialog.source, options, dry_run=True,
                                            sample=PREVIEW_ROWS, cancel=cancel.is_set)
            else:
                store = await self.ctx.run(self.ctx.store_for, target)
                result = await self.ctx.run(_run_import, store, dialog.source, options, dry_run=True,
                                            sample=PREVIEW_ROWS, cancel=cancel.is_set)
        except OraError as exc:
            if not cancel.is_set():
                dialog.show_problem(str(exc))
            return
        if not cancel.is_set():
            dialog.show_preview(result)

    def _confirmed(self, dialog: ImportPreviewDialog) -> None:
        try:
            target = dialog.target
        except OraError as exc:  # the preview said so and kept Import disabled; names changed since
            self.ctx.show_error(exc, "Import")
            return
        if dialog.creating:
            asyncio.ensure_future(self._import_new(dialog.source, target, dialog.options()), loop=self.ctx.loop)
        else:
            self.run_import(dialog.source, target, dialog.options())

    async def _import_new(self, source: Path, target: Path, options: dict) -> ImportResult | None:
        """Import into a new agent (its file created by the import; a failed import leaves none),
        then list and open it. Not an undo step: deleting the agent's file takes it back."""
        cancel = threading.Event()
        progress = self._progress(f"Importing {source.name}…", cancel)
        try:
            result = await self.ctx.run(_run_import_new, target, source, options, progress=self._reporter(progress),
                                        cancel=cancel.is_set)
        except OraError as exc:
            self.ctx.show_error(exc, "Import")
            return None
        finally:
            progress.reset()
        self.created.emit(target)
        agent = f"{target.parent.name}/{target.name.removesuffix('.site.db')}"
        self._summarize(source, result, f"into the new agent {agent}", "")
        return result

    def run_import(self, source: Path, target: Path, options: dict) -> asyncio.Task:
        """Import with progress, as one undoable step; a summary says what happened."""
        return asyncio.ensure_future(self._import(source, target, options), loop=self.ctx.loop)

    async def _import(self, source: Path, target: Path, options: dict) -> ImportResult | None:
        from ...core.operations.importing import JOURNAL_LIMIT, ImportResult

        command = ImportCommand(self.curator, target, source, options)
        progress = self._progress(f"Importing {source.name}…", command.cancelled)
        command.progress = self._reporter(progress)
        try:
            result = await self.curator.execute(command)
        finally:
            progress.reset()
        if not isinstance(result, ImportResult):
            return None  # the curator showed the error; nothing was imported
        undoable = result.added + result.replaced <= JOURNAL_LIMIT
        self._summarize(source, result, "", " Ctrl+Z takes the whole import back." if undoable else
                        f" Over {JOURNAL_LIMIT:,} memories, it is not on the undo list: delete them to take it back.")
        return result

    def _summarize(self, source: Path, result: ImportResult, into: str, after: str) -> None:
        into = f" {into}" if into else ""
        text = (f"Imported {memories(result.added + result.replaced)} from {source.name} ({result.format}){into}: "
                f"{result.added:,} new, {result.replaced:,} replaced, {result.kept:,} already there, "
                f"{len(result.skipped):,} invalid rows skipped.{after}")
        text += "".join(f"\n\nFirst, {line[0].lower()}{line[1:]}." for line in result.recovered)
        self.summary = QMessageBox(QMessageBox.Icon.Information, "Import finished", text,
                                   QMessageBox.StandardButton.Ok, self.window)
        if result.skipped:
            self.summary.setDetailedText("\n".join(str(s) for s in result.skipped))
        self.summary.open()

    # ----------------------------------------------------------------- progress
    def _progress(self, label: str, cancel: threading.Event) -> QProgressDialog:
        progress = QProgressDialog(label, "Cancel", 0, 0, self.window)
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(400)  # only long work shows it
        progress.canceled.connect(cancel.set)
        self.progress = progress
        return progress

    def _reporter(self, progress: QProgressDialog) -> Any:
        """A ``progress(done, total)`` callable safe to call from the worker thread."""
        def update(done: int, total: int) -> None:
            if progress.maximum() != total:
                progress.setMaximum(max(total, 1))
            progress.setValue(min(done, max(total, 1)))

        return lambda done, total: self.ctx.from_thread(update, done, total)
