"""``purge`` (forget memories for good, everywhere) and ``recover`` (salvage a damaged file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core import OraError
from ..core.config import Config
from ..core.operations.purge import PurgePlan, empty_trash, plan_empty_trash, plan_purge, purge
from ..core.operations.recover import recover
from . import common


def register(sub: Any) -> None:
    """Add ``purge`` and ``recover`` to the ora-desktop parser."""
    p = common.command(
        sub, "purge", _purge, "permanently delete memories (and their trash copies) from every file we manage",
        description="Forget memories for good: the rows and their trash copies go with secure_delete, the "
        "-wal is truncated, the search index is scrubbed. Backups still holding them are listed; "
        "--rewrite-backups rewrites each (checked, atomic). Asks before acting unless --yes.")
    p.add_argument("ids", nargs="*", metavar="ID", help="memory ids (live or in the trash)")
    p.add_argument("--trash", action="store_true", help="empty the trash instead (see --older-than)")
    p.add_argument("--older-than", type=float, metavar="DAYS",
                   help="with --trash: only memories deleted more than DAYS days ago")
    p.add_argument("--rewrite-backups", action="store_true", help="also rewrite the backups that hold them")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    common.add_target(p)

    p = common.command(
        sub, "recover", _recover, "salvage the memories of a damaged file into a new file",
        description="Read what SQLite can of a damaged memory file (table first, then page by page) into "
        "a new file made with the seed's init SQL. Never writes the damaged file; refuses an existing --out.")
    p.add_argument("--db", metavar="PATH", required=True, help="the damaged .site.db file")
    p.add_argument("--out", metavar="PATH", required=True, help="the new file to write (must not exist)")
    common.add_json(p)


def _confirm(plan_text: str, args: argparse.Namespace) -> None:
    """Ask on a terminal; refuse (nothing changed) when there is no one to ask."""
    if args.yes:
        return
    if not sys.stdin.isatty():
        raise OraError(f"would {plan_text}; add --yes to confirm (nothing was changed)")
    answer = input(f"{plan_text[0].upper()}{plan_text[1:]}.\nType 'yes' to continue: ")
    if answer.strip().lower() != "yes":
        raise OraError("not confirmed; nothing was changed")


def _purge(args: argparse.Namespace) -> int:
    config = Config.load()
    if args.trash == bool(args.ids):
        raise OraError("name memory ids to purge, or --trash to empty the trash (not both)")
    if args.older_than is not None and not args.trash:
        raise OraError("--older-than applies to --trash only")
    with common.open_target(args) as store:
        if args.trash:
            ids = plan_empty_trash(store, args.older_than)
            if not ids:
                return _print(args, None, "the trash holds nothing to purge")
            _confirm(f"permanently delete {len(ids)} memories from the trash of {store.path.name}; "
                     "this cannot be undone", args)
            result = empty_trash(store, args.older_than, rewrite_backups=args.rewrite_backups, config=config)
        else:
            plan: PurgePlan = plan_purge(store, args.ids, config=config)
            _confirm(plan.describe(), args)
            result = purge(store, args.ids, rewrite_backups=args.rewrite_backups, config=config)
    return _print(args, result, result.message)


def _print(args: argparse.Namespace, result: Any, message: str) -> int:
    if args.json:
        common.emit_json(result if result is not None else {"purged": [], "message": message})
    else:
        print(message)
    return 0


def _recover(args: argparse.Namespace) -> int:
    report = recover(Path(args.db).expanduser(), Path(args.out).expanduser())
    if args.json:
        common.emit_json(report)
    else:
        print(report.message)
    return 0 if report.written else 1
