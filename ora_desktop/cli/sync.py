"""The ``sync`` subcommand: push and pull memories through a shared PostgreSQL server."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from ..core import sync_settings
from ..core.config import Config
from ..core.errors import OraError
from ..core.logs import configure
from ..core.maintenance import JobReport
from ..core.operations import sync as sync_ops
from ..core.sync import SyncResult
from . import common


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    p = common.command(
        sub, "sync", _sync, "sync memories with the shared PostgreSQL server (push, pull, deletions, conflicts)",
        description="Push every memory changed since the last sync (never local_only ones) to the PostgreSQL "
        "server set by [sync] url in config.toml (or --url), pull what other machines changed, send deletions as "
        "id-only tombstones. Touches add up across machines. A memory edited on both sides keeps the later edit "
        "in the server's time; the other goes to the trash with reason 'sync conflict' and the decision is "
        "listed by --conflicts. The password (URL, PGPASSWORD or ~/.pgpass) is never printed.",
    )
    common.add_target(p, all_option=True)
    p.add_argument("--url", help="server URL (postgresql://user@host:port/db?sslmode=...), overriding config.toml; "
                   "without a password (others can read the command line): PGPASSWORD, ~/.pgpass or config.toml "
                   "give it, or '--url -' reads the whole URL from standard input")
    p.add_argument("--dry-run", action="store_true", help="count what would be pushed and pulled; change nothing")
    p.add_argument("--status", action="store_true",
                   help="show each file's last sync, pending count, conflicts and last error (no server needed)")
    p.add_argument("--conflicts", action="store_true",
                   help="list the conflicts sync settled (edits on both sides, deletions against edits), newest "
                   "first, with the winner, the basis of the decision and the losing version kept in the trash")
    p.add_argument("--limit", type=common.positive_int, default=50, help="conflicts per page (default 50)")
    p.add_argument("--offset", type=common.count_int, default=0, metavar="N", help="skip the first N conflicts")
    p.add_argument("--vacuum", action="store_true",
                   help="VACUUM the server table so deleted rows' old versions are reclaimed, and report sizes "
                   "(no --db needed; PostgreSQL's WAL keeps old text until it recycles)")
    p.add_argument("--full", action="store_true",
                   help="with --vacuum: VACUUM FULL, which rewrites the table and returns space to the system but "
                   "LOCKS it: every sync waits until it ends")


def _sync(args: argparse.Namespace) -> int:
    # Failures are printed once, below; the job runner's log line would repeat them on stderr.
    configure("quiet")
    home = common.home_of(args)
    config = Config.load()
    if args.full and not args.vacuum:
        common.fail(args, "--full goes with --vacuum (VACUUM FULL of the server table)")
        return 2
    args.url = _url(args.url)  # read from standard input for '-'; refused with a password in it
    if args.vacuum:
        return _vacuum(args, config)
    if args.status or args.conflicts:
        paths = sync_ops.targets(args.db, site=args.site, agent=args.agent, all=args.all, home=home, config=config)
        return _show_status(args, paths, config) if args.status else _show_conflicts(args, paths)
    report = sync_ops.sync(args.db, site=args.site, agent=args.agent, all=args.all, url=args.url,
                           dry_run=args.dry_run, home=home, config=config)
    if args.json:
        common.emit_json({"files": [_run_json(run) for run in report.runs]})
    else:
        for run in report.runs:
            if isinstance(run.detail, SyncResult):
                _print_result(run.detail)
    # A server that cannot be used fails every file the same way: say it once, with how many.
    messages: dict[str, int] = {}
    for run in report.failures:
        messages[run.message] = messages.get(run.message, 0) + 1
    for message, count in messages.items():
        common.fail(args, message + (f" ({count} files)" if count > 1 else ""))
    if any(run.outcome == "failed" for run in report.runs):
        return 1
    return 3 if report.failures else 0


def _url(given: str | None) -> str | None:
    """The ``--url`` value: read from standard input for ``-``; refused when it holds a password,
    since every local user can read a command line (``ps``, ``/proc``)."""
    if given is None:
        return None
    if given == "-":
        url = getpass.getpass("sync server URL: ") if sys.stdin.isatty() else sys.stdin.readline()
        if not url.strip():
            raise OraError("--url -: standard input held no URL; nothing was synced")
        return url.strip()
    if sync_settings.holds_password(given):
        raise OraError("--url holds a password, which every local user can read in `ps`; nothing was synced: "
                       "put the password in PGPASSWORD or ~/.pgpass, or the URL in [sync] url of config.toml, "
                       "or pass '--url -' and give the URL on standard input")
    return given


def _run_json(run: JobReport) -> dict:
    data: dict[str, Any] = {"path": str(run.path), "outcome": run.outcome, "message": run.message,
                            "dry_run": run.dry_run, "seconds": round(run.seconds, 3)}
    if isinstance(run.detail, SyncResult):
        result = common.to_jsonable(run.detail)
        result.pop("change", None)
        result.pop("path", None)
        data.update(result)
    return data


def _print_result(result: SyncResult) -> None:
    print(("(dry run) " if result.dry_run else "") + f"{result.path}: {result.summary}")
    for decision in result.conflicts:
        print(f"  conflict ({decision.kind}) {decision.memory_id}: the {decision.winner} version won: {decision.basis}")
    for warning in result.warnings:
        print(f"ora-desktop sync: warning: {warning}", file=sys.stderr)


def _vacuum(args: argparse.Namespace, config: Config) -> int:
    if args.full:
        print("ora-desktop sync: VACUUM FULL locks the server table: every sync waits until it ends",
              file=sys.stderr)
    result = sync_ops.vacuum(args.url, full=args.full, site=args.site, config=config)
    if args.json:
        common.emit_json({"server": result.server, **common.to_jsonable(result.report)})
    else:
        print(result.summary)
        print("deleted rows' text is now gone from the table's live pages; PostgreSQL's WAL keeps it until the "
              "WAL recycles (checkpoints)", file=sys.stderr)
    return 0


def _show_status(args: argparse.Namespace, paths: list, config: Config) -> int:
    statuses = [sync_ops.status(p, config) for p in paths]
    if args.json:
        common.emit_json({"files": statuses})
        return 0
    rows = []
    for s in statuses:
        last = s.last_sync
        when = common.cell(last.last_sync) if last and last.last_sync else "never"
        rows.append([str(s.path), last.server if last else "-", when + (" (clock problem)" if s.clock_problem else ""),
                     s.pending, s.conflicts, s.last_error or ("not set up" if not s.configured else "-")])
    print(common.table(["FILE", "SERVER", "LAST SYNC", "PENDING", "CONFLICTS", "LAST ERROR"], rows))
    for s in statuses:
        if s.clock_problem:
            print(f"{s.path}: {s.clock_problem}", file=sys.stderr)
    return 0


def _show_conflicts(args: argparse.Namespace, paths: list) -> int:
    pages = [(p, sync_ops.conflicts(p, limit=args.limit, offset=args.offset)) for p in paths]
    if args.json:
        common.emit_json({"files": [{"path": str(p), "total": page.total, "offset": page.offset,
                                     "conflicts": common.to_jsonable(list(page.entries))} for p, page in pages]})
        return 0
    for path, page in pages:
        if not page.total:
            print(f"{path}: no sync conflicts", file=sys.stderr)
            continue
        shown = (f"{page.offset + 1}-{page.offset + len(page.entries)}" if page.entries else "none")
        print(f"{path}: conflicts {shown} of {page.total} (newest first)")
        rows = [[e.decided_at, e.memory_id, e.kind, e.winner or "-", e.kept.trash_id if e.kept else "-",
                 e.basis or "-"] for e in page.entries]
        if rows:
            print(common.table(["DECIDED", "MEMORY", "KIND", "WINNER", "TRASH ID", "BASIS"], rows))
        if page.offset + len(page.entries) < page.total:
            print(f"more: --offset {page.offset + len(page.entries)}", file=sys.stderr)
    if any(page.total for _, page in pages):
        print("restore a losing version with: ora-desktop undelete --db FILE TRASH_ID (after deleting the winner)",
              file=sys.stderr)
    return 0
