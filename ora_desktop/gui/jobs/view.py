"""The Jobs panel: schedule, "Run now" with a dry-run preview, progress and Cancel, run history.

Jobs run in a worker thread through ``ctx.run``; progress and cancel cross threads through
:class:`~ora_desktop.gui.jobs.background.Progress` (``call_soon_threadsafe`` and a
``threading.Event``). The preview dialog is opened with ``open()`` and confirmed by a signal, so
no nested event loop runs inside a coroutine.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ora_desktop.core import Change, Initiator, OraError, timestamps
from ora_desktop.core.maintenance import JOBS, JobReport

from ..a11y import describe
from ..formatting import exact, relative
from . import data, service
from .background import Latest, Progress
from .preview import PreviewDialog
from .widgets import cell, local_time, muted, readonly_table

#: How often a shown Jobs tab writes its relative times again ("3 min ago").
TICK_MS = 20_000


def _upcoming(entry: data.ScheduleRow) -> str:
    """When a scheduled job runs next, in words."""
    if entry.next_run is not None:
        soon = (entry.next_run - timestamps.now()).total_seconds() < 45
        return "due now" if soon else relative(entry.next_run)
    return "off" if entry.interval == "off" else "at the next start"

log = logging.getLogger(__name__)

OUTCOME_COLOURS = {"ok": "#2e9d5b", "failed": "#d0443e", "cancelled": "#d99a1e", "skipped-locked": "#808080",
                   "problems": "#d0443e"}
OUTCOME_WORDS = {"ok": "ok", "failed": "failed", "cancelled": "cancelled", "skipped-locked": "skipped (busy)",
                 "problems": "problems (file damaged)"}


class JobsView(QWidget):
    """Schedule, Run now (preview → confirm → run), progress/cancel and history."""

    #: A job run started from this panel finished (the ``JobReport``).
    run_finished = Signal(object)

    def __init__(self, ctx, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.snapshot: data.JobsSnapshot | None = None
        self.preview: PreviewDialog | None = None
        self.last_report: JobReport | None = None
        self._progress: Progress | None = None
        self._latest = Latest()
        self._running: asyncio.Task | None = None
        #: An edit came while the panel was hidden: read the schedule and history when shown.
        self._stale = False
        #: "3 min ago" goes stale by itself: the schedule's times are written again every
        #: TICK_MS while the tab is shown (from the snapshot: nothing is read).
        self.clock = QTimer(self)
        self.clock.setInterval(TICK_MS)
        self.clock.timeout.connect(self._tick)

        self.file_label = QLabel()
        self.all_files = QCheckBox("All files")
        self.all_files.setToolTip("Show the schedule and history of every agent, not just the selected one")
        self.scheduler_state = QLabel()
        self.scheduler_state.setWordWrap(True)
        muted(self.scheduler_state)
        self.run_in_window = QCheckBox("Run scheduled maintenance while this window is open")
        self.run_in_window.setToolTip(
            "When on, the window runs the schedule (decay, expiry cleanup, backups, checks, retention,\n"
            "promotion) on every agent file under the Ora home while it is open, and tells you what\n"
            "changed. When off, opening files never changes them; the daemon (ora-desktop daemon)\n"
            "can run the schedule instead.")
        self.run_in_window.setEnabled(not ctx.read_only)
        top = QHBoxLayout()
        top.addWidget(self.file_label)
        top.addSpacing(24)
        top.addWidget(self.scheduler_state, 1)
        top.addWidget(self.run_in_window)
        top.addWidget(self.all_files)

        self.schedule = readonly_table(["Job", "File", "Runs", "Last run", "Outcome", "Next run"])
        describe(self.schedule, "Schedule", "Each maintenance job of the file, when it last ran and runs next")
        self.config_problem = QLabel()
        self.config_problem.setWordWrap(True)
        self.config_problem.setStyleSheet("color: #d0443e")
        self.config_problem.hide()
        self.unscheduled = QLabel()
        self.unscheduled.setWordWrap(True)
        self.unscheduled.hide()

        self.job = QComboBox()
        describe(self.job, "Job", "The maintenance job Run now runs")
        for name, spec in JOBS.items():
            self.job.addItem(name, name)
            self.job.setItemData(self.job.count() - 1, spec.description, Qt.ItemDataRole.ToolTipRole)
        self.run_button = QPushButton("&Run now…")
        self.run_button.setToolTip("Preview what the job would change, then confirm to run it")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        describe(self.cancel_button, "Cancel", "Stop the running job at its next step")
        self.cancel_button.setToolTip("Stop the job at its next safe point; an unfinished step changes nothing")
        self.cancel_button.hide()
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions = QHBoxLayout()
        actions.addWidget(QLabel("Job:"))
        actions.addWidget(self.job)
        actions.addWidget(self.run_button)
        actions.addWidget(self.progress, 1)
        actions.addWidget(self.cancel_button)
        actions.addStretch(0)

        schedule_box = QGroupBox("Schedule")
        schedule_layout = QVBoxLayout(schedule_box)
        schedule_layout.addWidget(self.config_problem)
        schedule_layout.addWidget(self.unscheduled)
        schedule_layout.addWidget(self.schedule)
        schedule_layout.addLayout(actions)
        schedule_layout.addWidget(self.message)

        self.history = readonly_table(["Started", "Job", "File", "Outcome", "Took", "Changes", "Message"])
        describe(self.history, "History", "Past runs of maintenance jobs and what they changed")
        self.history.horizontalHeader().setSectionResizeMode(5, QHeaderView.ResizeMode.Interactive)
        self.history.setColumnWidth(5, 260)
        self.history.setWordWrap(False)
        history_box = QGroupBox("History")
        QVBoxLayout(history_box).addWidget(self.history)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(schedule_box)
        split.addWidget(history_box)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([340, 520])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)

        self.run_button.clicked.connect(self.run_now)
        self.cancel_button.clicked.connect(self.cancel)
        self.all_files.toggled.connect(lambda _on: self.refresh())
        self.run_in_window.toggled.connect(self._toggle_schedule)
        self.schedule.itemSelectionChanged.connect(self._pick_scheduled_job)
        ctx.current_changed.connect(lambda _current: self._refresh_when_shown())
        ctx.data_changed.connect(self._on_data_changed)
        self._service: service.JobService | None = None
        self.refresh()

    # ------------------------------------------------------------------ loading
    def _on_data_changed(self, change: Change) -> None:
        if change.initiator is Initiator.EXTERNAL:
            return  # another process wrote memories: the schedule and history did not change
        self._refresh_when_shown()

    def _refresh_when_shown(self) -> None:
        """Reload now if the tab is shown, else when it is: not at every edit or file opened on
        the Memories tab (reading the history competes with the table's repaint)."""
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.clock.start()
        if self._stale:
            self.refresh()
        else:
            self._tick()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802
        super().hideEvent(event)
        self.clock.stop()

    def _tick(self) -> None:
        """Write the relative times again (last run, next run) for the time it is now."""
        if self.snapshot is None:
            return
        for row, entry in enumerate(self.snapshot.schedule[:self.schedule.rowCount()]):
            for column, text in ((3, relative(entry.last_run) or "never"), (5, _upcoming(entry))):
                item = self.schedule.item(row, column)
                if item is not None and item.text() != text:
                    item.setText(text)

    def refresh(self) -> asyncio.Task | None:
        """Reload schedule and history in the background."""
        self._stale = False
        return self._latest.start(self.reload())

    async def reload(self) -> data.JobsSnapshot | None:
        path = self.ctx.current_path()
        everything = self.all_files.isChecked()
        if path is None and not everything:
            self.file_label.setText("No agent selected: showing every file.")
        else:
            self.file_label.setText("Every file" if everything else f"File: {data.label_for(path, self.ctx.home)}")
        svc = self._connect_service()
        next_runs = svc.next_runs() if svc is not None else None
        try:
            snapshot = await self.ctx.run(self._gather, path, everything or path is None, next_runs)
        except Exception as exc:  # the history database is peewee's: its errors are not OraErrors
            log.warning("reading the job schedule and history failed", exc_info=True)
            self.message.setText(f"Could not read the job schedule and history: {exc}")
            return None
        self.snapshot = snapshot
        self._fill(snapshot)
        self._update_buttons()
        return snapshot

    def _connect_service(self) -> service.JobService | None:
        """The in-app scheduler (started after the panels are built): follow its runs and state."""
        svc = service.service_for(self.ctx)
        if svc is not None and svc is not self._service:
            self._service = svc
            svc.run_finished.connect(lambda _report: self.refresh())
            svc.state_changed.connect(self._show_state)
        if svc is not None:
            self._show_state(svc.state)
            self.run_in_window.blockSignals(True)
            self.run_in_window.setChecked(svc.enabled())
            self.run_in_window.blockSignals(False)
        return svc

    def _toggle_schedule(self, on: bool) -> None:
        svc = self._connect_service() if self._service is None else self._service
        if svc is not None:
            svc.set_enabled(on)
            self.refresh()

    def _show_state(self, state: str) -> None:
        self.scheduler_state.setText(f"Schedule: {state}.")

    def _gather(self, path: Path | None, everything: bool, next_runs) -> data.JobsSnapshot:
        home = self.ctx.home
        files = [agent.path for agent in home.agents()] if everything else []
        if path is not None and not everything:
            files = [path]
        elif path is not None and path not in files:
            files.append(path)
        return data.gather(home, files, next_runs, history_path=None if everything else path)

    def _fill(self, snapshot: data.JobsSnapshot) -> None:
        self.config_problem.setText(
            f"The config file has a problem, so the defaults are shown: {snapshot.config_problem}"
            if snapshot.config_problem else "")
        self.config_problem.setVisible(bool(snapshot.config_problem))
        self.unscheduled.setText(
            "No job runs on a schedule for " + ", ".join(snapshot.unscheduled)
            + " (only files under ORA_HOME are scheduled); “Run now” still works."
            if snapshot.unscheduled else "")
        self.unscheduled.setVisible(bool(snapshot.unscheduled))
        self.schedule.setRowCount(len(snapshot.schedule))
        for row, entry in enumerate(snapshot.schedule):
            outcome = OUTCOME_WORDS.get(entry.last_outcome, entry.last_outcome)
            upcoming = _upcoming(entry)
            cells = (
                cell(entry.job, JOBS[entry.job].description if entry.job in JOBS else ""),
                cell(entry.label, str(entry.path)),
                cell(entry.interval, f"from {entry.source}"),
                cell(relative(entry.last_run) or "never", exact(entry.last_run)),
                cell(outcome, "", OUTCOME_COLOURS.get(entry.last_outcome)),
                cell(upcoming, exact(entry.next_run)),
            )
            for column, item in enumerate(cells):
                self.schedule.setItem(row, column, item)
        self.history.setRowCount(len(snapshot.history))
        for row, run in enumerate(snapshot.history):
            cells = (
                cell(local_time(run.started), exact(run.started)),
                cell(run.job + (" (dry run)" if run.dry_run else "")),
                cell(data.label_for(Path(run.path), self.ctx.home), run.path),
                cell(OUTCOME_WORDS.get(run.outcome, run.outcome), "", OUTCOME_COLOURS.get(run.outcome)),
                cell(f"{run.seconds:.1f} s"),
                cell(data.counts_text(run.counts), data.counts_text(run.counts)),
                cell(run.message, run.message),
            )
            for column, item in enumerate(cells):
                self.history.setItem(row, column, item)

    def _pick_scheduled_job(self) -> None:
        rows = self.schedule.selectionModel().selectedRows()
        if rows and self.snapshot is not None and rows[0].row() < len(self.snapshot.schedule):
            index = self.job.findData(self.snapshot.schedule[rows[0].row()].job)
            if index >= 0:
                self.job.setCurrentIndex(index)

    # ------------------------------------------------------------------ running
    def target(self) -> Path | None:
        """The file "Run now" acts on: the selected schedule row's file, else the selected agent."""
        rows = self.schedule.selectionModel().selectedRows()
        if rows and self.snapshot is not None and rows[0].row() < len(self.snapshot.schedule):
            return self.snapshot.schedule[rows[0].row()].path
        return self.ctx.current_path()

    @property
    def busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def _update_buttons(self) -> None:
        read_only = self.ctx.read_only
        self.run_button.setEnabled(not self.busy and self.target() is not None and not read_only)
        if read_only:
            self.run_button.setToolTip("The window was opened read-only (--read-only): jobs cannot change files")

    def run_now(self) -> asyncio.Task | None:
        """Start "Run now" for the chosen job: preview first when the job has a dry run."""
        path = self.target()
        if path is None:
            self.message.setText("Select an agent (or a row of the schedule) first.")
            return None
        if self.busy:
            return None
        name = self.job.currentData()
        spec = JOBS[name]
        preview = spec.supports_dry_run and spec.writes
        self._running = asyncio.ensure_future(self._preview(name, path) if preview else self._run(name, path))
        self._update_buttons()
        return self._running

    async def _preview(self, name: str, path: Path) -> JobReport | None:
        label = data.label_for(path, self.ctx.home)
        report = await self._execute(name, path, dry_run=True, what=f"Previewing {name} on {label}…")
        if report is None or not report.ok:
            return report
        self.message.setText(f"Preview of {name} on {label}: {report.would_change_count:,} to change. Confirm to run.")
        dialog = PreviewDialog(report, label, self)
        dialog.accepted.connect(lambda: self._start_confirmed(name, path))
        dialog.rejected.connect(lambda: self.message.setText(f"{name} on {label} was not run."))
        dialog.finished.connect(dialog.deleteLater)
        self.preview = dialog
        dialog.open()
        return report

    def _start_confirmed(self, name: str, path: Path) -> None:
        self.preview = None
        self._running = asyncio.ensure_future(self._run(name, path))
        self._update_buttons()

    async def _run(self, name: str, path: Path) -> JobReport | None:
        label = data.label_for(path, self.ctx.home)
        report = await self._execute(name, path, dry_run=False, what=f"Running {name} on {label}…")
        if report is not None:
            if report.change is not None:
                self.ctx.report_change(path, report.change)
            self.run_finished.emit(report)
            self.refresh()
        return report

    async def _execute(self, name: str, path: Path, dry_run: bool, what: str) -> JobReport | None:
        """Run the job in a worker thread with progress and Cancel; show how it ended."""
        progress = Progress(asyncio.get_running_loop(), self._on_progress)
        self._progress = progress
        self.message.setText(what)
        self.progress.setRange(0, 0)  # busy until the job reports a total
        self.progress.show()
        self.cancel_button.setEnabled(True)
        self.cancel_button.show()
        self.run_button.setEnabled(False)
        try:
            report = await self.ctx.run(data.run, name, path, self.ctx.home, dry_run=dry_run,
                                        progress=progress.report, cancel=progress.cancel)
        except OraError as exc:
            self.message.setText(str(exc))
            return None
        finally:
            self._progress = None
            self.progress.hide()
            self.cancel_button.hide()
            self._running = None
            self._update_buttons()
        self.last_report = report
        self.message.setText(self._describe(report))
        if hasattr(self.ctx, "status"):
            self.ctx.status.emit(self._describe(report))
        return report

    def _describe(self, report: JobReport) -> str:
        label = data.label_for(report.path, self.ctx.home)
        kind = "Preview of " if report.dry_run else ""
        head = f"{kind}{report.job} on {label}: {OUTCOME_WORDS.get(report.outcome, report.outcome)}"
        detail = "; ".join(p for p in (data.counts_text(report.counts), report.message) if p)
        return f"{head} ({report.seconds:.1f} s){' — ' + detail if detail else ''}"

    def _on_progress(self, done: int, total: int, _message: str = "") -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
            self.progress.setFormat(f"%p% ({done:,} of {total:,})")

    def cancel(self) -> None:
        """Ask the running job to stop at its next safe point."""
        if self._progress is not None:
            self._progress.cancel.set()
            self.cancel_button.setEnabled(False)
            self.message.setText("Cancelling…")
