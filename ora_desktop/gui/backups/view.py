"""The Backups panel: the selected file's backups, "Back up now", and restore with a confirmation.

The confirmation says what will be replaced (the file and its memory count, against the
backup's) and where the current file is kept (the backup folder, as a ``…-before-restore``
backup that can itself be restored). Dialogs open with ``open()``; all file work runs in a worker.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ora_desktop.core import Change, Initiator, OraError
from ora_desktop.core.backup import BackupInfo
from ora_desktop.core.maintenance import JobReport
from ora_desktop.core.restore import RestoreReport

from ..a11y import describe
from ..formatting import exact, relative
from ..jobs.background import Latest, Progress
from ..jobs.data import label_for
from ..jobs.widgets import LazyRefresh, cell, local_time, readonly_table
from . import data


def size_text(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def _count(value: int | None) -> str:
    return "an unreadable number of" if value is None else f"{value:,}"


def confirmation_text(plan: data.RestorePlan, label: str) -> tuple[str, str]:
    """(question, details) for the restore confirmation."""
    when = f"{exact(plan.backup.created)} ({relative(plan.backup.created)})"
    question = f"Replace the memories of {label} with the backup from {when}?"
    if plan.current_memories is None and not plan.target.exists():
        now = f"{plan.target} does not exist any more; it will be created from the backup."
    else:
        now = (f"This replaces {plan.target}, which holds {_count(plan.current_memories)} memories now, "
               f"with the backup's {_count(plan.backup_memories)} memories.")
    aside = (f"The current file is first copied to {plan.folder} as a “…-before-restore” backup, "
             "so you can restore it again from this list.") if plan.target.exists() else ""
    return question, " ".join(p for p in (now, aside) if p)


class BackupsView(LazyRefresh, QWidget):
    """Backups of the selected agent's file."""

    #: A restore finished (the ``RestoreReport``).
    restored = Signal(object)

    def __init__(self, ctx, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.listing: data.BackupList | None = None
        self.confirm: QMessageBox | None = None
        self.last_report: RestoreReport | JobReport | None = None
        self._latest = Latest()
        self._work: asyncio.Task | None = None
        self._progress: Progress | None = None

        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_folder = QPushButton("Open folder")
        self.open_folder.setToolTip("Show the backup folder in the file manager")
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.open_folder)

        self.table = readonly_table(["Created", "Size", "Kind", "File"])
        describe(self.table, "Backups", "The backups of the selected file, newest first")
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)

        self.backup_button = QPushButton("&Back up now")
        self.backup_button.setToolTip("Copy the file with SQLite's online backup (safe while agents write)")
        self.restore_button = QPushButton("R&estore…")
        self.restore_button.setToolTip("Replace the file's content with the selected backup (asks first)")
        self.progress = QProgressBar()
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        describe(self.cancel_button, "Cancel", "Stop the backup or restore in progress")
        self.cancel_button.hide()
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions = QHBoxLayout()
        actions.addWidget(self.backup_button)
        actions.addWidget(self.restore_button)
        actions.addWidget(self.progress, 1)
        actions.addWidget(self.cancel_button)
        actions.addStretch(0)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.empty)
        layout.addLayout(actions)
        layout.addWidget(self.message)

        self.backup_button.clicked.connect(self.back_up)
        self.restore_button.clicked.connect(self.ask_restore)
        self.cancel_button.clicked.connect(self.cancel)
        self.open_folder.clicked.connect(self._open_folder)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self.ask_restore())
        ctx.current_changed.connect(self.request_refresh)
        ctx.data_changed.connect(self.request_refresh)
        self.init_lazy()

    # ------------------------------------------------------------------ loading
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        """Re-list on every show: the scheduler or the daemon may have made a backup meanwhile."""
        self._stale = True
        super().showEvent(event)

    @property
    def path(self) -> Path | None:
        return self.ctx.current_path()

    def refresh(self) -> asyncio.Task | None:
        return self._latest.start(self.reload())

    async def reload(self) -> data.BackupList | None:
        path = self.path
        if path is None:
            self.listing = None
            self.heading.setText("Select an agent in the sidebar to see its backups.")
            self._fill(())
            return None
        try:
            listing = await self.ctx.run(data.gather, path)
        except OraError as exc:
            self.listing = None
            self.heading.setText(f"Could not list the backups: {exc}")
            self._fill(())
            return None
        self.listing = listing
        label = label_for(path, self.ctx.home)
        count = len(listing.backups)
        self.heading.setText(f"{count} backup{'s' if count != 1 else ''} of {label} in {listing.folder}"
                             + (f"\n{listing.config_problem}" if listing.config_problem else ""))
        self._fill(listing.backups)
        return listing

    def _fill(self, backups: tuple[BackupInfo, ...]) -> None:
        self.table.setRowCount(len(backups))
        for row, info in enumerate(backups):
            kind = "kept before a restore" if info.before_restore else "backup"
            cells = (
                (local_time(info.created), exact(info.created)),
                (size_text(info.size), f"{info.size:,} bytes"),
                (kind, "The file as it was just before a restore replaced it" if info.before_restore else ""),
                (info.path.name, str(info.path)),
            )
            for column, (text, tip) in enumerate(cells):
                self.table.setItem(row, column, cell(text, tip))
        if backups:
            self.table.selectRow(0)
        self.table.setVisible(bool(backups))
        self.empty.setVisible(not backups)
        self.empty.setText("No backups yet. “Back up now” makes the first one." if self.path else "")
        self._update_buttons()

    def selected(self) -> BackupInfo | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or self.listing is None or rows[0].row() >= len(self.listing.backups):
            return None
        return self.listing.backups[rows[0].row()]

    @property
    def busy(self) -> bool:
        return self._work is not None and not self._work.done()

    def _update_buttons(self) -> None:
        read_only = self.ctx.read_only
        self.backup_button.setEnabled(self.path is not None and not self.busy)
        self.restore_button.setEnabled(self.selected() is not None and not self.busy and not read_only)
        self.open_folder.setEnabled(self.listing is not None and self.listing.folder.is_dir())
        if read_only:
            self.restore_button.setToolTip("The window was opened read-only (--read-only): restoring is off")

    def _open_folder(self) -> None:
        if self.listing is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.listing.folder)))

    # ------------------------------------------------------------------ back up
    def back_up(self) -> asyncio.Task | None:
        """Start "Back up now" for the selected file."""
        if self.path is None or self.busy:
            return None
        self._work = asyncio.ensure_future(self._back_up(self.path))
        self._update_buttons()
        return self._work

    async def _back_up(self, path: Path) -> JobReport | None:
        progress = Progress(asyncio.get_running_loop(), self._on_progress)
        self._progress = progress
        self._busy_ui(True, f"Backing up {label_for(path, self.ctx.home)}…")
        try:
            report = await self.ctx.run(data.back_up, path, self.ctx.home, progress.report, progress.cancel)
        except OraError as exc:
            self.message.setText(str(exc))
            return None
        finally:
            self._progress = None
            self._work = None
            self._busy_ui(False)
        self.last_report = report
        words = {"skipped-locked": "Not backed up (a backup is already running)",
                 "cancelled": "Backup cancelled", "failed": "Backup failed"}
        text = report.message[:1].upper() + report.message[1:]
        self.message.setText(text if report.ok else f"{words.get(report.outcome, report.outcome)}: {report.message}")
        self.ctx.status.emit(self.message.text())
        await self.reload()
        return report

    def _on_progress(self, done: int, total: int, _message: str = "") -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))

    def cancel(self) -> None:
        if self._progress is not None:
            self._progress.cancel.set()
            self.cancel_button.setEnabled(False)

    def _busy_ui(self, busy: bool, text: str = "") -> None:
        if text:
            self.message.setText(text)
        self.progress.setRange(0, 0)
        self.progress.setVisible(busy)
        self.cancel_button.setEnabled(True)
        self.cancel_button.setVisible(busy and self._progress is not None)
        self._update_buttons()

    # ------------------------------------------------------------------ restore
    def ask_restore(self) -> asyncio.Task | None:
        """Count both sides, then ask for confirmation (the restore runs only on "Restore")."""
        backup, path = self.selected(), self.path
        if backup is None or path is None or self.busy or self.ctx.read_only:
            return None
        self._work = asyncio.ensure_future(self._ask_restore(backup, path))
        self._update_buttons()
        return self._work

    async def _ask_restore(self, backup: BackupInfo, path: Path) -> data.RestorePlan | None:
        self._busy_ui(True, "Checking the backup…")
        try:
            plan = await self.ctx.run(data.plan_restore, backup, path)
        except OraError as exc:
            self.message.setText(str(exc))
            return None
        finally:
            self._work = None
            self._busy_ui(False)
            self.message.clear()
        if plan.backup_problem:
            self.message.setText(f"This backup cannot be restored: {plan.backup_problem}")
            return plan
        question, details = confirmation_text(plan, label_for(path, self.ctx.home))
        box = QMessageBox(QMessageBox.Icon.Warning, "Restore backup", question, QMessageBox.StandardButton.NoButton,
                          self)
        box.setInformativeText(details)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        restore = box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _result: self._confirmed(box, restore, plan))
        self.confirm = box
        box.open()
        return plan

    def _confirmed(self, box: QMessageBox, restore_button: QPushButton, plan: data.RestorePlan) -> None:
        self.confirm = None
        box.deleteLater()
        if box.clickedButton() is not restore_button:
            self.message.setText("Nothing was restored.")
            return
        self._work = asyncio.ensure_future(self._restore(plan))
        self._update_buttons()

    async def _restore(self, plan: data.RestorePlan) -> RestoreReport | None:
        self._busy_ui(True, f"Restoring {plan.target.name} from {plan.backup.path.name}…")
        try:
            with self.ctx.replacing(plan.target):  # heard once, below, not also as another program's writes
                report = await self.ctx.run(data.restore, plan.backup, plan.target)
                self.ctx.forget_store(plan.target)  # reopen on next use: the schema may differ
        except OraError as exc:
            self.message.setText(f"Nothing was restored: {exc}")
            self.ctx.status.emit(self.message.text())
            return None
        finally:
            self._work = None
            self._busy_ui(False)
        self.last_report = report
        self.message.setText(report.message[:1].upper() + report.message[1:] + ".")
        self.ctx.status.emit(self.message.text())
        self.ctx.notify(plan.target, Change.reload(Initiator.USER, source="restore"))
        self.restored.emit(report)
        await self.reload()
        return report
