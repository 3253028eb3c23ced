"""Subcommands of the maintenance feature: ``run``, ``daemon``, ``jobs``, ``backups``, ``config``."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core import OraError, OraHome
from ..core import backup as backups_core
from ..core import restore as restore_core
from ..core.config import Config
from ..core.daemon_lock import running_daemon
from ..core.errors import FileMissing
from ..core.history import history
from ..core.maintenance import JOBS, JobReport, jobs, run_job
from ..core.scheduler import next_runs
from . import common


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    jobs_help = "; ".join(f"{name}: {spec.description}" for name, spec in JOBS.items())
    p = common.command(sub, "run", _run, "run one maintenance job now on one file, a site or everything",
                       description=f"Run a maintenance job now. Jobs — {jobs_help}.")
    p.add_argument("job", choices=list(JOBS), help="which job")
    common.add_target(p, all_option=True)
    p.add_argument("--dry-run", action="store_true", help="list what would change; change nothing")
    p.add_argument("--repair", action="store_true",
                   help="check: also fix what is safe to fix; decay: re-anchor a decay mark left in the future "
                   "by a wrong clock to now")
    p.add_argument("--show", type=int, default=20, metavar="N",
                   help="list at most N memories per file (default 20; 0 = all)")

    p = common.command(sub, "daemon", _daemon, "run scheduled maintenance in the foreground (headless)",
                       description="Run maintenance on the schedule in config.toml until SIGTERM/SIGINT. "
                       "Logs to stderr and a rotating file in the user log directory. One daemon at a time.")
    p.add_argument("--once", action="store_true", help="run every job that is due, then exit")
    p.add_argument("--home", dest="target_home", metavar="DIR", help="Ora home (default $ORA_HOME or ~/.ora)")
    p.add_argument("--verbose", action="store_true", help="debug logging")
    service = p.add_mutually_exclusive_group()
    service.add_argument("--install-service", action="store_true",
                         help="write the systemd user unit (Linux) or launchd agent (macOS) that starts the "
                              "daemon at login (with --home, if given), by the real path of this ora-desktop; "
                              "then exit")
    service.add_argument("--uninstall-service", action="store_true", help="remove that unit or agent; then exit")

    p = common.command(sub, "jobs", _jobs, "show the maintenance run history (and --next: upcoming runs)")
    p.add_argument("--limit", type=common.count_int, default=50, help="how many runs to show (default 50; 0 = all)")
    p.add_argument("--db", metavar="PATH", help="only runs on this file")
    p.add_argument("--job", choices=list(JOBS), help="only runs of this job")
    p.add_argument("--next", action="store_true", help="show when each job runs next instead")
    p.add_argument("--home", dest="target_home", metavar="DIR", help="Ora home (default $ORA_HOME or ~/.ora)")
    common.add_json(p)

    p = common.command(sub, "backups", _backups_list, "list backups of memory files, or restore one",
                       description="List backups (ora-desktop backups list) or restore one (ora-desktop "
                       "backups restore FILE). Backups are made by 'ora-desktop run backup'.")
    actions = p.add_subparsers(dest="backups_action", metavar="ACTION")
    lp = actions.add_parser("list", help="list the backups of a file, a site or everything (newest first)",
                            description="List backups, newest first.")
    lp.set_defaults(_handler=_backups_list)
    common.add_target(lp, required=False, all_option=True)
    rp = actions.add_parser("restore", help="restore a backup (the current file is kept aside first)",
                            description="Restore a backup into its memory file. The backup must pass its "
                            "integrity check; the current file is copied aside first.")
    rp.set_defaults(_handler=_backups_restore)
    rp.add_argument("backup", help="the backup file (see 'ora-desktop backups list')")
    rp.add_argument("--wait", type=common.count_int, default=restore_core.RESTORE_WAIT, metavar="SECONDS",
                    help="while a backup of the file runs in another process, wait this long, then give up "
                    f"(default {restore_core.RESTORE_WAIT:g}; 0 fails at once)")
    common.add_target(rp, required=False)
    rp.epilog = "The target is required: --db PATH or --site SLUG --agent NAME."

    p = common.command(sub, "config", _config, "show the effective maintenance settings and where each comes from")
    p.add_argument("--home", dest="target_home", metavar="DIR", help="Ora home (default $ORA_HOME or ~/.ora)")
    common.add_json(p)


# ---------------------------------------------------------------------- targets
def target_paths(args: argparse.Namespace, required: bool = True) -> list[Path]:
    """Files named by ``--db``, ``--site``/``--agent`` or ``--all`` (optionally within ``--site``)."""
    home = common.home_of(args)
    if getattr(args, "all", False):
        agents = [a for a in home.agents() if not args.site or a.site == args.site]
        if not agents:
            where = f"site {args.site!r} in {home.sites_dir}" if args.site else str(home.sites_dir)
            raise OraError(f"no agent files in {where}")
        return [a.path for a in agents]
    if getattr(args, "site", None) and not getattr(args, "agent", None) and not getattr(args, "db", None):
        raise OraError("--site needs --agent NAME, or --all for every agent of the site")
    if not required and not getattr(args, "db", None) and not getattr(args, "site", None):
        return []
    return [common.target_path(args)]


# ---------------------------------------------------------------------- run
def _run(args: argparse.Namespace) -> int:
    if args.repair and args.job not in ("check", "decay"):
        raise OraError(f"--repair applies to the check and decay jobs only, not to {args.job}")
    config = Config.load()
    home = common.home_of(args)
    paths = target_paths(args)
    with _reports_not_logged():  # each report is printed below; the log's copy would print it twice
        reports = [run_job(args.job, path, dry_run=args.dry_run, repair=args.repair, home=home, config=config)
                   for path in paths]
    if args.json:
        common.emit_json([_report_json(r) for r in reports])
    else:
        for report in reports:
            _print_report(report, args.show)
    if any(r.outcome in ("failed", "problems") for r in reports):
        return 1
    return 3 if any(r.outcome == "skipped-locked" for r in reports) else 0


@contextlib.contextmanager
def _reports_not_logged() -> Iterator[None]:
    logger = logging.getLogger(jobs.__name__)

    def keep(record: logging.LogRecord) -> bool:
        return not getattr(record, jobs.REPORT_RECORD, False)

    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


def _report_json(report: JobReport) -> dict:
    data = common.to_jsonable(report)
    data["would_change"] = [{"id": i, "summary": s} for i, s in report.would_change]
    data["seconds"] = round(report.seconds, 3)
    return data


def _print_report(report: JobReport, show: int) -> None:
    dry = " (dry run)" if report.dry_run else ""
    print(f"{report.job} {report.path}: {report.outcome}{dry} in {report.seconds:.2f}s — {report.message}")
    listed = report.would_change if show <= 0 else report.would_change[:show]
    for memory_id, text in listed:
        print(f"  {memory_id}  {text}")
    if len(listed) < report.would_change_count:
        capped = len(report.would_change) < report.would_change_count
        how = f"the first {len(report.would_change):,} are listed by --show 0 or --json" if capped \
            else "--show 0 or --json lists them all"
        print(f"  … and {report.would_change_count - len(listed):,} more ({how})")


# ---------------------------------------------------------------------- daemon
def _daemon(args: argparse.Namespace) -> int:
    if args.install_service or args.uninstall_service:
        home = ["--home", str(Path(args.target_home).expanduser().absolute())] if args.target_home else []
        return _service(install=args.install_service, daemon_args=home)
    from ..daemon import run_daemon

    return run_daemon(common.home_of(args), Config.load(), once=args.once, verbose=args.verbose)


def _service(install: bool, daemon_args: list[str]) -> int:
    from ..core.service_files import install_service, next_steps, uninstall_service

    target = install_service(daemon_args=daemon_args) if install else uninstall_service()
    if target is None:
        print("no daemon service is installed")
        return 0
    print(f"{'wrote' if install else 'removed'} {target}")
    steps = next_steps(target, installed=install)
    print(f"{'start it' if install else 'stop it'} with: " + " && ".join(steps))
    return 0


# ---------------------------------------------------------------------- jobs
def _jobs(args: argparse.Namespace) -> int:
    if args.next:
        runs = next_runs(Config.load(), common.home_of(args))
        now = datetime.now(UTC)
        if args.json:
            common.emit_json([{"job": j, "path": p, "next": t, "overdue": t <= now} for j, p, t in runs])
            return 0
        running = running_daemon()
        print("daemon: " + (f"running (pid {running.pid}, since {running.started})" if running
                            else "not running"))
        for job, path, when in runs:
            due = "due now" if when <= now else when.strftime("%Y-%m-%d %H:%M:%S UTC")
            print(f"{due:>23}  {job:9} {path}")
        return 0
    runs = history(limit=args.limit, path=args.db, job=args.job)
    if args.json:
        common.emit_json(runs)
        return 0
    if not runs:
        print("no maintenance runs recorded yet")
    for run in runs:
        counts = ", ".join(f"{k}={v}" for k, v in run.counts.items())
        dry = " dry-run" if run.dry_run else ""
        print(f"{run.started:%Y-%m-%d %H:%M:%S}  {run.job:9} {run.outcome:14}{dry} {run.seconds:7.2f}s  {run.path}")
        if counts or run.message:
            print(f"{'':21}{counts}{'  ' if counts else ''}{run.message}")
    return 0


# ---------------------------------------------------------------------- backups
def _backups_list(args: argparse.Namespace) -> int:
    config = Config.load()
    paths = target_paths(args, required=False) or [a.path for a in common.home_of(args).agents()]
    found = [b for path in paths for b in backups_core.list_backups(path, config=config)]
    if getattr(args, "json", False):
        common.emit_json(found)
        return 0
    if not found:
        print(f"no backups in {config.backup_dir}")
    for b in found:
        aside = "  (kept aside by a restore)" if b.before_restore else ""
        print(f"{b.created:%Y-%m-%d %H:%M:%S}  {b.size / 1e6:9.1f} MB  {b.site}/{b.agent}  {b.path}{aside}")
    return 0


def _backups_restore(args: argparse.Namespace) -> int:
    backup = Path(args.backup).expanduser()
    targets = target_paths(args, required=False)
    if not targets and not backup.is_file():
        raise FileMissing(backup, "no such backup file")
    if not targets:  # never guess the live file from where the backup happens to lie
        folder = backup.resolve().parent
        raise OraError(f"{backup}: name the memory file to restore into with --db PATH or --site SLUG --agent NAME "
                       f"(this backup's folder suggests --site {folder.parent.name} --agent {folder.name}); "
                       "nothing was changed")
    target = targets[0]
    report = restore_core.restore_backup(backup, target, config=Config.load(), wait=args.wait)
    if args.json:
        common.emit_json(report)
    else:
        print(report.message)
        print(f"strategy: {report.strategy}")
    return 0


# ---------------------------------------------------------------------- config
def _config(args: argparse.Namespace) -> int:
    config = Config.load()
    sites = [s.slug for s in OraHome(getattr(args, "target_home", None)).sites()]
    settings = config.effective(sites)
    if args.json:
        common.emit_json({"file": config.path, "exists": config.exists, "settings": settings,
                          "warning": config.exposure_warning})
        return 0
    if config.exposure_warning:
        print(config.exposure_warning, file=sys.stderr)
    print(f"config file: {config.path}" + ("" if config.exists else " (not present: built-in defaults)"))
    width = max(len(s.key) for s in settings)
    for s in settings:
        value = "no limit" if s.value is None else s.value
        print(f"  {s.key:{width}}  {str(value):24} ({s.source})")
    return 0
