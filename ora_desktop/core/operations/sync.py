"""Sync with the shared PostgreSQL server: the one operation the library, CLI and window call.

Each file is synced through the job runner (``run_job("sync", …)``), so the command line, the
library, the window's "Sync now" and the scheduler share one lock per file and one run history.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import sync_settings as settings
from .. import timestamps
from ..config import Config
from ..errors import OraError
from ..home import OraHome
from ..maintenance.jobs import JobReport, run_job
from ..records import Change, Initiator
from ..store import open_store
from ..sync import clock, local
from ..sync.conflict_log import ConflictPage
from ..sync.engine import SyncResult
from ..sync.local import SyncState
from ..sync.redact import SyncError
from ..sync.server import TABLE, Server, VacuumReport
from ..sync.server import vacuum as server_vacuum


@dataclass(frozen=True)
class SyncReport:
    """What a sync of one or more files did: one job report per file (``runs``)."""

    runs: tuple[JobReport, ...]
    change: Change = Change()

    @property
    def ok(self) -> bool:
        """Every file synced (none failed, none skipped because another sync held it)."""
        return all(run.ok for run in self.runs)

    @property
    def results(self) -> tuple[SyncResult, ...]:
        """The result of every file that synced."""
        return tuple(run.detail for run in self.runs if isinstance(run.detail, SyncResult))

    @property
    def failures(self) -> tuple[JobReport, ...]:
        return tuple(run for run in self.runs if not run.ok)


@dataclass(frozen=True)
class SyncStatus:
    """What the window's sync indicator shows for one file."""

    path: Path
    configured: bool  # a server URL is set for its site
    pending: int
    last_sync: SyncState | None
    last_error: str | None  # the message of the last sync run, when it failed
    conflicts: int
    clock_problem: str | None = None  # the last sync is in the future, or the clock was off the server's


def clock_problem(state: SyncState | None, now: datetime | None = None) -> str | None:
    """What is wrong with the clock, judged from the last sync: a last sync in the future means
    this machine's clock is (or was, at that sync) wrong; an offset over a minute was measured."""
    if state is None:
        return None
    now = now or timestamps.now()
    if state.last_sync is not None and (state.last_sync - now).total_seconds() > clock.WARN_AFTER:
        ahead = clock.span((state.last_sync - now).total_seconds())
        return (f"clock problem: the last sync is {ahead} in the future; this machine's clock is wrong now or was "
                "at that sync (edits are compared in the server's time)")
    if state.clock_offset is not None and abs(state.clock_offset) > clock.WARN_AFTER:
        return "clock problem at the last sync: " + (clock.Clock(state.clock_offset).warning() or "")
    return None


def targets(db: str | Path | None = None, *, site: str | None = None, agent: str | None = None,
            all: bool = False, home: OraHome | None = None, config: Config | None = None) -> list[Path]:
    """The files a sync acts on: ``db``, or ``site``/``agent``, or every taking part (``all``)."""
    home = home or OraHome()
    if db is not None:
        return [Path(db).expanduser()]
    if all:
        config = config or Config.load()
        return [a.path for a in home.agents() if (site is None or a.site == site)
                and settings.takes_part(config, a.site, a.agent)]
    if site and agent:
        return [home.path_for(site, agent)]
    raise OraError("say which database: --db PATH, --site SLUG --agent NAME, or --all")


def sync(db: str | Path | None = None, *, site: str | None = None, agent: str | None = None, all: bool = False,
         url: str | None = None, dry_run: bool = False, home: OraHome | None = None, config: Config | None = None,
         progress: Callable[[int, int], None] | None = None, cancel: threading.Event | None = None) -> SyncReport:
    """Sync files with the PostgreSQL server (``url``, else ``[sync] url`` in ``config.toml``).

    Pushes every memory that differs from what was last synced (never ``local_only``), pulls what
    changed on the server, merges usage (touches add up), sends deletions as id-only tombstones,
    and settles conflicts (the later edit in the server's time wins, the loser is kept in the
    trash with reason "sync conflict", the decision logged). A file that fails is reported in its run
    (``report.failures``) and left unchanged; other files still sync. ``dry_run`` counts only.
    """
    home = home or OraHome()
    config = config or Config.load()
    if url is not None:
        if not url.strip():
            raise SyncError("--url is empty; give a postgresql:// URL")
        config = settings.with_url(config, url)
    paths = targets(db, site=site, agent=agent, all=all, home=home, config=config)
    if not paths:
        raise OraError(f"no agent files take part in sync under {home.root}")
    if not any(settings.url_for(config, p.parent.name) for p in paths):
        raise SyncError(f"no sync server is set up: set [sync] url in {config.path}, ORA_DESKTOP_SYNC_URL, "
                        "or pass --url")
    runs = tuple(run_job("sync", p, dry_run=dry_run, home=home, config=config, progress=progress, cancel=cancel)
                 for p in paths)
    added: set[str] = set()
    changed: set[str] = set()
    removed: set[str] = set()
    for run in runs:
        if isinstance(run.detail, SyncResult):
            added |= run.detail.change.added
            changed |= run.detail.change.changed
            removed |= run.detail.change.removed
    return SyncReport(runs, Change(frozenset(added), frozenset(changed), frozenset(removed), source="sync",
                                    initiator=Initiator.SYNC))


def status(path: str | Path, config: Config | None = None) -> SyncStatus:
    """Last sync, pending count, last error and conflicts of one file (read-only, no server)."""
    from .. import history

    path = Path(path).expanduser()
    config = config or Config.load()
    with open_store(path, readonly=True) as store:
        known = local.states(store)
        pending = local.pending_count(store)  # marked pending: a sync also finds rows changed without the mark
        kept = local.conflicts(store, limit=1).total
    runs = history.history(limit=1, path=path.resolve(), job="sync")
    error = runs[0].message if runs and runs[0].outcome == "failed" else None
    last = known[0] if known else None
    return SyncStatus(path, bool(settings.url_for(config, path.parent.name)), pending, last, error, kept,
                      clock_problem(last))


def conflicts(path: str | Path, limit: int | None = 50, offset: int = 0) -> ConflictPage:
    """Conflicts sync settled in one file (both edits, and deletions against edits), newest first:
    a page of ``limit`` from ``offset``, with the total. Each says which side won and why, and
    holds the losing version when it is in the trash (restorable)."""
    if limit is not None and limit < 1 or offset < 0:
        raise OraError(f"a page of conflicts needs a limit of at least 1 and an offset of 0 or more "
                       f"(got limit {limit}, offset {offset})")
    with open_store(path, readonly=True) as store:
        return local.conflicts(store, limit, offset)


@dataclass(frozen=True)
class VacuumResult:
    """What ``sync --vacuum`` did on the server."""

    server: str
    report: VacuumReport

    @property
    def summary(self) -> str:
        r = self.report
        kind = "VACUUM FULL" if r.full else "VACUUM"
        return (f"{kind} of {TABLE} on {self.server}: {r.size_before:,} bytes before, {r.size_after:,} after; "
                f"dead row versions {r.dead_before:,} before, {r.dead_after:,} after")


def vacuum(url: str | None = None, *, full: bool = False, site: str | None = None,
           config: Config | None = None) -> VacuumResult:
    """Run ``VACUUM`` (``full``: ``VACUUM FULL``, which locks the table against every sync while it
    rewrites it) on the server table, so the space of deleted rows' old versions is reused
    (``FULL``: returned to the system). PostgreSQL's WAL keeps old text until it recycles."""
    config = config or Config.load()
    if url is not None and not url.strip():
        raise SyncError("--url is empty; give a postgresql:// URL")
    url = url or settings.url_for(config, site)
    if not url:
        raise SyncError(f"no sync server is set up: set [sync] url in {config.path}, ORA_DESKTOP_SYNC_URL, "
                        "or pass --url")
    with Server(url) as server:
        return VacuumResult(server.name, server_vacuum(server, full=full))
