"""The ``sync`` maintenance job: :func:`~ora_desktop.core.sync.engine.sync_file` under the job
runner's per-(job, file) lock and run history, like every other job."""

from __future__ import annotations

from .. import sync_settings as settings
from ..sync.engine import sync_file
from ..sync.redact import SyncError
from .context import JobContext, Outcome


def run(ctx: JobContext) -> Outcome:
    """Sync ``ctx.path`` with the server configured for its site (``[sync] url``)."""
    url = settings.url_for(ctx.config, ctx.site)
    if not url:
        raise SyncError(f"{ctx.path}: no sync server is set up (set [sync] url in {ctx.config.path}, "
                        "ORA_DESKTOP_SYNC_URL, or pass --url)")
    result = sync_file(ctx.path, url, dry_run=ctx.dry_run, check_cancel=ctx.check_cancel, progress=ctx.progress)
    counts = {"pushed": result.pushed, "pulled": result.pulled, "tombstones": result.tombstones,
              "deleted": result.deleted_here, "conflicts": len(result.conflicts), "pending": result.pending_after,
              "marks_pushed": result.marks_pushed, "marks_pulled": result.marks_pulled}
    would = [(d.memory_id, f"conflict: the {d.winner} version won; the other is in the trash")
             for d in result.conflicts]
    return Outcome(counts=counts, message=result.summary, would_change=would, detail=result)
