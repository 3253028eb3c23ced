"""Subcommands of search by meaning: ``embed``, ``duplicates`` and ``merge``.

``search --mode`` lives with the search command; vectors are built on first use (progress on
standard error) in the user cache folder, never in the agent's file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core import InvalidValue
from ..core.operations.duplicates import DEFAULT_THRESHOLD, find_duplicates
from ..core.operations.merge import merge_duplicates, merge_into_new
from ..core.search.semantic import ensure_vectors
from . import common
from .common import command, emit_json, open_target, target_path


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    p = command(sub, "embed", cmd_embed, "build or refresh the vectors for search by meaning",
                "Embed every memory not embedded yet with the bundled model (or the [embeddings] "
                "provider of the config); the vectors live beside the search index in the cache folder.")
    common.add_target(p)

    p = command(sub, "duplicates", cmd_duplicates, "list groups of exact and near-duplicate memories",
                "Groups of live memories that say the same thing: exact (same text, case and spacing "
                "aside) and near (cosine similarity of their vectors at or above --threshold), most "
                "important first.")
    common.add_target(p)
    p.add_argument("--threshold", type=_threshold, default=DEFAULT_THRESHOLD,
                   help=f"cosine similarity for near duplicates, 0-1 (default {DEFAULT_THRESHOLD})")
    p.add_argument("--exact-only", action="store_true", help="only identical texts (no vectors needed)")

    p = command(sub, "merge", cmd_merge, "merge duplicate memories into one",
                "Keep one of the memories (--keep, default the most important, healthiest, newest), "
                "optionally with new text; it takes the group's links and highest importance and "
                "supersedes the others. Nothing is deleted.")
    common.add_target(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="the memories to merge (two or more)")
    p.add_argument("--keep", metavar="ID", help="the memory to keep")
    p.add_argument("--content", help="the merged text of the kept memory ('-' reads standard input)")
    p.add_argument("--new", action="store_true",
                   help="keep none: write --content as a new memory that supersedes them all (as the window's "
                   "Merge does); it takes the best member's type and the highest importance")


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError("must be above 0 and at most 1")
    return value


class Progress:
    """Embedding progress on standard error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if not total:
            return
        percent = int(done * 100 / total)
        if percent != self.last and (sys.stderr.isatty() or percent in (0, 100)):
            end = "\r" if sys.stderr.isatty() and percent < 100 else "\n"
            print(f"embedding {self.path.name}: {done:,}/{total:,} ({percent}%)", end=end, file=sys.stderr)
            self.last = percent


def cmd_embed(args: argparse.Namespace) -> int:
    path = target_path(args)
    vectors = ensure_vectors(path, Progress(path))
    held = sum(1 for m in vectors.mids if m is not None)
    if args.json:
        emit_json({"path": str(path), "sidecar": str(vectors.sidecar), "vectors": held,
                   "provider": vectors.provider.name, "model": vectors.provider.model})
    else:
        print(f"{path}: {held:,} memories embedded ({vectors.provider.name} {vectors.provider.model})")
    return 0


def cmd_duplicates(args: argparse.Namespace) -> int:
    path = target_path(args)
    with open_target(args, readonly=True) as store:
        result = find_duplicates(store, args.threshold, near=not args.exact_only, progress=Progress(path))
        if args.json:
            emit_json(result.as_json())
            return 0
        if not result.groups:
            print(f"no duplicates among {result.scanned:,} memories")
            return 0
        texts = store.get_many([i for g in result.groups for i in g.ids])
    for number, group in enumerate(result.groups, 1):
        print(f"group {number}: {group.kind}, similarity {group.similarity:.2f}, {len(group.ids)} memories")
        for memory_id in group.ids:
            memory = texts.get(memory_id)
            line = common.one_line(memory.content) if memory else ""
            print(f"  {memory_id}  imp {memory.importance if memory else '?'}  {line[:100]}")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    text = common.text_arg(args.content) if args.content is not None else None
    with open_target(args) as store:
        if args.new:
            if args.keep is not None or text is None:
                raise InvalidValue("--new", "goes with --content TEXT and without --keep")
            result = merge_into_new(store, args.ids, {"content": text})
        else:
            result = merge_duplicates(store, args.ids, keep=args.keep, text=text)
    if args.json:
        emit_json({"kept": result.kept, "superseded": list(result.superseded)})
    else:
        verb = "wrote" if args.new else "kept"
        print(f"{verb} {result.kept.id}; superseded {', '.join(result.superseded)} ('ora-desktop undo' takes it back)")
    return 0
