"""The in-app scheduler: ``core.scheduler.Scheduler`` on the window's qasync loop.

``start(ctx)`` is called once at startup (:func:`ora_desktop.gui.panels.start_services`). The window runs the
maintenance schedule only when the person turned that on (``RUN_IN_WINDOW`` in the window's
settings, the check box on the Jobs tab): opening a file to look at it never changes it. When on,
the schedule runs here while the window is open, unless a headless daemon is running: then the
daemon owns the schedule and this service idles, checking every minute whether that is still so.
A read-only window (``--read-only``) runs no scheduled job at all. Either way the
per-(job, file) locks in ``run_job`` keep them out of each other's way (a clash is "skipped").
After each scheduled run the service emits ``run_finished(report)`` and, when the job changed
memories, ``ctx.notify(path, report.change)`` so the views refresh, and
``notice(text)`` with what changed, in words, for the window to show.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from ora_desktop.core import OraError
from ora_desktop.core.daemon_lock import DaemonInfo, running_daemon
from ora_desktop.core.maintenance import JobReport
from ora_desktop.core.scheduler import Scheduler

log = logging.getLogger(__name__)

#: How often the service checks whether a daemon started or stopped.
DAEMON_CHECK_MS = 60_000
#: Seconds the window waits after opening before its first scheduled run (an overdue one
#: included): opening the window to look around changes nothing on disk (ARCHITECTURE.md, contract 2).
FIRST_RUN_DELAY = 600
#: The window setting that lets the window run the maintenance schedule (off until turned on).
RUN_IN_WINDOW = "jobs/run_in_window"

_services: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class JobService(QObject):
    """Owns the scheduler for one window."""

    #: A scheduled run finished (the ``JobReport``), on the GUI thread.
    run_finished = Signal(object)
    #: The service's state in words changed ("running the schedule", "the daemon … runs it").
    state_changed = Signal(str)
    #: A scheduled run changed memories: what it did, in words (the window shows it).
    notice = Signal(str)

    def __init__(self, ctx, loop: asyncio.AbstractEventLoop, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.loop = loop
        self.scheduler: Scheduler | None = None
        self.state = "not started"
        self.daemon: DaemonInfo | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(DAEMON_CHECK_MS)
        self._timer.timeout.connect(self.check)
        self._stopped = False
        self.stopping: asyncio.Task | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Run the schedule here unless a daemon does; re-check every minute."""
        self.check()
        self._timer.start()

    def enabled(self) -> bool:
        """Whether the person let this window run the maintenance schedule."""
        value = self.ctx.settings.value(RUN_IN_WINDOW, False)
        return value is True or str(value).lower() == "true"

    def set_enabled(self, on: bool) -> None:
        """Turn the window's schedule on or off (remembered), and act on it now."""
        self.ctx.settings.setValue(RUN_IN_WINDOW, bool(on))
        self.check()

    def check(self) -> None:
        """Start or idle the scheduler depending on the setting and on whether a daemon runs."""
        if self._stopped:
            return
        if self.ctx.read_only:
            self._set_state("the window is read-only (--read-only), so it runs no scheduled jobs")
            return
        if not self.enabled():
            self._halt()
            self._set_state("scheduled maintenance is off in this window: nothing changes your files unless you "
                            "run a job. Tick “Run scheduled maintenance…” to turn it on, or run the daemon "
                            "(ora-desktop daemon)")
            return
        daemon = running_daemon()
        if daemon is not None:
            self.daemon = daemon
            if self.scheduler is not None:
                self._halt()
            self._set_state(f"the maintenance daemon (pid {daemon.pid}) runs the schedule; "
                            "the window's scheduler is idle")
            return
        self.daemon = None
        if self.scheduler is None:
            try:
                self.scheduler = Scheduler(self.loop, self.ctx.home, on_report=self._on_report,
                                           first_run_delay=FIRST_RUN_DELAY)
                self.scheduler.start()
            except OraError as exc:
                self.scheduler = None
                self._set_state(f"the schedule is not running: {exc}")
                log.error("in-app scheduler: %s", exc)
                return
            delay = f"; the first runs start {FIRST_RUN_DELAY // 60} minutes after opening" if FIRST_RUN_DELAY else ""
            self._set_state(f"the window runs the maintenance schedule while it is open{delay}")

    def stop(self) -> None:
        """Stop scheduling now (the window is closing): no new runs; a running job is asked to
        stop at its next safe point and this waits for it, so no worker thread outlives the loop."""
        self._stopped = True
        self._timer.stop()
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            scheduler.shutdown()  # synchronous: the loop may not run again to finish a coroutine
        self._set_state("stopped")

    def _halt(self) -> None:
        """Hand the schedule to the daemon: stop on the loop, letting a running job finish."""
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None and not self.loop.is_closed():
            self.stopping = self.loop.create_task(scheduler.stop())
            self.stopping.add_done_callback(lambda t: t.cancelled() or t.exception() and log.error(
                "stopping the scheduler", exc_info=t.exception()))

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            log.info("jobs service: %s", state)
            self.state_changed.emit(state)

    # ------------------------------------------------------------------ queries
    def next_runs(self) -> dict[tuple[str, str], datetime]:
        """``(job, resolved path) -> next run`` of every pair the in-app scheduler holds."""
        if self.scheduler is None or not self.scheduler.running:
            return {}
        return {(job, str(path)): when for job, path, when in self.scheduler.jobs_due()}

    # ------------------------------------------------------------------ reports
    def _on_report(self, report: JobReport) -> None:
        """Called on the loop (GUI thread) after each scheduled run."""
        if report.change is not None:
            self.ctx.report_change(Path(report.changed_file), report.change)
            changed = {name: n for name, n in report.counts.items() if n}
            if changed and not report.dry_run:
                self.notice.emit(describe_run(report, changed))
        self.run_finished.emit(report)


def describe_run(report: JobReport, counts: dict[str, int]) -> str:
    """``Scheduled cleanup changed ora (anwe-sh): expired 23.`` plus where to get rows back; a job
    that wrote another file than the one it ran on (promote) names that file and says what it did."""
    path = Path(report.changed_file)
    where = f"{path.name.removesuffix('.site.db')} ({path.parent.name})"
    what = ", ".join(f"{name.replace('_', ' ')} {n:,}" for name, n in sorted(counts.items()))
    if report.changed_path is not None and report.message:
        what = report.message
    text = f"Scheduled {report.job} changed {where}: {what}."
    if report.job in ("cleanup", "retention"):
        text += " Removed memories are kept in Edit > Deleted memories, where they can be restored."
    return text


def service_for(ctx) -> JobService | None:
    """The service started for ``ctx``, if any."""
    return _services.get(ctx)


def start(ctx) -> JobService:
    """Start the in-app scheduler for this window's context (idempotent)."""
    existing = _services.get(ctx)
    if existing is not None:
        return existing
    service = JobService(ctx, ctx.loop, ctx)
    _services[ctx] = service
    service.notice.connect(ctx.notice)
    service.start()
    app = QCoreApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(service.stop)
    if ctx.window is not None:
        ctx.window.closed.connect(service.stop)
    return service
