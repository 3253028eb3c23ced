"""Helpers shared by the core tests: files another program could have written."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path


def legacy_memories(path: Path, extra_columns: str = "", not_null: bool = True) -> sqlite3.Connection:
    """A file whose ``memories`` table has the seed's columns but no CHECKs (an older writer),
    plus ``extra_columns`` (e.g. ``", source_url TEXT"``). Returns the open connection."""
    required = " NOT NULL" if not_null else ""
    conn = sqlite3.connect(path)
    conn.execute(
        f"CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT{required}, type TEXT, importance INTEGER, "
        "access_count INTEGER, last_accessed_at TEXT, health_score REAL, related_to TEXT, superseded_by TEXT, "
        f"created_at TEXT{required}, updated_at TEXT{required}, expires_at TEXT, synced_at TEXT, "
        f"sync_status TEXT{extra_columns})"
    )
    return conn


def copy_mid_write(path: Path, folder: Path, delete_id: str, suffixes: tuple[str, ...]) -> Path:
    """Delete ``delete_id`` through a writer that has not checkpointed, copy the file with the
    sidecars in ``suffixes`` into ``folder`` (what a crash or a backup tool leaves), return the copy."""
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("DELETE FROM memories WHERE id = ?", (delete_id,))
    writer.commit()
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / path.name
    for suffix in ("", *suffixes):
        shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    writer.close()
    return copy
