"""The ``consolidate`` job: clusters of old, low-health memories on one topic become one summary
that supersedes them (see :mod:`ora_desktop.core.operations.consolidate`). A dry run lists the
clusters and their summaries; nothing is ever deleted."""

from __future__ import annotations

from ..store import open_store
from .context import JobContext, Outcome, summary


def run(ctx: JobContext) -> Outcome:
    """Consolidate one file (or, on a dry run, say what would be consolidated)."""
    from ..operations.consolidate import consolidate  # numpy and the model: only when this job runs
    from ..records import Initiator

    ctx.step(0, 1)
    with open_store(ctx.path, readonly=ctx.dry_run) as store:
        result = consolidate(store, dry_run=ctx.dry_run, cancel=ctx.cancel, now=ctx.clock, initiator=Initiator.JOB,
                             progress=lambda done, total: ctx.step(done, total))
    ctx.step(1, 1)
    merged = sum(len(c.ids) for c in result.clusters)
    counts = {"clusters": len(result.clusters), "memories": merged, "candidates": result.candidates}
    listing = [summary(", ".join(c.ids), c.summary, f"{len(c.ids)} memories") for c in result.clusters]
    if ctx.dry_run:
        return Outcome(counts, f"would summarise {merged} memories in {len(result.clusters)} clusters", listing)
    written = ", ".join(result.summaries)
    taken_back = f" (summaries: {written}; nothing deleted; 'ora-desktop undo' takes each back)"
    return Outcome(counts, f"summarised {merged} memories in {len(result.clusters)} clusters"
                   + (taken_back if written else ""), listing)
