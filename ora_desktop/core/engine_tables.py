"""Every plain ``ora_desktop_*`` table the engine adds to an agent's file: its DDL, the tables'
schema version, and the ordered migrations that bring an older file's tables up to it.

Nothing here runs on open or on a read (contract 2). At a store's first write,
:func:`prepare` reads the version kept in ``ora_desktop_state`` (key ``engine.schema_version``;
a file holding engine tables but no version is version 1, as every file written before versions
existed), refuses a file whose tables a newer ora-desktop wrote, and runs the migrations from its
version up to :data:`VERSION` inside that write's transaction. A table is created only by the
write that needs it (:func:`create`), which also records the version.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import FileProblem

#: The version of the tables below. 1: every file before versions (no version row). 2: sync keeps
#: a clock offset and a push id per server, a baseline per synced row and a conflicts log. 3: the
#: journal names who made each step (``actor``: ``mcp:<client>``, ``library``; NULL for a person).
#: 4: a journal step can be undone and redone (``undone``: 1 while it is undone).
VERSION = 4
VERSION_KEY = "engine.schema_version"

STATE = "ora_desktop_state"
#: The ``STATE`` key marking an undo, redo or restore in chunks not finished (operations/chunked_undo.py).
UNFINISHED_STEP = "undo.pending"
TRASH = "ora_desktop_trash"
TRASH_LINKS = "ora_desktop_trash_links"
JOURNAL = "ora_desktop_journal"
DECAY_UNDO = "ora_desktop_decay_undo"
REVIEW = "ora_desktop_review"
ORIGINALS = "ora_desktop_original_bytes"
SYNC = "ora_desktop_sync"
SYNC_TOMBSTONES = "ora_desktop_sync_tombstones"
SYNC_ROWS = "ora_desktop_sync_rows"
SYNC_CONFLICTS = "ora_desktop_sync_conflicts"
PINS = "ora_desktop_pins"
LINKS = "ora_desktop_links"
MARK_REMOVALS = "ora_desktop_mark_removals"
SYNC_MARKS = "ora_desktop_sync_marks"

#: Each table's statements, as version :data:`VERSION` creates it.
DDL: dict[str, tuple[str, ...]] = {
    STATE: ('CREATE TABLE IF NOT EXISTS "ora_desktop_state" ("key" TEXT NOT NULL PRIMARY KEY, "value" TEXT NOT NULL)',),
    TRASH: (
        'CREATE TABLE IF NOT EXISTS "ora_desktop_trash" ("id" INTEGER NOT NULL PRIMARY KEY, "memory_id" TEXT NOT '
        'NULL, "deleted_at" TEXT NOT NULL, "reason" TEXT NOT NULL, "batch" TEXT NOT NULL, "row_json" TEXT NOT NULL)',
        'CREATE INDEX IF NOT EXISTS "trashrow_memory_id" ON "ora_desktop_trash" ("memory_id")',
        'CREATE INDEX IF NOT EXISTS "trashrow_batch" ON "ora_desktop_trash" ("batch")',
    ),
    TRASH_LINKS: (
        'CREATE TABLE IF NOT EXISTS "ora_desktop_trash_links" ("id" INTEGER NOT NULL PRIMARY KEY, "batch" TEXT NOT '
        'NULL, "memory_id" TEXT NOT NULL, "related_before" TEXT, "related_after" TEXT, "superseded_before" TEXT, '
        '"superseded_after" TEXT)',
        'CREATE INDEX IF NOT EXISTS "trashlinkrow_batch" ON "ora_desktop_trash_links" ("batch")',
    ),
    JOURNAL: (
        f"CREATE TABLE IF NOT EXISTS {JOURNAL} (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, "
        "kind TEXT NOT NULL, initiator TEXT NOT NULL, label TEXT NOT NULL, undo TEXT NOT NULL, after TEXT NOT NULL, "
        "actor TEXT, undone INTEGER NOT NULL DEFAULT 0)",
    ),
    DECAY_UNDO: (f"CREATE TABLE IF NOT EXISTS {DECAY_UNDO} (rid INTEGER PRIMARY KEY, id, health, since)",),
    REVIEW: (
        f"CREATE TABLE IF NOT EXISTS {REVIEW} (\n    reviewer TEXT NOT NULL,\n    memory_id TEXT NOT NULL,\n"
        "    version TEXT,\n    reviewed_at TEXT,\n    note TEXT,\n    flagged_at TEXT,\n"
        "    via_all INTEGER NOT NULL DEFAULT 0,\n    PRIMARY KEY (reviewer, memory_id)\n)",
    ),
    ORIGINALS: (
        f"CREATE TABLE IF NOT EXISTS {ORIGINALS} (id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, "
        "column_name TEXT NOT NULL, original BLOB NOT NULL, repaired_at TEXT NOT NULL)",
    ),
    SYNC: (
        f"CREATE TABLE IF NOT EXISTS {SYNC} (server_id TEXT PRIMARY KEY, server TEXT NOT NULL, "
        "site TEXT NOT NULL, agent TEXT NOT NULL, last_pull INTEGER NOT NULL DEFAULT 0, tomb_mark TEXT, "
        "last_sync TEXT, pushed INTEGER NOT NULL DEFAULT 0, pulled INTEGER NOT NULL DEFAULT 0, "
        "conflicts INTEGER NOT NULL DEFAULT 0, clock_offset REAL, push_id TEXT)",
    ),
    SYNC_TOMBSTONES: (
        f"CREATE TABLE IF NOT EXISTS {SYNC_TOMBSTONES} (memory_id TEXT PRIMARY KEY, deleted_at TEXT NOT NULL)",
    ),
    SYNC_ROWS: (
        f"CREATE TABLE IF NOT EXISTS {SYNC_ROWS} (server_id TEXT NOT NULL, memory_id TEXT NOT NULL, "
        "fingerprint TEXT NOT NULL, updated_at TEXT, access_count INTEGER, last_accessed_at TEXT, "
        "health_score REAL, PRIMARY KEY (server_id, memory_id)) WITHOUT ROWID",
    ),
    SYNC_CONFLICTS: (
        f"CREATE TABLE IF NOT EXISTS {SYNC_CONFLICTS} (id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, "
        "decided_at TEXT NOT NULL, kind TEXT NOT NULL, winner TEXT NOT NULL, basis TEXT NOT NULL, trash_id INTEGER)",
    ),
    PINS: (
        f"CREATE TABLE IF NOT EXISTS {PINS} (memory_id TEXT PRIMARY KEY, pinned_at TEXT NOT NULL, pinned_by TEXT)",
    ),
    LINKS: (
        f"CREATE TABLE IF NOT EXISTS {LINKS} (source TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL, "
        "created_at TEXT NOT NULL, PRIMARY KEY (source, target, type))",
    ),
    # When a pin or typed link was removed here (kind "pin"/"link", key: see core/marks.py), so
    # sync can tell a later removal from an earlier one.
    MARK_REMOVALS: (
        f"CREATE TABLE IF NOT EXISTS {MARK_REMOVALS} (kind TEXT NOT NULL, key TEXT NOT NULL, "
        "removed_at TEXT NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID",
    ),
    # The pins and typed links each sync server held after this file's last sync with it.
    SYNC_MARKS: (
        f"CREATE TABLE IF NOT EXISTS {SYNC_MARKS} (server_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, "
        "PRIMARY KEY (server_id, kind, key)) WITHOUT ROWID",
    ),
}


@dataclass(frozen=True, slots=True)
class AddColumn:
    """A migration step: add a column to a table, where the table exists and lacks it."""

    table: str
    column: str
    kind: str


#: version -> the steps that bring tables of version-1 to it, in order.
MIGRATIONS: dict[int, tuple[AddColumn, ...]] = {
    2: (AddColumn(SYNC, "clock_offset", "REAL"), AddColumn(SYNC, "push_id", "TEXT")),
    3: (AddColumn(JOURNAL, "actor", "TEXT"),),
    4: (AddColumn(JOURNAL, "undone", "INTEGER NOT NULL DEFAULT 0"),),
}


class NewerTables(FileProblem):
    """The file's engine tables were written by a newer ora-desktop: this one does not write to it."""


def _existing(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ora\\_desktop\\_%' "
                        "ESCAPE '\\'").fetchall()
    return {r[0] for r in rows}


def version_of(conn: sqlite3.Connection) -> int | None:
    """The file's engine tables' version: ``None`` without engine tables, 1 for tables without a version row."""
    existing = _existing(conn)
    if not existing:
        return None
    if STATE in existing:
        row = conn.execute(f'SELECT value FROM "{STATE}" WHERE key = ?', (VERSION_KEY,)).fetchone()
        if row is not None:
            try:
                return int(row[0])
            except (TypeError, ValueError):
                return VERSION + 1  # not a version this one wrote: do not guess
    return 1


def unfinished_step(conn: sqlite3.Connection) -> dict | None:
    """The mark of an undo, redo or restore written in chunks and not finished (``verb``,
    ``label``, ``run``, ``host``, ``pid``, ``at``), or ``None`` (none, or a file we cannot read it from)."""
    try:
        if STATE not in _existing(conn):
            return None
        row = conn.execute(f'SELECT value FROM "{STATE}" WHERE key = ?', (UNFINISHED_STEP,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))
    except (sqlite3.Error, TypeError, ValueError):
        return None


def prepare(conn: sqlite3.Connection, path: str | Path) -> int | None:
    """Check and migrate the file's engine tables (inside the first write's transaction).

    Raises :class:`NewerTables` for tables of a newer version (nothing is written). Returns the
    version the tables now have (``None`` when the file has none yet).
    """
    version = version_of(conn)
    if version is None or version == VERSION:
        return version
    if version > VERSION:
        raise NewerTables(path, f"its ora_desktop_* tables were written by a newer ora-desktop (version {version}; "
                                f"this one knows up to {VERSION}); upgrade ora-desktop to change this file "
                                "(reading it works); nothing was changed")
    existing = _existing(conn)
    for target in range(version + 1, VERSION + 1):
        for step in MIGRATIONS.get(target, ()):
            if step.table not in existing:
                continue
            columns = {r[1] for r in conn.execute(f'PRAGMA table_info("{step.table}")')}
            if step.column not in columns:
                conn.execute(f'ALTER TABLE "{step.table}" ADD COLUMN {step.column} {step.kind}')
    _stamp(conn)
    return VERSION


def create(conn: sqlite3.Connection, names: Iterable[str], path: str | Path = "") -> None:
    """Create tables (inside the write that needs them), and record the version they have. Tables
    another program added meanwhile are checked and migrated first (:func:`prepare`)."""
    prepare(conn, path)
    for name in names:
        for statement in DDL[name]:
            conn.execute(statement)
    _stamp(conn)


def _stamp(conn: sqlite3.Connection) -> None:
    for statement in DDL[STATE]:
        conn.execute(statement)
    conn.execute(f'INSERT OR REPLACE INTO "{STATE}" (key, value) VALUES (?, ?)', (VERSION_KEY, str(VERSION)))
