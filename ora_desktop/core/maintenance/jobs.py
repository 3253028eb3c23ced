"""The job registry and runner: one job on one file at a time, across every process.

``run_job(name, path)`` takes a file lock per (job, database) under the user data directory,
runs the job, records the run in the history database and returns a :class:`JobReport`.
If another process (the window, the daemon, ``ora-desktop run``) is already running that job on
that file, the report's outcome is ``skipped-locked`` and nothing is done.

Jobs run in whatever thread calls ``run_job`` (the window calls it from worker threads);
``progress(done, total)`` is called from that thread, and setting the ``cancel`` event makes the
job stop at its next safe point (outcome ``cancelled``; nothing half-done is committed).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import filelock
import peewee

from .. import backup, feedreaders, history
from ..config import Config
from ..connection import translate
from ..errors import InvalidValue, OraError
from ..home import OraHome
from ..locks import job_lock
from ..records import Change, ChangeKind, Initiator
from . import check, cleanup, consolidate, decay, promote, purge_trash, retention, sync_job
from .context import Cancelled, CancelledPartWay, JobContext, Outcome, Progress

log = logging.getLogger(__name__)

# Set on the log record that repeats a finished job's report, so a face that shows the report can drop it.
REPORT_RECORD = "ora_job_report"
OUTCOMES = ("ok", "problems", "failed", "skipped-locked", "cancelled")
#: Outcomes of a run that finished (the scheduler counts it as done; "problems" = a damaged file).
COMPLETED = ("ok", "problems")


@dataclass
class JobReport:
    """What a run did.

    ``counts`` are the job's numbers (e.g. ``{"expired": 12}``); ``would_change`` lists
    ``(memory id, summary)`` pairs of what a dry run would change (for ``check``: every finding,
    dry run or not). Times are aware UTC datetimes.
    """

    job: str
    path: Path
    started: datetime
    ended: datetime
    outcome: str = "ok"
    counts: dict[str, int] = field(default_factory=dict)
    message: str = ""
    would_change: list[tuple[str, str]] = field(default_factory=list)
    dry_run: bool = False
    detail: object | None = None  # the job's own result record (e.g. a SyncResult), not recorded
    #: What the run changed in the file's memories (initiator ``JOB``), for views to repaint or
    #: reload; ``None`` when it changed none (a dry run, a backup, a failed or skipped run).
    change: Change | None = None
    #: The file ``change`` is about, when not ``path`` (promote changes the parent agent's file).
    changed_path: Path | None = None
    #: How many would change, when more than ``would_change`` lists (a preview is capped).
    would_change_total: int | None = None

    @property
    def would_change_count(self) -> int:
        """How many memories a dry run found to change (listed or not)."""
        return max(self.would_change_total or 0, len(self.would_change))

    @property
    def changed_file(self) -> Path:
        """The file whose memories the run changed (``path`` unless the job wrote another)."""
        return self.changed_path or self.path

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def damaged(self) -> bool:
        """The run finished and found the file damaged (``check``'s outcome ``problems``)."""
        return self.outcome == "problems"

    @property
    def seconds(self) -> float:
        return (self.ended - self.started).total_seconds()


JobFunction = Callable[[JobContext], Outcome]


@dataclass(frozen=True)
class JobSpec:
    """A registered job: its name, a one-line description, whether it has a dry run."""

    name: str
    description: str
    supports_dry_run: bool
    function: JobFunction
    writes: bool = True
    #: Whether a finished run can change memories (a backup writes only its copy).
    changes_memories: bool = True


JOBS: dict[str, JobSpec] = {
    "decay": JobSpec("decay", "lower the health of memories not accessed for 7 days (0.01 a day)",
                     True, decay.run),
    "cleanup": JobSpec("cleanup", "delete expired memories (recoverably, to the trash)", True, cleanup.run),
    "retention": JobSpec("retention", "apply the site's retention policy (age / count; never importance 10)",
                         True, retention.run),
    "promote": JobSpec("promote", "copy a finished task agent's important memories into its parent agent",
                       True, promote.run),
    "backup": JobSpec("backup", "copy the file with SQLite's online backup, check it, rotate old backups",
                      False, backup.run, changes_memories=False),
    "check": JobSpec("check", "integrity check and lint; --repair fixes what is safe", True, check.run,
                     writes=False, changes_memories=False),
    "sync": JobSpec("sync", "push pending memories to the PostgreSQL server and pull what changed there",
                    True, sync_job.run),
    "consolidate": JobSpec("consolidate", "summarise clusters of old, low-health memories on one topic "
                           "(the summary supersedes them; nothing is deleted)", True, consolidate.run),
    "purge-trash": JobSpec("purge-trash", "forget deleted memories older than [trash] keep_days (default 30)",
                           True, purge_trash.run),
}



def run_job(name: str, db_path: str | Path, *, dry_run: bool = False, progress: Progress | None = None,
            cancel: threading.Event | None = None, home: OraHome | None = None, config: Config | None = None,
            repair: bool = False, now: datetime | None = None, record: bool = True) -> JobReport:
    """Run one job on one database file and record the run; never raises for job failures.

    Unknown job names and a dry run of a job without one raise ``InvalidValue`` (bad input).
    Everything else — a broken file, a locked database, a cancel — ends in the report's
    ``outcome`` (``ok``/``failed``/``skipped-locked``/``cancelled``) and ``message``.
    """
    spec = JOBS.get(name)
    if spec is None:
        raise InvalidValue("job", f"unknown job {name!r} (jobs: {', '.join(JOBS)})")
    if dry_run and not spec.supports_dry_run:
        raise InvalidValue("dry_run", f"the {name} job has no dry run")
    path = Path(db_path).expanduser().resolve()
    ctx = JobContext(path, dry_run=dry_run, progress=progress, cancel=cancel, home=home or OraHome(),
                     config=config or Config.load(), repair=repair, now=now)
    lock = job_lock(name, path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        started = _now()
        report = JobReport(name, path, started, started, "skipped-locked",
                           message=f"{name} is already running on {path} in another process or thread",
                           dry_run=dry_run)
        return _finish(report, record)
    started = _now()  # once the lock is held: recorded runs of one (job, file) never overlap
    try:
        with feedreaders.initiated(Initiator.JOB):  # the window's store hears the job's commits as a job's
            outcome = spec.function(ctx)
        report = JobReport(name, path, started, _now(), outcome.outcome, outcome.counts, outcome.message,
                           outcome.would_change, dry_run, outcome.detail, _change(spec, outcome, dry_run),
                           outcome.changed_path, outcome.would_change_total)
    except CancelledPartWay as exc:
        report = JobReport(name, path, started, _now(), "cancelled", message=f"{name}: {exc}", dry_run=dry_run)
    except Cancelled:
        report = JobReport(name, path, started, _now(), "cancelled", message=f"{name} on {path}: cancelled; "
                           "nothing was changed by the unfinished step", dry_run=dry_run)
    except OraError as exc:
        report = JobReport(name, path, started, _now(), "failed", message=str(exc), dry_run=dry_run)
    except (sqlite3.Error, peewee.PeeweeException) as exc:  # e.g. a damaged page met while reading rows
        report = JobReport(name, path, started, _now(), "failed", message=str(translate(path, exc)),
                           dry_run=dry_run)
    except Exception as exc:  # a job bug must not kill the daemon: report it, log the traceback
        log.exception("%s on %s failed", name, path)
        report = JobReport(name, path, started, _now(), "failed",
                           message=f"{path}: {type(exc).__name__}: {exc}", dry_run=dry_run)
    finally:
        lock.release()
    return _finish(report, record)


def _change(spec: JobSpec, outcome: Outcome, dry_run: bool) -> Change | None:
    """The ``Change`` of a finished run: the job's own, or a reload of the file (rows unknown)."""
    if dry_run or not spec.changes_memories or outcome.outcome not in COMPLETED:
        return None
    change = outcome.change or Change.reload(Initiator.JOB)
    return change.but(initiator=Initiator.JOB, kind=ChangeKind.JOB)


def _finish(report: JobReport, record: bool) -> JobReport:
    if record:
        try:
            history.record(report)
        except Exception as exc:  # the history db must never make a job fail
            log.warning("could not record the %s run in %s: %s", report.job, history.state_path(), exc)
    log.log(logging.WARNING if report.outcome in ("failed", "problems") else logging.INFO,
            "%s %s: %s %s", report.job, report.path, report.outcome, report.message, extra={REPORT_RECORD: True})
    return report


def _now() -> datetime:
    return datetime.now(UTC)
