"""The ``sync`` subcommand: push and pull memories through a shared PostgreSQL server."""

from __future__ import annotations

import argparse
import getpass
import logging
import sys
from typing import Any

from ..core import sync_settings
from ..core.config import Config
from ..core.errors import OraError
from ..core.maintenance import JobReport
from ..core.operations import sync as sync_ops
from ..core.sync import SyncResult
from . import common


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    p = common.command(
        sub, "sync", _sync, "sync memories with the shared PostgreSQL server (push, pull, deletions, conflicts)",
        description="Push pending memories (never local_only ones) to the PostgreSQL server set by [sync] url in "
        "config.toml (or --url), pull what other machines changed, send deletions as id-only tombstones. "
        "A memory changed on both sides keeps the newer version; the other goes to the trash with reason "
        "'sync conflict'. The password (URL, PGPASSWORD or ~/.pgpass) is never printed.",
    )
    common.add_target(p, all_option=True)
    p.add_argument("--url", help="server URL (postgresql://user@host:port/db?sslmode=...), overriding config.toml; "
                   "without a password (others can read the command line): PGPASSWORD, ~/.pgpass or config.toml "
                   "give it, or '--url -' reads the whole URL from standard input")
    p.add_argument("--dry-run", action="store_true", help="count what would be pushed and pulled; change nothing")
    p.add_argument("--status", action="store_true",
                   help="show each file's last sync, pending count, conflicts and last error (no server needed)")
    p.add_argument("--conflicts", action="store_true", help="list the losing versions sync kept in the trash")


def _sync(args: argparse.Namespace) -> int:
    # Failures are printed once, below; the job runner's log line would repeat them on stderr.
    logging.getLogger("ora_desktop").addHandler(logging.NullHandler())
    home = common.home_of(args)
    config = Config.load()
    if args.status or args.conflicts:
        paths = sync_ops.targets(args.db, site=args.site, agent=args.agent, all=args.all, home=home, config=config)
        return _show_status(args, paths, config) if args.status else _show_conflicts(args, paths)
    report = sync_ops.sync(args.db, site=args.site, agent=args.agent, all=args.all, url=_url(args.url),
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
        deleted = " (deleted there)" if decision.server_deleted else ""
        print(f"  conflict {decision.memory_id}: the {decision.winner} version won (here {decision.local_updated_at}, "
              f"server {decision.server_updated_at}{deleted}); the other is in the trash as 'sync conflict'")


def _show_status(args: argparse.Namespace, paths: list, config: Config) -> int:
    statuses = [sync_ops.status(p, config) for p in paths]
    if args.json:
        common.emit_json({"files": statuses})
        return 0
    rows = []
    for s in statuses:
        last = s.last_sync
        rows.append([str(s.path), last.server if last else "-", last.last_sync if last else "never", s.pending,
                     s.conflicts, s.last_error or ("not set up" if not s.configured else "-")])
    print(common.table(["FILE", "SERVER", "LAST SYNC", "PENDING", "CONFLICTS", "LAST ERROR"], rows))
    return 0


def _show_conflicts(args: argparse.Namespace, paths: list) -> int:
    found = [(p, kept) for p in paths for kept in sync_ops.conflicts(p)]
    if args.json:
        common.emit_json({"conflicts": [{"path": str(p), **common.to_jsonable(k)} for p, k in found]})
        return 0
    if not found:
        print("no sync conflicts kept", file=sys.stderr)
        return 0
    rows = [[k.trash_id, k.memory.id, k.deleted_at, k.memory.updated_at, k.memory.title] for _, k in found]
    print(common.table(["TRASH ID", "MEMORY", "KEPT AT", "UPDATED", "CONTENT"], rows))
    print("restore one with: ora-desktop undelete --db FILE TRASH_ID (after deleting the winner)", file=sys.stderr)
    return 0
