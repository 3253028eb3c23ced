"""The seed schema (the contract) and the compatibility check run on every open."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CorruptFile, EmptyFile, FileMissing, FileProblem, NotSQLite, WrongSchema
from .fileheader import read_header
from .private import touch_private

# The seed's "Full Initialization SQL", verbatim. New files are created with exactly this.
INIT_SQL = """\
-- Run this when creating a new .site.db file

PRAGMA journal_mode = WAL;
PRAGMA foreign_keys = ON;

CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    type TEXT DEFAULT 'fact' CHECK(type IN ('fact','preference','context','task','conversation')),
    importance INTEGER DEFAULT 5 CHECK(importance >= 1 AND importance <= 10),
    access_count INTEGER DEFAULT 0,
    last_accessed_at TEXT,
    health_score REAL DEFAULT 1.0 CHECK(health_score >= 0 AND health_score <= 1),
    related_to TEXT,
    superseded_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at TEXT,
    synced_at TEXT,
    sync_status TEXT DEFAULT 'pending' CHECK(sync_status IN ('pending','synced','local_only'))
);

CREATE TABLE IF NOT EXISTS task_context (
    id TEXT PRIMARY KEY,
    task_description TEXT NOT NULL,
    input_data TEXT,
    output_data TEXT,
    status TEXT DEFAULT 'active' CHECK(status IN ('active','completed','failed')),
    created_at TEXT NOT NULL,
    completed_at TEXT
);

CREATE INDEX IF NOT EXISTS idx_memories_type ON memories(type);
CREATE INDEX IF NOT EXISTS idx_memories_health ON memories(health_score);
CREATE INDEX IF NOT EXISTS idx_memories_importance ON memories(importance);
CREATE INDEX IF NOT EXISTS idx_memories_sync ON memories(sync_status);
CREATE INDEX IF NOT EXISTS idx_memories_expires ON memories(expires_at);
"""

MEMORY_COLUMNS: tuple[str, ...] = (
    "id", "content", "type", "importance", "access_count", "last_accessed_at",
    "health_score", "related_to", "superseded_by", "created_at", "updated_at",
    "expires_at", "synced_at", "sync_status",
)
TASK_COLUMNS: tuple[str, ...] = (
    "id", "task_description", "input_data", "output_data", "status", "created_at",
    "completed_at",
)
# Columns without which the engine cannot show or edit a memory at all.
REQUIRED_MEMORY_COLUMNS = frozenset({"id", "content"})
SEED_INDEXES: dict[str, str] = {
    "idx_memories_type": "type",
    "idx_memories_health": "health_score",
    "idx_memories_importance": "importance",
    "idx_memories_sync": "sync_status",
    "idx_memories_expires": "expires_at",
}

MEMORY_TYPES: tuple[str, ...] = ("fact", "preference", "context", "task", "conversation")
SYNC_STATUSES: tuple[str, ...] = ("pending", "synced", "local_only")
TASK_STATUSES: tuple[str, ...] = ("active", "completed", "failed")
IMPORTANCE_RANGE = (1, 10)
HEALTH_RANGE = (0.0, 1.0)
RECALL_THRESHOLD = 0.3

SQLITE_HEADER = b"SQLite format 3\x00"
ENGINE_TABLE_PREFIX = "ora_desktop_"


@dataclass(frozen=True)
class SchemaReport:
    """What the compatibility check found. ``warnings`` are shown, never fatal."""

    path: str
    memory_columns: tuple[str, ...]
    missing_columns: tuple[str, ...] = ()
    extra_columns: tuple[str, ...] = ()
    has_task_context: bool = True
    missing_indexes: tuple[str, ...] = ()
    has_checks: bool = True
    journal_mode: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True when there is nothing to warn about."""
        return not self.warnings


def sniff_file(path: Path) -> None:
    """Refuse files that are missing, empty, not SQLite (or encrypted) or obviously truncated."""
    if not path.exists():
        raise FileMissing(path, "no such file")
    if path.is_dir():
        raise NotSQLite(path, "is a directory, not a database file")
    size = path.stat().st_size
    if size == 0:
        raise EmptyFile(path, "the file is empty (0 bytes), not an Ora database")
    header = read_header(path, 100)  # never open/close the file: that would drop SQLite's locks
    if not header.startswith(SQLITE_HEADER):
        raise NotSQLite(
            path, "not an SQLite database (wrong header; the file may be encrypted or another format)"
        )
    if len(header) < 100:
        raise CorruptFile(path, f"truncated: only {size} bytes, shorter than an SQLite header")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    page_count = int.from_bytes(header[28:32], "big")
    # The in-header page count is valid only when "version-valid-for" matches the change counter.
    count_valid = header[92:96] == header[24:28]
    wal = Path(str(path) + "-wal")
    if count_valid and page_size and page_count and size < page_size * page_count and not wal.exists():
        raise CorruptFile(
            path,
            f"truncated: the header declares {page_count} pages of {page_size} bytes "
            f"but the file holds only {size} bytes",
        )


def inspect(conn: sqlite3.Connection, path: str | Path) -> SchemaReport:
    """Check an open connection against the seed schema; raise for fatal problems."""
    path = str(path)
    try:
        tables = {
            row[0]: (row[1] or "")
            for row in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.DatabaseError as exc:
        raise _as_file_error(path, exc) from exc
    if "memories" not in tables:
        raise WrongSchema(path, "no 'memories' table: this is an SQLite file, but not an Ora memory database")
    if "WITHOUT ROWID" in " ".join(tables["memories"].upper().split()):
        raise WrongSchema(path, "the 'memories' table is WITHOUT ROWID, which this version cannot page through")
    columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(memories)"))
    missing = tuple(c for c in MEMORY_COLUMNS if c not in columns)
    lacking = sorted(REQUIRED_MEMORY_COLUMNS - set(columns))
    if lacking:
        raise WrongSchema(path, f"the 'memories' table lacks required columns: {', '.join(lacking)}")
    extra = tuple(c for c in columns if c not in MEMORY_COLUMNS)
    indexed = {row[1] for row in conn.execute("PRAGMA index_list(memories)")}
    index_columns = set()
    for name in indexed:
        cols = [r[2] for r in conn.execute(f'PRAGMA index_info("{name}")')]
        if len(cols) >= 1:
            index_columns.add(cols[0])
    missing_idx = tuple(
        name for name, col in SEED_INDEXES.items() if name not in indexed and col not in index_columns
    )
    has_checks = "CHECK" in tables["memories"].upper()
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    warnings: list[str] = []
    if missing:
        warnings.append(f"missing columns in memories: {', '.join(missing)} (shown as empty)")
    if extra:
        warnings.append(f"extra columns in memories: {', '.join(extra)} (kept, not shown)")
    if "task_context" not in tables:
        warnings.append("no task_context table (normal for agents that were not spawned for a task)")
    if missing_idx:
        warnings.append(f"missing indexes: {', '.join(missing_idx)} (queries will be slower)")
    if not has_checks:
        warnings.append("memories has no CHECK constraints (legacy file): out-of-range values are shown as found")
    return SchemaReport(
        path=path,
        memory_columns=columns,
        missing_columns=missing,
        extra_columns=extra,
        has_task_context="task_context" in tables,
        missing_indexes=missing_idx,
        has_checks=has_checks,
        journal_mode=journal,
        warnings=tuple(warnings),
    )


def _as_file_error(path: str, exc: sqlite3.DatabaseError) -> Exception:
    from .connection import translate

    error = translate(path, exc)
    return error if isinstance(error, FileProblem) else CorruptFile(path, str(exc))


def create_database(path: Path) -> None:
    """Create a new agent file with the seed's init SQL, verbatim, readable by its owner only.
    Refuses to overwrite."""
    if path.exists() and path.stat().st_size > 0:
        raise FileExistsError(f"{path}: already exists")
    touch_private(path)  # 0600 (its -wal/-shm follow), missing folders 0700, before SQLite writes a byte
    conn = sqlite3.connect(path)
    try:
        conn.executescript(INIT_SQL)
        conn.commit()
    finally:
        conn.close()


def check_shape(path: Path) -> SchemaReport:
    """Open ``path`` read-only (creating nothing beside it) and run :func:`inspect`.

    Raises the ``FileProblem`` naming the file when it is not an Ora memory database.
    """
    from .connection import connect_readonly, translate

    sniff_file(path)
    try:
        conn = connect_readonly(Path(path), timeout=5)
    except sqlite3.Error as exc:
        raise translate(path, exc) from exc
    try:
        return inspect(conn, path)
    finally:
        conn.close()

