"""Sync with a shared PostgreSQL server (psycopg 3): push, pull, tombstones, conflicts.

:func:`~ora_desktop.core.sync.engine.sync_file` syncs one file; the user-level operation is
:func:`ora_desktop.core.operations.sync.sync` (``ora_desktop.sync``). psycopg is imported only
when a sync connects, so ``import ora_desktop`` stays light.
"""

from .conflict_log import ConflictEntry, ConflictPage
from .engine import SyncResult, identity, sync_file
from .local import CONFLICT, REMOTE_DELETE, Decision, SyncState, conflicts, pending_count, queue_tombstones, states
from .redact import SyncError, redact
from .server import DDL

__all__ = ["CONFLICT", "DDL", "REMOTE_DELETE", "ConflictEntry", "ConflictPage", "Decision", "SyncError",
           "SyncResult", "SyncState", "conflicts", "identity", "pending_count", "queue_tombstones", "redact",
           "states", "sync_file"]
