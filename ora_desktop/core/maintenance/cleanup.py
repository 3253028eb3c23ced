"""Expiry cleanup: delete memories whose ``expires_at`` is in the past, recoverably.

"In the past" is decided by time (``julianday``), whatever format the writer used, so
``2025-01-14T10:30:00.000Z`` and ``2025-01-14 10:30:00`` are treated alike. Rows go to the
file's ``ora_desktop_trash`` in the same transaction as the delete (contract 5), in short
transactions sharing one trash batch (:mod:`..chunks`: an agent writing meanwhile is never locked
out); a dry run lists what would go and changes nothing.
"""

from __future__ import annotations

from ..rawsql import run_sql
from ..store import open_store
from .context import Cancelled, CancelledPartWay, JobContext, Outcome, summary
from .values import looks_like_time

PREVIEW_LIMIT = 1000
# Only text shaped like a timestamp expires: a number (read by julianday() as a day in 4713 BC) or
# other odd value is left alone and reported by `check`.
EXPIRED = f"{looks_like_time('expires_at')} AND julianday(expires_at) < julianday(?)"


def run(ctx: JobContext) -> Outcome:
    """Delete (or, on a dry run, list) the expired memories of one file."""
    ctx.step(0, 1)
    params = [ctx.now_sql]
    with open_store(ctx.path, readonly=ctx.dry_run) as store:
        if "expires_at" not in store.columns:
            return Outcome({"expired": 0}, "this file has no expires_at column: nothing expires")
        if ctx.dry_run:
            total = run_sql(store, f"SELECT count(*) FROM memories WHERE {EXPIRED}", params).fetchone()[0]
            rows = run_sql(store,
                f"SELECT id, content, expires_at FROM memories WHERE {EXPIRED} "
                f"ORDER BY julianday(expires_at) LIMIT {PREVIEW_LIMIT}", params,
            ).fetchall()
            more = f" (first {PREVIEW_LIMIT} listed)" if total > PREVIEW_LIMIT else ""
            return Outcome({"expired": total}, f"would delete {total} expired memories{more}",
                           [summary(r[0], r[1], f"expired {r[2]}") for r in rows], would_change_total=total)
        try:
            with ctx.interruptible(store):
                removed = store.remove_where_recoverably(EXPIRED, params, reason="expired",
                                                         return_records=False).count
        except Cancelled:
            raise CancelledPartWay(f"{ctx.path}: cleanup cancelled part-way; what it deleted is in the trash, "
                            "the next cleanup deletes the rest") from None
    ctx.step(1, 1)
    where = " (kept in the trash, restorable)" if removed else ""
    return Outcome({"expired": removed}, f"deleted {removed} expired memories{where}")
