"""Subcommands of the search feature: ``search``, ``context`` and ``reindex``.

Files are only read; the full-text index lives in the user cache folder and is built on the
first search (progress on stderr).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core import OraError, open_store
from ..core.operations.search import SearchRequest, answer_hits, search_memories
from ..core.search import ensure_index, search_many
from ..core.search.results import Hit, IndexState, SearchResult
from ..core.search.semantic import MODES, choose_mode, ensure_vectors
from ..core.search.sidecar import fts5_available
from . import common
from .common import command, emit_json, home_of, table, target_path
from .meaning import Progress as MeaningProgress

QUERY_HELP = ('words (stemmed), prefix*, "exact phrase", -excluded, a OR b, and filters such as '
              "type:fact importance:>=7 health:<0.3 sync:pending tag:error=TypeError site:S agent:A "
              "is:expired is:superseded")


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    p = command(sub, "search", cmd_search, "full-text search of one agent, a site, or every site",
                "Search memories, best first (BM25 blended with importance, health and recency). "
                "With --db or --site and --agent one file is searched; with --site alone every agent "
                "of that site; with --all (or no target) every agent of every site, merged by "
                f"reciprocal rank fusion. Query language: {QUERY_HELP}. A query that starts with '-' "
                "goes after '--': ora-desktop search -- '-draft deploy'.")
    common.add_target(p, all_option=True)
    p.add_argument("query", help="what to look for (quote it in the shell)")
    p.add_argument("--limit", type=_positive, default=20, help="at most this many hits (default 20)")
    p.add_argument("--mode", choices=MODES, help="lexical (words), semantic (meaning) or hybrid (both, fused); "
                   "default hybrid once the file's vectors exist ('ora-desktop embed'), else lexical")
    p.add_argument("--as-of", metavar="WHEN", type=_as_of,
                   help="search the memories as they were then (a date means the end of that day, UTC), "
                   "as far as the file's undo journal knows: one file, words matched as plain text")

    p = command(sub, "context", cmd_context, "assemble an agent's context for a query within a token budget",
                "Print the important, relevant (keyword hits and their related memories) and recent "
                "memories for QUERY, never more than --budget tokens (4 characters per token).")
    common.add_target(p)
    p.add_argument("query", help="the agent's current message or topic")
    p.add_argument("--budget", type=_positive, default=2000, help="token budget (default 2000)")
    p.add_argument("--hops", type=int, default=1, help="related_to hops to expand keyword hits (default 1)")
    p.add_argument("--touch", action="store_true", help="record an access on every memory placed")

    p = command(sub, "reindex", cmd_reindex, "rebuild the full-text index of one file, a site, or everything",
                "Rebuild the search index (a cache beside, never inside, the memory files) from scratch.")
    common.add_target(p, all_option=True)


def _as_of(text: str) -> datetime:
    from ..core import InvalidValue
    from ..core.operations.as_of import parse_when

    try:
        return parse_when(text)
    except InvalidValue as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("as_of: ")) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _single(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "db", None) or (args.site and args.agent and not args.all))


def _files(args: argparse.Namespace) -> list[Path]:
    if _single(args):
        return [target_path(args)]
    home = home_of(args)
    return [a.path for a in home.agents()
            if (not args.site or a.site == args.site) and (not args.agent or a.agent == args.agent)]


class _Progress:
    """Indexing progress on stderr (only when stderr is a terminal, or at the end)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        percent = int(done * 100 / total) if total else 100
        if percent != self.last and (sys.stderr.isatty() or percent in (0, 100)):
            end = "\n" if percent == 100 or not sys.stderr.isatty() else "\r"
            print(f"indexing {self.path.name}: {done:,}/{total:,} ({percent}%)", end=end, file=sys.stderr)
            self.last = percent


_SKIPPED = "skipped: it cannot be opened"


def _indexed(files: list[Path], rebuild: bool = False) -> tuple[list[tuple[Path, IndexState]], list[str]]:
    """Index each file (progress on stderr); a file that cannot be opened is skipped with a
    warning naming it, and the others are still done (exit status 0)."""
    done, skipped = [], []
    for path in files:
        try:
            done.append((path, ensure_index(path, progress=_Progress(path), rebuild=rebuild)))
        except OraError as exc:
            reason = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
            skipped.append(f"{reason}; {_SKIPPED}")
    return done, skipped


def cmd_search(args: argparse.Namespace) -> int:
    if args.as_of is not None:
        result = _as_of_search(args)
    elif _single(args):
        path = target_path(args)
        mode = choose_mode(path, args.mode)
        if mode != "lexical":
            ensure_vectors(path, progress=MeaningProgress(path))
        result = _one_file(path, SearchRequest(text=args.query, limit=args.limit, mode=mode, facets=False))
        if mode == "lexical" and args.mode is None and not args.json:
            print("note: lexical search (no vectors yet: 'ora-desktop embed' or --mode hybrid builds them)",
                  file=sys.stderr)
    else:
        if args.mode not in (None, "lexical"):
            raise OraError(f"--mode {args.mode} searches one file: give --db, or --site and --agent")
        files = _files(args)
        if not files:
            raise OraError(f"no agent files found under {home_of(args).sites_dir}")
        usable, skipped = _indexed(files)
        result = search_many([path for path, _ in usable], args.query, limit=args.limit)
        result = replace(result, warnings=(*skipped, *result.warnings))
    if args.json:
        emit_json(_result_json(result))
        for warning in result.warnings:
            if _SKIPPED in warning:
                print(f"warning: {warning}", file=sys.stderr)
        return 0
    for warning in result.warnings:
        print(f"{'warning' if _SKIPPED in warning else 'note'}: {warning}", file=sys.stderr)
    if result.note:
        print(f"note: {result.note}", file=sys.stderr)
    if not result.hits:
        print("no memories match")
        return 0
    if result.partial:
        print("partial matches (no memory holds every word):")
    rows = [(f"{h.score:.3f}", h.location, h.memory.id, h.memory.type, h.memory.importance,
             ("expired " if h.expired else "") + common.one_line(h.snippet)) for h in result.hits]
    print(table(("score", "where", "id", "type", "imp", "snippet"), rows))
    return 0


def _as_of_search(args: argparse.Namespace) -> SearchResult:
    """``--as-of``: one file's memories as they were then (``core.operations.as_of``)."""
    from ..core.operations.as_of import search_as_of

    if not _single(args):
        raise OraError("--as-of searches one file: give --db, or --site and --agent")
    if args.mode not in (None, "lexical"):
        raise OraError(f"--as-of matches words as plain text; leave out --mode {args.mode}")
    with open_store(target_path(args), readonly=True) as store:
        answer = search_as_of(store, args.query, args.as_of, args.limit)
    when = f"{args.as_of:%Y-%m-%d %H:%M:%S} UTC"
    return SearchResult(query=args.query, hits=list(answer.hits), terms=(), fallback=True,
                        note=f"as of {when}: {answer.memories:,} memories then, words matched as plain text",
                        warnings=answer.notes)


def _one_file(path: Path, request: SearchRequest) -> SearchResult:
    """One file through the core search call (the index built first, progress on stderr);
    snippets only for the hits printed."""
    with open_store(path, readonly=True) as store:  # a file of the wrong shape is refused here, named
        state = ensure_index(path, progress=_Progress(path)) if fts5_available() else None
        answer = search_memories(store, request, wait=state is not None and state.built)
        hits = answer_hits(store, answer, 0, request.limit)
    notes = [n for n in answer.notes if n not in answer.parsed.warnings]
    return SearchResult(query=answer.query, hits=hits, terms=answer.terms, fallback=answer.engine == "like",
                        note="; ".join(notes), warnings=answer.parsed.warnings, total=answer.total,
                        partial=any(n.startswith("no memory holds every word") for n in notes))


def _hit_json(hit: Hit) -> dict[str, Any]:
    memory = hit.memory
    return {
        "site": hit.site, "agent": hit.agent, "path": str(hit.path) if hit.path else None,
        "id": memory.id, "score": hit.score, "file_score": hit.file_score, "bm25": hit.bm25,
        "snippet": hit.snippet, "spans": [list(s) for s in hit.spans], "expired": hit.expired,
        "superseded": hit.superseded, "memory": common.to_jsonable(memory),
    }


def _result_json(result: SearchResult) -> dict[str, Any]:
    return {
        "query": result.query, "terms": list(result.terms), "fallback": result.fallback, "partial": result.partial,
        "note": result.note,
        "warnings": list(result.warnings), "facets": result.facets, "hits": [_hit_json(h) for h in result.hits],
    }


def cmd_context(args: argparse.Namespace) -> int:
    path = target_path(args)
    ensure_index(path, progress=_Progress(path))
    with open_store(path, readonly=not args.touch) as store:
        bundle = store.context(args.query, args.budget, hops=args.hops, touch=args.touch)
    if args.json:
        emit_json({
            "query": bundle.query, "token_budget": bundle.token_budget, "tokens": bundle.tokens,
            "notes": list(bundle.notes), "text": bundle.text,
            "sections": [{"name": s.name, "budget": s.budget, "tokens": s.tokens,
                          "ids": [item.memory.id for item in s.items],
                          "left_out": [item.memory.id for item in s.left_out]} for s in bundle.sections],
        })
        return 0
    for note in bundle.notes:
        print(f"note: {note}", file=sys.stderr)
    print(bundle.text if bundle.text else "(nothing fits or nothing to say)")
    left = f"; {len(bundle.left_out)} left out for budget" if bundle.left_out else ""
    print(f"\n({bundle.tokens} of {bundle.token_budget} tokens{left})", file=sys.stderr)
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    files = _files(args) if (args.all or not _single(args)) else [target_path(args)]
    if not files:
        raise OraError(f"no agent files found under {home_of(args).sites_dir}")
    if len(files) == 1 and _single(args):
        files_done, skipped = [(files[0], ensure_index(files[0], progress=_Progress(files[0]), rebuild=True))], []
    else:
        files_done, skipped = _indexed(files, rebuild=True)
    for warning in skipped:
        print(f"warning: {warning}", file=sys.stderr)
    states = []
    for path, state in files_done:
        if not state.built:
            raise OraError(f"{path}: not indexed ({state.reason})")
        states.append(state)
    if args.json:
        emit_json([{"path": str(s.path), "sidecar": str(s.sidecar), "rows": s.rows} for s in states])
    else:
        for state in states:
            print(f"{state.path}: {state.rows:,} memories indexed")
    return 0
