"""Scheduling maintenance jobs on a running asyncio loop (APScheduler 3.11 ``AsyncIOScheduler``).

The daemon runs it on a plain asyncio loop, the window on its qasync loop. Each (job, file)
pair is one APScheduler job with an interval from ``config.toml``. Jobs run one at a time in a
worker thread (the loop never blocks) through :func:`~ora_desktop.core.maintenance.run_job`,
so the per-(job, file) lock keeps the window, the daemon and the command line out of each
other's way.

Missed runs: the first run of each pair is placed from the run history (``last run + interval``,
or now if that is past or it never ran), so a run missed while the machine was off happens once
on the next start. Within a run, ``coalesce=True`` with a generous ``misfire_grace_time`` turns a
long stall into one late run instead of none (APScheduler's default grace of 1 s drops it), and
the loop timer is capped at a minute so a suspend (during which the monotonic loop clock stops)
delays nothing by more than that. ``ORA_HOME`` is rescanned every minute (``[daemon] rescan``):
new sites and agents get their jobs, vanished ones lose them, and an edited config is reloaded.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.interval import IntervalTrigger

from . import history, sync_settings
from .config import Config, ConfigError
from .errors import OraError
from .home import OraHome
from .maintenance.jobs import JOBS, JobReport, run_job
from .store import open_store

log = logging.getLogger(__name__)

MISFIRE_GRACE = 7 * 86400  # a run up to a week late still happens (once: coalesce=True)
MAX_SLEEP = 60.0  # seconds: the loop timer's cap (monotonic clocks stop during suspend)
RESCAN_ID = "ora-desktop:rescan"
PRUNE_ID = "ora-desktop:prune-history"
HISTORY_DAYS = 180  # run history older than this is forgotten (daily)


@dataclass(frozen=True)
class PlannedJob:
    """One (job, file) pair the schedule asks for."""

    job: str
    path: Path
    interval: int  # seconds
    site: str
    agent: str


def planned_jobs(config: Config, home: OraHome) -> list[PlannedJob]:
    """Every (job, file) pair to schedule: all jobs on all agents, except ``off`` ones, retention
    where the site has no policy, and promote on agents that are not task agents."""
    out = []
    for agent in home.agents():
        for job in JOBS:
            if job == "retention" and not config.retention(agent.site).active:
                continue
            if job == "promote" and not agent.is_task_agent:
                continue
            if job == "sync" and not (sync_settings.url_for(config, agent.site)
                                      and sync_settings.takes_part(config, agent.site, agent.agent)):
                continue
            interval = config.schedule(job, agent.site).value
            if interval is not None:
                out.append(PlannedJob(job, agent.path.resolve(), interval, agent.site, agent.agent))
    return out


def _first_run(plan: PlannedJob, last: dict[tuple[str, str], datetime], now: datetime) -> datetime:
    previous = last.get((plan.job, str(plan.path)))
    return now if previous is None else previous + timedelta(seconds=plan.interval)


def next_runs(config: Config, home: OraHome, now: datetime | None = None) -> list[tuple[str, Path, datetime]]:
    """``(job, path, next time)`` for every planned pair, soonest first, from the run history.

    A time in the past means the run is overdue (it runs as soon as a scheduler starts).
    """
    now = now or datetime.now(UTC)
    last = history.last_runs()
    runs = [(p.job, p.path, _first_run(p, last, now)) for p in planned_jobs(config, home)]
    return sorted(runs, key=lambda r: (r[2], r[0], str(r[1])))


class _WakefulScheduler(AsyncIOScheduler):
    """An ``AsyncIOScheduler`` whose loop timer never sleeps longer than :data:`MAX_SLEEP`."""

    def _start_timer(self, wait_seconds):
        super()._start_timer(None if wait_seconds is None else min(wait_seconds, MAX_SLEEP))


class Scheduler:
    """Maintenance on a schedule, on ``loop`` (which must be the loop that will be running).

    ``on_report(report)`` (optional) is called on the loop after every run.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, home: OraHome | None = None,
                 config: Config | None = None, *, on_report: Callable[[JobReport], None] | None = None,
                 first_run_delay: float = 0.0) -> None:
        self.loop = loop
        #: Seconds after start before the first (possibly overdue) run of a pair: the window uses
        #: a grace period so that opening it to look around writes nothing to agent files.
        self.first_run_delay = max(0.0, float(first_run_delay))
        self.home = home or OraHome()
        self.config = config or Config.load()
        self.on_report = on_report
        self._config_stamp = _stamp(self.config.path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ora-maintenance")
        self._running: set[asyncio.Future] = set()
        self._cancel = threading.Event()
        #: Files a scheduled run found unopenable: resolved path -> (file signature, reason). Their
        #: runs are skipped (one failed entry in the history, not one per slot) until the file changes.
        self.unopenable: dict[str, tuple[tuple | None, str]] = {}
        self._aps = _WakefulScheduler(
            event_loop=loop, timezone=UTC,
            job_defaults={"coalesce": True, "misfire_grace_time": MISFIRE_GRACE, "max_instances": 1},
        )

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        return self._aps.running

    def start(self) -> None:
        """Plan every (job, file) pair, schedule the rescan, start the timer."""
        self.rescan()
        seconds = self.config.rescan_seconds().value
        self._aps.add_job(self._rescan_async, IntervalTrigger(seconds=seconds, timezone=UTC), id=RESCAN_ID,
                          replace_existing=True)
        self._aps.add_job(self._prune_async, IntervalTrigger(days=1, timezone=UTC), id=PRUNE_ID,
                          next_run_time=datetime.now(UTC), replace_existing=True)
        self._aps.start()
        log.info("scheduler started: %d job(s) on %d file(s)", len(self._aps.get_jobs()) - 2,
                 len({p.path for p in planned_jobs(self.config, self.home)}))

    async def stop(self, cancel_running: bool = False) -> None:
        """Stop scheduling; let the running job finish (or ask it to stop), then return."""
        if self._aps.running:
            self._aps.shutdown(wait=False)
        if cancel_running:
            self._cancel.set()
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
        self._executor.shutdown(wait=True)

    def shutdown(self, cancel_running: bool = True) -> None:
        """Stop at once, synchronously (for a window closing while its loop may not run again).

        Call it on the loop's thread. Stops the timer, asks a running job to stop at its next safe
        point (unless ``cancel_running`` is False) and waits for the worker thread to end.
        """
        if self._aps.running:
            # AsyncIOScheduler.shutdown only schedules the stop on the loop; do it here and now.
            BaseScheduler.shutdown(self._aps, wait=False)
            self._aps._stop_timer()
        if cancel_running:
            self._cancel.set()
        self._executor.shutdown(wait=True)

    # ------------------------------------------------------------------ planning
    def rescan(self) -> None:
        """Sync the scheduled pairs with ``ORA_HOME`` and the config (reloaded when edited)."""
        stamp = _stamp(self.config.path)
        if stamp != self._config_stamp:
            try:
                self.config = Config.load(self.config.path)
                log.info("reloaded %s", self.config.path)
            except ConfigError as exc:
                log.error("keeping the previous settings: %s", exc)
            self._config_stamp = stamp
        wanted = {_job_id(p.job, p.path): p for p in planned_jobs(self.config, self.home)}
        current = {job.id: job for job in self._aps.get_jobs() if job.id not in (RESCAN_ID, PRUNE_ID)}
        for job_id in current.keys() - wanted.keys():
            self._aps.remove_job(job_id)
            log.info("unscheduled %s (file gone or job turned off)", job_id)
        now = datetime.now(UTC)
        earliest = now + timedelta(seconds=self.first_run_delay)
        last = history.last_runs() if wanted.keys() - current.keys() else {}
        for job_id, plan in wanted.items():
            existing = current.get(job_id)
            if existing is not None and existing.trigger.interval == timedelta(seconds=plan.interval):
                continue
            first = max(earliest, _first_run(plan, last, now)) if existing is None else now + timedelta(
                seconds=plan.interval)
            trigger = IntervalTrigger(seconds=plan.interval, start_date=first, timezone=UTC)
            if existing is not None:
                self._aps.reschedule_job(job_id, trigger=trigger)
            else:
                self._aps.add_job(self._fire, trigger, args=(plan.job, str(plan.path), plan.interval), id=job_id,
                                  name=f"{plan.job} {plan.site}/{plan.agent}", next_run_time=first)

    async def _rescan_async(self) -> None:
        try:
            self.rescan()
        except Exception:  # keep the schedule we have
            log.exception("rescan of %s failed", self.home.root)

    async def _prune_async(self) -> None:
        try:
            history.prune(HISTORY_DAYS)
        except Exception as exc:  # the history is a convenience: never stop the schedule for it
            log.warning("could not prune the run history: %s", exc)

    def jobs_due(self) -> list[tuple[str, Path, datetime]]:
        """``(job, path, next run time)`` of every scheduled pair, soonest first.

        A slot that :meth:`_fire` will skip, because the same run finished recently (a "Run now"
        or another process), is reported as the slot after it: the time the job really runs.
        """
        last = history.last_runs()
        out = []
        for job in self._aps.get_jobs():
            if job.id in (RESCAN_ID, PRUNE_ID) or job.next_run_time is None:
                continue
            name, path = job.args[0], Path(job.args[1])
            interval = timedelta(seconds=job.args[2])
            when = job.next_run_time.astimezone(UTC)
            recent = last.get((name, str(path)))
            if recent is not None and when - recent < interval / 2:
                when += interval
            out.append((name, path, when))
        return sorted(out, key=lambda r: (r[2], r[0], str(r[1])))

    # ------------------------------------------------------------------ running
    async def run(self, job: str, path: str | Path) -> JobReport:
        """Run one job now, in the worker thread (for "run now" buttons and ``daemon --once``)."""
        future = self.loop.run_in_executor(self._executor, self._call, job, str(path))
        self._running.add(future)
        try:
            report = await future
        finally:
            self._running.discard(future)
        if self.on_report is not None:
            self.on_report(report)
        return report

    def _call(self, job: str, path: str) -> JobReport:
        return run_job(job, path, home=self.home, config=self.config, cancel=self._cancel)

    async def _fire(self, job: str, path: str, interval: int) -> None:
        """A scheduled run: skipped if another process finished the same run recently, or if the
        file could not be opened last time and has not changed since."""
        if self._cancel.is_set():
            return
        known = self.unopenable.get(path)
        if known is not None:
            if known[0] == _signature(Path(path)):
                log.debug("skipping %s on %s: the file still cannot be opened (%s)", job, path, known[1])
                return
            del self.unopenable[path]  # changed: try again
        recent = history.last_run(job, path)
        if recent is not None and datetime.now(UTC) - recent < timedelta(seconds=interval / 2):
            log.debug("%s on %s ran at %s in another process; skipping this slot", job, path, recent)
            return
        report = await self.run(job, path)
        if report.outcome != "ok" and not self._cancel.is_set():
            reason = await self.loop.run_in_executor(self._executor, _open_problem, Path(path))
            if reason is not None:
                self.unopenable[path] = (_signature(Path(path)), reason)
                log.warning("%s cannot be opened (%s): its scheduled jobs wait until the file changes",
                            path, reason)

    async def run_due(self) -> list[JobReport]:
        """Run every pair that is due now (from the run history), one after another."""
        now = datetime.now(UTC)
        reports = []
        for job, path, when in next_runs(self.config, self.home, now):
            if when <= now and not self._cancel.is_set():
                reports.append(await self.run(job, path))
        return reports


def _signature(path: Path) -> tuple | None:
    """What changes when the file (or its write-ahead log) is written: sizes and mtimes."""
    out = []
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            stat = part.stat()
        except OSError:
            out.append(None)
            continue
        out.append((stat.st_size, stat.st_mtime_ns, stat.st_ino))
    return tuple(out)


def _open_problem(path: Path) -> str | None:
    """Why ``path`` cannot be opened as a memory file, or ``None`` if it opens."""
    try:
        open_store(path, readonly=True).close()
    except OraError as exc:
        return str(exc)
    return None


def _job_id(job: str, path: Path) -> str:
    return f"{job}:{path}"


def _stamp(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
