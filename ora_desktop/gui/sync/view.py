"""The Sync panel: the selected file's sync indicator, "Sync now", and the conflicts list.

Everything comes from core: ``operations.sync.status`` (last sync, pending count, last error,
conflicts kept — read-only, no server), ``operations.sync.sync`` (the same run as the command
line and the scheduler: one lock per file, one run history) and ``operations.sync.conflicts``.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ora_desktop.core import OraError
from ora_desktop.core.config import Config
from ora_desktop.core.operations import sync as sync_ops
from ora_desktop.core.sync import ConflictPage

from ..a11y import describe
from ..jobs.background import Latest
from ..jobs.widgets import LazyRefresh, cell, local_time, muted, readonly_table

ERROR_COLOUR = "#c0392b"


CONFLICTS_SHOWN = 500  # the newest ones; the label gives the total and points to the command for the rest


def load(path, home) -> tuple[sync_ops.SyncStatus, ConflictPage]:
    """Status and the newest conflicts of one file (worker thread)."""
    config = Config.load()
    return sync_ops.status(path, config), sync_ops.conflicts(path, limit=CONFLICTS_SHOWN)


def run_sync(path, home) -> sync_ops.SyncReport:
    """One sync of one file through the shared operation (worker thread)."""
    return sync_ops.sync(path, home=home)


class SyncView(LazyRefresh, QWidget):
    """Sync state of the selected file, a "Sync now" button and the losing versions sync kept."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._latest = Latest()
        self.sync_task: asyncio.Task | None = None
        self.status: sync_ops.SyncStatus | None = None

        self.title = QLabel()
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.indicator = QLabel()
        self.indicator.setObjectName("SyncIndicator")
        self.server = QLabel()
        self.server.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.last_sync = QLabel()
        self.pending = QLabel()
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow("Server:", self.server)
        form.addRow("Last sync:", self.last_sync)
        form.addRow("Pending:", self.pending)
        form.addRow("Last error:", self.error)

        self.sync_now = QPushButton("Sync now")
        self.sync_now.setToolTip("Push pending memories to the server and pull what changed there")
        self.sync_now.clicked.connect(self.start_sync)
        self.outcome = muted(QLabel())
        self.outcome.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(self.sync_now)
        bar.addWidget(self.outcome, 1)

        self.conflicts_label = QLabel("Conflicts sync settled:")
        self.conflicts = readonly_table(["Decided", "Memory", "Kind · winner", "Losing version", "Basis"])
        describe(self.conflicts, "Sync conflicts", "Conflicts a sync settled: which side won, why, and the "
                 "losing version kept so it can be brought back")

        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addStretch(1)
        top.addWidget(self.indicator)
        layout.addLayout(top)
        layout.addLayout(form)
        layout.addLayout(bar)
        layout.addWidget(self.conflicts_label)
        layout.addWidget(self.conflicts, 1)

        ctx.current_changed.connect(self.request_refresh)
        ctx.data_changed.connect(self.request_refresh)
        self.init_lazy()

    # ------------------------------------------------------------------ loading
    def refresh(self) -> asyncio.Task:
        """Reload the selected file's sync state in the background."""
        return self._latest.start(self.reload())

    async def reload(self) -> sync_ops.SyncStatus | None:
        path = self.ctx.current_path()
        self.sync_now.setEnabled(False)
        if path is None:
            self.title.setText("Select an agent in the sidebar to see its sync state.")
            self._clear()
            return None
        self.title.setText(path.name)
        try:
            status, kept = await self.ctx.run(load, path, self.ctx.home)
        except OraError as exc:
            self._clear()
            self.error.setText(str(exc))
            return None
        self.status = status
        self._show(status, kept)
        return status

    def _clear(self) -> None:
        self.status = None
        for label in (self.indicator, self.server, self.last_sync, self.pending, self.error):
            label.setText("")
        self.conflicts.setRowCount(0)

    def _show(self, status: sync_ops.SyncStatus, kept: ConflictPage) -> None:
        last = status.last_sync
        self.server.setText(last.server if last else ("set in config.toml" if status.configured else
                                                      "not set up — add [sync] url to config.toml"))
        when = local_time(last.last_sync) if last and last.last_sync else "never"
        self.last_sync.setText(f"{when} — {status.clock_problem}" if status.clock_problem else when)
        self.last_sync.setStyleSheet(f"color: {ERROR_COLOUR}" if status.clock_problem else "")
        self.pending.setText(f"{status.pending:,} memories wait to be pushed" if status.pending else "nothing")
        self.error.setText(status.last_error or "—")
        self.error.setStyleSheet(f"color: {ERROR_COLOUR}" if status.last_error else "")
        if status.last_error:
            self.indicator.setText("⚠ sync failed")
        elif not status.configured:
            self.indicator.setText("sync off")
        elif status.pending:
            self.indicator.setText(f"↑ {status.pending:,} pending")
        else:
            self.indicator.setText("✔ in sync" if last else "never synced")
        self.indicator.setToolTip(self.error.text() if status.last_error else self.pending.text())
        entries = kept.entries
        self.conflicts.setRowCount(len(entries))
        for row, entry in enumerate(entries):
            memory = entry.kept.memory if entry.kept else None
            lost = (memory.title if memory else
                    "the deletion (nothing to restore)" if entry.kind == "delete" else "—")
            self.conflicts.setItem(row, 0, cell(local_time(entry.decided_at) if entry.decided_at else "—"))
            self.conflicts.setItem(row, 1, cell(entry.memory_id))
            self.conflicts.setItem(row, 2, cell(f"{entry.kind} · {entry.winner or '—'} won"))
            self.conflicts.setItem(row, 3, cell(lost, memory.content if memory else lost))
            self.conflicts.setItem(row, 4, cell(entry.basis or "—", entry.basis))
        more = (f"; the newest {len(entries):,} shown — `ora-desktop sync --conflicts` pages through all"
                if kept.total > len(entries) else "")
        self.conflicts_label.setText(f"Conflicts sync settled: {kept.total:,} (losing versions are in the trash as "
                                     f"'sync conflict'){more}")
        running = self.sync_task is not None and not self.sync_task.done()
        self.sync_now.setEnabled(status.configured and not self.ctx.read_only and not running)

    # ------------------------------------------------------------------ syncing
    def start_sync(self) -> asyncio.Task | None:
        """Sync the selected file now (in the background); the panel refreshes when it ends."""
        path = self.ctx.current_path()
        if path is None or (self.sync_task is not None and not self.sync_task.done()):
            return None
        self.sync_task = asyncio.ensure_future(self._sync(path))
        return self.sync_task

    async def _sync(self, path) -> sync_ops.SyncReport | None:
        self.sync_now.setEnabled(False)
        self.outcome.setText("Syncing…")
        try:
            report = await self.ctx.run(run_sync, path, self.ctx.home)
        except OraError as exc:
            self.outcome.setText(f"Sync failed: {exc}")
            await self.reload()
            return None
        if report.results:
            self.outcome.setText(report.results[0].summary)
        elif report.runs:
            self.outcome.setText(f"Sync {report.runs[0].outcome}: {report.runs[0].message}")
        if report.change:
            self.ctx.report_change(path, report.change)
        await self.reload()
        return report
