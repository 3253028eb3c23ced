"""Run history: every maintenance run, in the app's own state database (never an agent's file).

``<user data dir>/state.db`` holds one ``job_runs`` row per run (job, file, start, end, outcome,
counts, message). Several processes (window, daemon, ``ora-desktop run``) write it at once, so
it uses WAL, a busy timeout and ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import peewee as pw

from . import paths
from .connection import translated
from .private import private_dir, refuse_link, touch_private

if TYPE_CHECKING:
    from .maintenance.jobs import JobReport

STAMP = "%Y-%m-%d %H:%M:%S.%f"
COMPLETED = ("ok", "problems")  # outcomes of a run that finished ("problems": it found the file damaged)


class JobRunRow(pw.Model):
    job = pw.TextField(index=True)
    path = pw.TextField(index=True)
    started = pw.TextField(index=True)
    ended = pw.TextField()
    outcome = pw.TextField()
    counts = pw.TextField(default="{}")
    message = pw.TextField(default="")
    dry_run = pw.BooleanField(default=False)
    pid = pw.IntegerField(null=True)

    class Meta:
        table_name = "job_runs"
        indexes = ((("job", "path", "started"), False),)


@dataclass(frozen=True)
class JobRun:
    """One recorded run (times are aware UTC datetimes)."""

    id: int
    job: str
    path: str
    started: datetime
    ended: datetime
    outcome: str
    counts: dict[str, int] = field(default_factory=dict)
    message: str = ""
    dry_run: bool = False
    pid: int | None = None

    @property
    def seconds(self) -> float:
        return (self.ended - self.started).total_seconds()


_lock = threading.Lock()
_databases: dict[str, tuple[pw.SqliteDatabase, type[JobRunRow]]] = {}


def state_path() -> Path:
    """``<user data dir>/state.db``."""
    return paths.data_dir() / "state.db"


def _model() -> type[JobRunRow]:
    """The ``job_runs`` model bound to the current state database (created on first use)."""
    path = state_path()
    key = str(path)
    with _lock:
        if key not in _databases:
            private_dir(path.parent)
            for suffix in ("-wal", "-shm", "-journal"):
                refuse_link(f"{path}{suffix}", "file of the jobs history")
            touch_private(path)  # 0600 before SQLite opens it (its -wal/-shm get the same mode)
            db = pw.SqliteDatabase(
                key, pragmas={"journal_mode": "wal", "busy_timeout": 10000, "synchronous": "normal"},
                lock_type="IMMEDIATE", timeout=10, check_same_thread=False,
            )
            meta = type("Meta", (), {"database": db, "table_name": "job_runs", "indexes": JobRunRow._meta.indexes})
            model = type("BoundJobRunRow", (JobRunRow,), {"Meta": meta, "__module__": __name__})
            with translated(path), db.connection_context():
                db.create_tables([model], safe=True)
            _databases[key] = (db, model)
        return _databases[key][1]


def _fmt(value: datetime) -> str:
    return value.astimezone(UTC).strftime(STAMP)


def _parse(text: str) -> datetime:
    return datetime.strptime(text, STAMP).replace(tzinfo=UTC)


def record(report: JobReport) -> int:
    """Store one finished run; returns its id."""
    model = _model()
    with model._meta.database.connection_context(), model._meta.database.atomic("IMMEDIATE"):
        row = model.create(
            job=report.job, path=str(report.path), started=_fmt(report.started), ended=_fmt(report.ended),
            outcome=report.outcome, counts=json.dumps(report.counts), message=report.message,
            dry_run=report.dry_run, pid=os.getpid(),
        )
    return int(row.id)


def history(limit: int = 200, path: str | Path | None = None, job: str | None = None) -> list[JobRun]:
    """Recorded runs, newest first; only those of one database file and/or one job if given."""
    model = _model()
    query = model.select().order_by(model.started.desc(), model.id.desc())
    if path is not None:
        query = query.where(model.path == str(Path(path).expanduser().resolve()))
    if job is not None:
        query = query.where(model.job == job)
    if limit:
        query = query.limit(int(limit))
    with translated(state_path()), model._meta.database.connection_context():
        return [_to_run(row) for row in query]


def last_runs(dry_run: bool = False) -> dict[tuple[str, str], datetime]:
    """The start of the latest completed (not skipped) run of each (job, path): for the scheduler."""
    model = _model()
    query = (
        model.select(model.job, model.path, pw.fn.MAX(model.started).alias("latest"))
        .where((model.outcome << COMPLETED) & (model.dry_run == dry_run))
        .group_by(model.job, model.path)
    )
    with model._meta.database.connection_context():
        return {(r.job, r.path): _parse(r.latest) for r in query}


def prune(keep_days: float = 180) -> int:
    """Forget runs that started more than ``keep_days`` ago; returns how many."""
    model = _model()
    cutoff = _fmt(datetime.now(UTC) - timedelta(days=keep_days))
    with model._meta.database.connection_context(), model._meta.database.atomic("IMMEDIATE"):
        return model.delete().where(model.started < cutoff).execute()


def last_run(job: str, path: str | Path) -> datetime | None:
    """The start of the latest ``ok`` (not dry) run of ``job`` on ``path``, or ``None``."""
    model = _model()
    query = (model.select(pw.fn.MAX(model.started)).where(
        (model.job == job) & (model.path == str(Path(path).expanduser().resolve())) & (model.outcome << COMPLETED)
        & (model.dry_run == False)))  # noqa: E712 (peewee expression)
    with model._meta.database.connection_context():
        latest = query.scalar()
    return _parse(latest) if latest else None


def _to_run(row: Any) -> JobRun:
    return JobRun(
        id=row.id, job=row.job, path=row.path, started=_parse(row.started), ended=_parse(row.ended),
        outcome=row.outcome, counts=json.loads(row.counts or "{}"), message=row.message or "",
        dry_run=bool(row.dry_run), pid=row.pid,
    )
