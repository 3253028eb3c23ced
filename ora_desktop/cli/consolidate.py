"""``ora-desktop consolidate``: review clusters of old, fading memories and their summaries, then
apply all or some; parsing and printing only (the rules live in ``core.operations.consolidate``)."""

from __future__ import annotations

import argparse
from typing import Any

from . import common
from .common import command, emit_json, open_target


def register(sub: Any) -> None:
    """Add ``consolidate`` to the ora-desktop parser."""
    p = command(sub, "consolidate", cmd_consolidate, "summarise clusters of old, fading memories (review first)",
                "Group live memories older than --min-age-days with health below --max-health by meaning, and "
                "propose one extractive summary per cluster (their own sentences and code, kept whole, naming "
                "what it merged). --dry-run (the default) lists the numbered clusters and changes nothing; "
                "--apply writes every summary, or only --cluster N, superseding the members: one step each "
                "for 'ora-desktop undo'. Nothing is deleted. --summarizer endpoint has the OpenAI-compatible "
                "endpoint of config.toml's [summarizer] write the summaries; the extractive one stands in, saying "
                "why, when it fails.")
    common.add_target(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="list the clusters and summaries (the default)")
    mode.add_argument("--apply", action="store_true", help="write the summaries (all, or those named by --cluster)")
    p.add_argument("--cluster", type=common.positive_int, action="append", metavar="N",
                   help="with --apply: only cluster N of the dry run (repeatable)")
    p.add_argument("--summarizer", choices=("extractive", "endpoint"), default="extractive",
                   help="who writes the summaries: their own sentences (default), or the [summarizer] endpoint")
    p.add_argument("--min-age-days", type=float, default=30, metavar="DAYS",
                   help="only memories created at least this long ago (default 30)")
    p.add_argument("--max-health", type=common.health_arg, default=0.5, metavar="X",
                   help="only memories with health below X (default 0.5)")
    p.add_argument("--min-size", type=common.positive_int, default=3, metavar="N",
                   help="clusters of at least N memories (default 3)")


def cmd_consolidate(args: argparse.Namespace) -> int:
    """List the clusters, or apply them."""
    from ..core import OraError
    from ..core.operations.consolidate import consolidate

    if args.cluster and not args.apply:
        raise OraError("--cluster: add --apply to write that cluster's summary (a dry run lists every cluster)")
    with open_target(args, readonly=not args.apply) as store:
        result = consolidate(store, dry_run=not args.apply, clusters=args.cluster, min_age_days=args.min_age_days,
                             max_health=args.max_health, min_size=args.min_size, summarizer=args.summarizer)
    applied = set(result.applied)
    if args.json:
        emit_json({"dry_run": not args.apply, "candidates": result.candidates, "summaries": list(result.summaries),
                   "journal_entries": list(result.entries),
                   "clusters": [{"number": c.number, "ids": list(c.ids), "type": c.type, "importance": c.importance,
                                 "summary": c.summary, "summarizer": c.summarizer, "note": c.note,
                                 "applied": c.number in applied} for c in result.clusters]})
        return 0
    if not result.clusters:
        print(f"no cluster to consolidate among {result.candidates} candidate memories in {store.path}")
        return 0
    for cluster in result.clusters:
        if args.apply and cluster.number not in applied:
            continue
        print(f"cluster {cluster.number}: {len(cluster.ids)} memories ({', '.join(cluster.ids)}), "
              f"{cluster.type}, importance {cluster.importance}; summary by {cluster.summarizer}"
              + (f" ({cluster.note})" if cluster.note else ""))
        print("\n".join(f"    {line}" for line in cluster.summary.split("\n")))
        print()
    if args.apply:
        print(f"wrote {len(result.summaries)} summar{'y' if len(result.summaries) == 1 else 'ies'} "
              f"({', '.join(result.summaries)}) superseding their members; nothing deleted; "
              "'ora-desktop undo' takes back the latest")
    else:
        print(f"{len(result.clusters)} cluster(s); nothing changed. Apply with --apply, or --apply --cluster N")
    return 0
