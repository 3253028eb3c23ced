"""The (job, file) locks every process takes: one job on one file at a time, across processes.

Here, below both the jobs and the backup module, so a restore (``restore.restore_backup``) and
the backup job (``maintenance.jobs``) share the lock without importing each other.
"""

from __future__ import annotations

from pathlib import Path

import filelock

from . import paths
from .private import private_dir, refuse_link


def lock_path(name: str, db_path: str | Path) -> Path:
    """The lock file for ``name`` on ``db_path`` (under the user data directory)."""
    return paths.data_dir() / "locks" / f"{name}-{paths.file_key(db_path)}.lock"


def job_lock(name: str, db_path: str | Path) -> filelock.FileLock:
    """The (job, database) lock; acquire with ``timeout=0`` to fail at once when it is held."""
    path = lock_path(name, db_path)
    private_dir(paths.data_dir(), path.parent.name)
    return filelock.FileLock(str(refuse_link(path)), thread_local=False, mode=0o600)
