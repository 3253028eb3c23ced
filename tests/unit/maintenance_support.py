"""Helpers for the maintenance tests: files with rows at chosen times, in either timestamp format."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ora_desktop.core.schema import INIT_SQL


def ago(days: float = 0, iso: bool = False, now: datetime | None = None) -> str:
    """A UTC time ``days`` ago: ``YYYY-MM-DD HH:MM:SS``, or ``YYYY-MM-DDTHH:MM:SS.000Z`` if ``iso``."""
    when = (now or datetime.now(UTC)) - timedelta(days=days)
    return when.strftime("%Y-%m-%dT%H:%M:%S.000Z") if iso else when.strftime("%Y-%m-%d %H:%M:%S")


def make_db(path: Path, rows: list[dict[str, Any]], init_sql: str = INIT_SQL, written: datetime | None = None) -> Path:
    """A seed-schema file (made with the seed's SQL) holding ``rows`` (dicts of column values),
    created and updated at ``written`` unless a row says otherwise (default: now)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(init_sql)
    for row in rows:
        row = {"content": f"memory {row['id']}", "created_at": ago(0, now=written),
               "updated_at": ago(0, now=written), **row}
        cols = ", ".join(row)
        conn.execute(f"INSERT INTO memories ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    conn.commit()
    conn.close()
    return path


def column(path: Path, name: str) -> dict[str, Any]:
    """``{id: value}`` of one column, read with plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute(f"SELECT id, {name} FROM memories"))
    finally:
        conn.close()


def ids(path: Path, table: str = "memories", column_name: str = "id") -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute(f"SELECT {column_name} FROM {table}")}
    finally:
        conn.close()


def set_state(path: Path, key: str, value: str) -> None:
    """Write the engine's ``ora_desktop_state`` row directly (to fake an earlier run of this
    version, which records its tables' version with the table)."""
    from ora_desktop.core import engine_tables

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS ora_desktop_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT OR IGNORE INTO ora_desktop_state VALUES (?, ?)",
                 (engine_tables.VERSION_KEY, str(engine_tables.VERSION)))
    conn.execute("INSERT OR REPLACE INTO ora_desktop_state VALUES (?, ?)", (key, value))
    conn.commit()
    conn.close()


def changing_under_the_first_check(monkeypatch: pytest.MonkeyPatch, db: Path) -> list[int]:
    """The first integrity_check sees "damage" while another connection commits to the file (as
    a torn read did while an agent wrote); later checks read the file as it is."""
    from ora_desktop.core.maintenance import check

    real, calls = check.integrity, []

    def torn_once(store):
        calls.append(1)
        if len(calls) == 1:
            agent = sqlite3.connect(db)
            agent.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                          "VALUES ('late', 'an agent wrote this', datetime('now'), datetime('now'))")
            agent.commit()
            agent.close()
            return ["row 3 missing from index idx_memories_type", "wrong # of entries in index idx_memories_type"]
        return real(store)

    monkeypatch.setattr(check, "integrity", torn_once)
    return calls
