"""The ``purge-trash`` job: forget memories deleted more than ``[trash] keep_days`` days ago.

Deletes are recoverable from the file's trash; this job bounds how long. It purges as
:func:`ora_desktop.core.operations.purge.empty_trash` does (secure delete, ``-wal`` truncated,
sidecars scrubbed); backups are named in the message, not rewritten. ``keep_days = 0`` means
never purge automatically. A dry run lists what would go; history records only counts.
"""

from __future__ import annotations

from ..operations.purge import empty_trash, plan_empty_trash
from ..rawsql import all_rows
from ..store import open_store
from .context import JobContext, Outcome, summary

PREVIEW_LIMIT = 1000


def run(ctx: JobContext) -> Outcome:
    """Purge (or, on a dry run, list) the old part of one file's trash."""
    keep = ctx.config.trash_keep_days()
    if keep.value is None:
        return Outcome({"purged": 0}, "the trash is kept until emptied by hand ([trash] keep_days = 0)")
    ctx.step(0, 1)
    with open_store(ctx.path, readonly=ctx.dry_run) as store:
        if not store.has_table("ora_desktop_trash"):
            return Outcome({"purged": 0}, "nothing was ever deleted from this file")
        age, now = keep.value, ctx.now_sql  # "older than N days" as of the job's clock
        if ctx.dry_run:
            ids = plan_empty_trash(store, age, now)
            rows = all_rows(store,
                "SELECT memory_id, json_extract(row_json, '$.content'), deleted_at FROM ora_desktop_trash "
                "WHERE julianday(deleted_at) < julianday(?) - ? ORDER BY julianday(deleted_at) "
                f"LIMIT {PREVIEW_LIMIT}", [now, age])
            more = f" (first {PREVIEW_LIMIT} listed)" if len(ids) > PREVIEW_LIMIT else ""
            return Outcome({"purged": len(ids)}, f"would purge {len(ids)} memories deleted more than "
                           f"{keep.value:g} days ago{more}", [summary(r[0], r[1], f"deleted {r[2]}") for r in rows],
                           would_change_total=len(ids))
        with ctx.interruptible(store):
            result = empty_trash(store, age, config=ctx.config, now=now)
    ctx.step(1, 1)
    held = f"; {len(result.backups_holding)} backup(s) still hold them" if result.backups_holding else ""
    return Outcome({"purged": len(result.purged), "trash_rows": result.trash_rows,
                    "backups_holding": len(result.backups_holding)},
                   f"purged {len(result.purged)} memories deleted more than {keep.value:g} days ago{held}")

