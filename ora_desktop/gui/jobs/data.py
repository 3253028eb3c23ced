"""What the Jobs panel shows, gathered in a worker thread (no Qt here).

The schedule is one row per scheduled (job, file) pair (``core.scheduler.planned_jobs``): how
often it runs (from ``config.toml``), when it last ran and how that went (the shared run
history), and when it runs next (the in-app scheduler if it is running, else last run + interval).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ora_desktop.core import OraError, OraHome, history
from ora_desktop.core.config import Config, describe_interval
from ora_desktop.core.history import JobRun
from ora_desktop.core.maintenance import JOBS, JobReport, run_job
from ora_desktop.core.scheduler import next_runs as planned_next_runs

NextRuns = Mapping[tuple[str, str], datetime | None]


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """One job on one file."""

    job: str
    path: Path
    label: str
    interval: str
    source: str
    last_run: datetime | None = None
    last_outcome: str = ""
    next_run: datetime | None = None


@dataclass(frozen=True, slots=True)
class JobsSnapshot:
    """Everything the panel draws, read in one go."""

    schedule: tuple[ScheduleRow, ...]
    history: tuple[JobRun, ...]
    config_problem: str = ""
    #: Files among those asked for that no job runs on by schedule (e.g. outside ORA_HOME).
    unscheduled: tuple[str, ...] = ()


def label_for(path: Path, home: OraHome) -> str:
    """``site/agent`` for a file in ``ORA_HOME``, else the file's path."""
    try:
        rel = path.resolve().relative_to(home.sites_dir.resolve())
    except ValueError:
        return str(path)
    if len(rel.parts) == 2 and rel.name.endswith(".site.db"):
        return f"{rel.parts[0]}/{rel.name[: -len('.site.db')]}"
    return str(path)


def gather(home: OraHome, files: Iterable[Path], next_runs: NextRuns | None = None,
           history_limit: int = 200, history_path: Path | None = None) -> JobsSnapshot:
    """Schedule rows for the scheduled (job, file) pairs among ``files``, and the run history
    (of ``history_path`` only, if given). ``next_runs`` are the in-app scheduler's actual times;
    without it the times come from the run history (last run + interval; overdue = due now)."""
    problem = ""
    try:
        config = Config.load()
    except OraError as exc:  # ConfigError names the file and the key: shown, defaults used
        config, problem = Config.defaults(), str(exc)
    wanted = {path.expanduser().resolve() for path in files}
    planned = {(job, str(path)): when for job, path, when in planned_next_runs(config, home) if path in wanted}
    if next_runs:
        planned.update({key: when for key, when in next_runs.items() if key in planned})
    in_home = {agent.path.resolve() for agent in home.agents()} & wanted
    for path in in_home:  # jobs switched off in the config: listed as "off", not left out
        for job in JOBS:
            if config.schedule(job, path.parent.name).value is None and job not in ("retention", "promote"):
                planned[(job, str(path))] = None
    latest = {(run.job, run.path): run for run in reversed(history.history(limit=2000))}
    rows: list[ScheduleRow] = []
    for (job, key_path), upcoming in planned.items():
        path = Path(key_path)
        setting = config.schedule(job, path.parent.name)
        last = latest.get((job, key_path))
        rows.append(ScheduleRow(
            job=job, path=path, label=label_for(path, home),
            interval=describe_interval(setting.value), source=setting.source,
            last_run=last.started if last else None, last_outcome=last.outcome if last else "",
            next_run=upcoming,
        ))
    rows.sort(key=lambda r: (r.label, list(JOBS).index(r.job) if r.job in JOBS else 99))
    unscheduled = tuple(sorted(str(p) for p in wanted - in_home))
    runs = history.history(limit=history_limit, path=history_path)
    return JobsSnapshot(tuple(rows), tuple(runs), problem, unscheduled)


def run(name: str, path: Path, home: OraHome, *, dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None, cancel: threading.Event | None = None) -> JobReport:
    """Run a job from the window (worker thread). Previews are not recorded in the history."""
    return run_job(name, path, dry_run=dry_run, progress=progress, cancel=cancel, home=home, record=not dry_run)


def counts_text(counts: Mapping[str, int]) -> str:
    """``deleted 3, kept 10`` from a job's counts."""
    return ", ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in counts.items())
