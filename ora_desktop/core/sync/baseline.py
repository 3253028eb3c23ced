"""What this file last synced of each memory: a content fingerprint and the usage values.

A memory travels when it differs from what was last synced, whatever ``sync_status`` says: an
agent's raw ``UPDATE`` that leaves ``sync_status`` alone is still pushed, and a touch (which
never marks a row pending) still reaches other machines. The baseline lives in a plain
``ora_desktop_sync_rows`` table, one row per (server, memory).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .. import engine_tables
from ..fingerprint import row_fingerprint
from ..rawsql import all_rows, run_sql
from ..writes import IDS_JSON
from .server import COLUMNS

if TYPE_CHECKING:
    from ..store import Store

TABLE = engine_tables.SYNC_ROWS
#: The columns whose change is an edit (a content conflict when both sides change them).
CONTENT: tuple[str, ...] = ("id", "content", "type", "importance", "related_to", "superseded_by", "created_at",
                            "updated_at", "expires_at")
#: The usage columns, merged rather than compared (see :mod:`.usage`).
USAGE: tuple[str, ...] = ("access_count", "last_accessed_at", "health_score")
_CONTENT_AT = tuple(COLUMNS.index(c) for c in CONTENT)
_USAGE_AT = tuple(COLUMNS.index(c) for c in USAGE)
FUNCTION = "ora_sync_fingerprint"


def content(values: Sequence[Any]) -> tuple[Any, ...]:
    """The content columns of a row given in :data:`COLUMNS` order."""
    return tuple(values[i] for i in _CONTENT_AT)


def usage(values: Sequence[Any]) -> tuple[Any, ...]:
    """The usage columns of a row given in :data:`COLUMNS` order."""
    return tuple(values[i] for i in _USAGE_AT)


def fingerprint(values: Sequence[Any]) -> str:
    """The content fingerprint of a row given in :data:`COLUMNS` order."""
    return row_fingerprint(content(values))


def install(store: Store) -> None:
    """Register the fingerprint as an SQL function on this thread's connection to ``store``."""
    store.db.connection().create_function(FUNCTION, len(CONTENT), lambda *v: row_fingerprint(v),
                                          deterministic=True)


def fingerprint_sql(store: Store, alias: str = "m") -> str:
    """SQL computing a memory's content fingerprint (columns the file lacks count as NULL)."""
    args = ", ".join(f"{alias}.{c}" if c in store.columns else "NULL" for c in CONTENT)
    return f"{FUNCTION}({args})"


def changed_sql(store: Store, alias: str = "m", base: str = "b") -> str:
    """SQL true when memory ``alias`` differs from its baseline ``base`` (or has none), or is pending."""
    status = f"({alias}.sync_status = 'pending' OR {alias}.sync_status IS NULL)"
    usage_cols = [c for c in USAGE if c in store.columns]
    differs = " OR ".join([f"{base}.fingerprint IS NOT {fingerprint_sql(store, alias)}",
                           *(f"{alias}.{c} IS NOT {base}.{c}" for c in usage_cols)])
    return f"({status} OR {base}.memory_id IS NULL OR {differs})"


def ready(store: Store) -> bool:
    return store.has_table(TABLE)


def adopt_synced(store: Store, server_id: str) -> int:
    """Take every ``synced`` memory without a baseline as synced as it is (a file synced before
    baselines existed); inside a write."""
    install(store)
    cols = ", ".join(f"m.{c}" if c in store.columns else "NULL" for c in ("updated_at", *USAGE))
    return run_sql(store,
        f"INSERT OR IGNORE INTO {TABLE} (server_id, memory_id, fingerprint, updated_at, {', '.join(USAGE)}) "
        f"SELECT ?, m.id, {fingerprint_sql(store)}, {cols} FROM memories m WHERE m.sync_status = 'synced'",
        (server_id,),
    ).rowcount


def has_rows(store: Store, server_id: str) -> bool:
    return bool(all_rows(store, f"SELECT 1 FROM {TABLE} WHERE server_id = ? LIMIT 1", (server_id,)))


def load(store: Store, server_id: str, ids: Sequence[str]) -> dict[str, tuple[str, Any, tuple[Any, ...]]]:
    """id -> (fingerprint, updated_at, usage) of the baselines of ``ids``."""
    if not ids or not store.has_table(TABLE):
        return {}
    rows = all_rows(store,
        f"SELECT memory_id, fingerprint, updated_at, {', '.join(USAGE)} FROM {TABLE} "
        f"WHERE server_id = ? AND memory_id IN {IDS_JSON}", (server_id, json.dumps(list(ids))))
    return {r[0]: (r[1], r[2], tuple(r[3:])) for r in rows}


def record(store: Store, server_id: str, rows: Iterable[Sequence[Any]]) -> None:
    """Remember rows (in :data:`COLUMNS` order) as what the server now holds (inside a write)."""
    at = COLUMNS.index("updated_at")
    store.db.cursor().executemany(
        f"INSERT OR REPLACE INTO {TABLE} (server_id, memory_id, fingerprint, updated_at, {', '.join(USAGE)}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(server_id, v[0], fingerprint(v), v[at], *usage(v)) for v in rows],
    )


def forget(store: Store, server_id: str, ids: Sequence[str]) -> None:
    """Drop the baselines of ``ids`` (the server holds a tombstone for them; inside a write)."""
    if ids and store.has_table(TABLE):
        run_sql(store, f"DELETE FROM {TABLE} WHERE server_id = ? AND memory_id IN {IDS_JSON}",
                (server_id, json.dumps(list(ids))))
