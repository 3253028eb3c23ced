"""Helpers for the search tests: small memory files with chosen rows, written like an agent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ora_desktop.core.schema import INIT_SQL

COLUMNS = ("id", "content", "type", "importance", "health_score", "superseded_by", "expires_at",
           "sync_status", "related_to", "created_at", "updated_at", "synced_at")


def make_file(path: Path, rows: list[dict]) -> Path:
    """A seed-schema file holding ``rows`` (dicts of columns; defaults like the seed's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    insert(conn, rows)
    conn.close()
    return path


def insert(conn: sqlite3.Connection, rows: list[dict]) -> None:
    for row in rows:
        row = {"type": "fact", "importance": 5, "created_at": "2025-01-10 10:00:00",
               "updated_at": row.get("created_at", "2025-01-10 10:00:00"), **row}
        names = [c for c in COLUMNS if c in row]
        conn.execute(f"INSERT INTO memories ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                     [row[c] for c in names])
    conn.commit()


def ids(result) -> list[str]:
    return [hit.memory.id for hit in result.hits]
