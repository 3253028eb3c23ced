"""``export`` and ``import``: memory that moves between files, tools and people.

Parsing and printing only; the rules live in ``core.operations.export`` and
``core.operations.importing``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core import OraError, open_store
from ..core.exchange import FORMATS, ImportOptions
from ..core.operations.export import EXPORT_FORMATS, export_memories
from ..core.operations.import_new import import_into_new
from ..core.operations.importing import CONFLICT_POLICIES, JOURNAL_LIMIT, ImportResult, import_memories
from . import common
from .maintenance import target_paths


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    p = common.command(
        sub, "export", _export, "export memories as JSONL, CSV or a Markdown review document",
        description="Write memories to a file (or standard output): JSONL and CSV carry every column exactly "
        "as stored plus site and agent; md is a review document grouped by type. Files are only read.")
    common.add_target(p, required=True, all_option=True)
    p.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl", help="jsonl (default), csv or md")
    p.add_argument("--query", metavar="Q", help="only memories this search query finds (see 'ora-desktop search')")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")

    p = common.command(
        sub, "import", _import, "import memories from an export or a neighbouring memory store",
        description="Import SOURCE into a memory file, all or nothing (every row checked first; written in short "
        "transactions an agent never waits long for): Ora JSONL/CSV exports, a Markdown "
        "review export (--format md), another .site.db, a context-memory context.db, a zoo memory.sqlite, a "
        "chat-log database or a semantica JSON dump (detected from the content); with --from markdown, a "
        "folder (or file) of ordinary Markdown notes, one context memory per section. The source is never "
        "changed; importing twice adds nothing.")
    p.add_argument("source", help="the file to import (a folder of notes with --from markdown)")
    common.add_target(p, required=True)
    p.add_argument("--from", dest="source_format", choices=FORMATS, default="auto",
                   help="the source's format (default: detect from its content)")
    p.add_argument("--on-conflict", choices=CONFLICT_POLICIES, default=None,
                   help="an id already in the file: skip (default), replace, replace if the row is newer, or "
                   "replace if its text changed (the default for --from markdown)")
    p.add_argument("--dry-run", action="store_true", help="show what would be imported; write nothing")
    p.add_argument("--skip-bad", action="store_true",
                   help="import the valid rows and list the invalid ones (default: import nothing if one is bad)")
    p.add_argument("--local-only", action="store_true",
                   help="mark every imported memory local_only (never synced); default pending for other "
                   "stores, as exported for Ora files")
    p.add_argument("--messages", action="store_true",
                   help="context-memory: also import key messages as conversation memories")
    p.add_argument("--create", action="store_true",
                   help="create the target agent file if it does not exist (removed again if the import fails)")


def _export(args: argparse.Namespace) -> int:
    paths = target_paths(args)
    result = export_memories(paths, args.output, args.format, query=args.query)
    if args.output:
        if args.json:
            common.emit_json(result)
        else:
            print(f"exported {result.count} memories from {len(result.files)} file(s) to {result.path} "
                  f"({result.format})")
    return 0


def _import(args: argparse.Namespace) -> int:
    path = common.target_path(args)
    options = ImportOptions(sync_status="local_only" if args.local_only else "pending",
                            messages=args.messages, force_sync_status=args.local_only)
    chosen = {"on_conflict": args.on_conflict, "dry_run": args.dry_run, "skip_bad": args.skip_bad,
              "options": options}
    if not path.exists() and args.create:
        result = import_into_new(path, args.source, args.source_format, **chosen)
    elif not path.exists():
        raise OraError(f"{path}: no such file (add --create to start a new agent file there)")
    else:
        with open_store(path, readonly=args.dry_run) as store:
            result = import_memories(store, args.source, args.source_format, **chosen)
    if args.json:
        common.emit_json(summary(result))
        return 0
    if result.origin_warning:
        print(f"warning: {result.origin_warning}", file=sys.stderr)
    for line in result.recovered:
        print(f"note: {line}", file=sys.stderr)
    verb = "would import" if result.dry_run else "imported"
    print(f"{verb} {result.added + result.replaced} memories from {result.source} ({result.format}) into "
          f"{result.target}: {result.added} new, {result.replaced} replaced, {result.kept} already there "
          f"(kept), {result.collapsed} duplicates collapsed, {len(result.skipped)} skipped")
    count = result.added + result.replaced
    if count and not result.dry_run:
        print("'ora-desktop undo' takes the whole import back" if count <= JOURNAL_LIMIT else
              f"not on the undo list (over {JOURNAL_LIMIT:,} memories)")
    if result.by_type:
        print("by type: " + ", ".join(f"{t} {n}" for t, n in result.by_type.items()))
    for skipped in result.skipped:
        print(f"skipped {skipped}")
    if result.dry_run and result.sample:
        rows = [(m.id, m.type, m.importance, m.created_at, m.title) for m in result.sample]
        print(common.table(("id", "type", "imp", "created", "title"), rows))
    return 0


def summary(result: ImportResult) -> dict[str, Any]:
    """The import result for ``--json`` (counts, skipped rows, the first rows; not every id)."""
    return {
        "source": str(result.source), "format": result.format, "target": str(result.target),
        "dry_run": result.dry_run, "added": result.added, "replaced": result.replaced, "kept": result.kept,
        "collapsed": result.collapsed, "by_type": result.by_type,
        "origins": [{"site": site, "agent": agent} for site, agent in result.origins],
        "warning": result.origin_warning, "recovered": list(result.recovered),
        "skipped": [{"where": s.where, "field": s.field, "problem": s.problem} for s in result.skipped],
        "sample": common.to_jsonable(list(result.sample)),
    }
