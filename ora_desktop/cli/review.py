"""``ora-desktop review``: the curator's review desk of one agent file.

Lists what is new or changed since the reviewer last marked the file reviewed, and what needs
attention; ``--mark``, ``--mark-all``, ``--flag ID --note TEXT`` and ``--unflag`` record the
reviewer's decisions in the file's ``ora_desktop_review`` table. Listing opens the file
read-only and writes nothing.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import InvalidValue, open_store
from ..core.operations import review as rv
from . import common
from .common import command, emit_json, table, target_path, truncate


def register(sub: Any) -> None:
    """Add ``review`` to the ora-desktop parser."""
    p = command(sub, "review", cmd_review, "what is new, changed or needs a decision since you last reviewed",
                "List memories added or changed since you last marked this agent reviewed (all of them "
                "the first time), plus those needing attention: important but low health, expiring "
                "within 7 days, dangling or malformed links, supersession cycles, and your flags. "
                "Marks live in the file's own ora_desktop_review table, per reviewer.")
    common.add_target(p)
    p.add_argument("--reviewer", metavar="NAME", help="whose marks (default: your login name)")
    p.add_argument("--limit", type=common.positive_int, default=rv.DEFAULT_LIMIT,
                   help=f"at most this many memories per reason (default {rv.DEFAULT_LIMIT})")
    p.add_argument("--mark", metavar="ID", action="append", default=[],
                   help="mark a memory reviewed at its current version (repeatable); clears its flag")
    p.add_argument("--mark-all", action="store_true",
                   help="count everything up to now as reviewed (later changes are new again)")
    p.add_argument("--flag", metavar="ID", help="flag a memory for a decision (needs --note)")
    p.add_argument("--note", metavar="TEXT", help="the flag's short note (up to 200 characters)")
    p.add_argument("--unflag", metavar="ID", help="clear a memory's flag")


def cmd_review(args: argparse.Namespace) -> int:
    """List the desk, or record marks and flags (one kind of write per call)."""
    writes = [bool(args.mark), args.mark_all, args.flag is not None, args.unflag is not None]
    if sum(writes) > 1:
        raise InvalidValue("review", "give one of --mark, --mark-all, --flag, --unflag at a time")
    if args.note is not None and args.flag is None:
        raise InvalidValue("--note", "goes with --flag ID")
    if args.flag is not None and args.note is None:
        raise InvalidValue("--flag", "needs --note TEXT saying why")
    if not any(writes):
        with open_store(target_path(args), readonly=True) as store:
            result = rv.review(store, args.reviewer, limit=args.limit)
        _print(args, result)
        return 0
    with open_store(target_path(args)) as store:
        if args.mark:
            done = rv.mark_reviewed(store, args.mark, args.reviewer)
        elif args.mark_all:
            done = rv.mark_all_reviewed(store, args.reviewer)
        elif args.flag is not None:
            done = rv.flag(store, args.flag, args.note, args.reviewer)
        else:
            done = rv.unflag(store, args.unflag, args.reviewer)
    if args.json:
        emit_json({"path": done.path, "reviewer": done.reviewer, "action": done.action, "ids": list(done.ids)})
    else:
        what = {"reviewed": "marked reviewed", "reviewed_all": "marked everything up to now reviewed",
                "flagged": "flagged", "unflagged": "cleared the flag of"}[done.action]
        print(f"{done.reviewer}: {what}{' ' + ', '.join(done.ids) if done.ids else ''} in {done.path}")
    return 0


def _print(args: argparse.Namespace, result: rv.ReviewResult) -> None:
    if args.json:
        emit_json(rv.as_json(result))
        return
    since = f"since {result.since:%Y-%m-%d %H:%M:%S} UTC" if result.since else "never reviewed: everything is new"
    print(f"{result.path} — review for {result.reviewer} ({since})")
    if not result.items:
        print("nothing to review")
        return
    rows = [(i.memory.id, truncate(i.describe(), 60), i.memory.type, i.memory.importance, i.memory.health_score,
             i.memory.title) for i in result.items]
    print(table(["id", "why", "type", "imp", "health", "content"], rows))
    counts = ", ".join(f"{n:,} {rv.REASONS.get(r, r)}" for r, n in result.counts.items())
    print(f"\n{counts}")
    if result.truncated:
        print(f"(at most {result.limit} per reason listed; --limit shows more)")
