"""What changed in a file since its last sync with a server, from the file's write-ahead log.

A process that does not hold the file open between syncs (the command line, the daemon's
scheduled sync) has no change feed to ask (:mod:`.heard`). The file's log still holds every
commit since the last sync while some program kept the file open (an agent, an MCP server): a
persisted log cursor (:func:`..wallog.cursor_now`), taken at the start of each sync before it
reads or writes anything and kept with the sync state (``ora_desktop_state``, one key per server)
once the sync succeeds, lets the next one read the rowids on the table pages written since
(:func:`..wallog.rows_since`) and compare only those memories with what was synced. A commit
landing after the cursor is taken is read by this sync, or by the next one from that cursor.

Whenever the log cannot vouch — no place kept (a first sync with a server, the last one
failed), another file at that path (a restore), a column added to ``memories``, the log gone,
restarted more than once or truncated since, an overflow page rewritten in place, more log than
is worth reading — the answer is ``None``: the pass over every row. Our own writes after the
place (pull, marks, baselines) are read again next time: harmless, bounded by what that sync
wrote.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .. import engine_tables, wallog
from ..rawsql import all_rows, run_sql

if TYPE_CHECKING:
    from ..store import Store

_STATE = engine_tables.STATE
_KEY = "sync.log_cursor.{}"


def now(store: Store) -> str | None:
    """What :func:`keep` keeps: the file's identity, the ``memories`` table's definition, then
    the log's place at its last published commit (None: no usable log). Take it before the sync
    reads or writes anything else."""
    place = {"file": _identity(store.path), "table": _definition(store)}
    cursor = wallog.cursor_now(store.path)
    return None if cursor is None else json.dumps({**place, "wal": cursor.as_list()})


def changed(store: Store, server_id: str) -> frozenset[int] | None:
    """Rowids of the memories that may have changed since the last successful sync of this file
    with ``server_id`` took its place (a superset: every row on a table page written since);
    None when the log cannot vouch (see the module docstring). Call after :func:`now`."""
    saved = _load(store, server_id)
    # A column added with a default changes every row's values and writes none of its pages.
    if saved is None or saved.get("file") != _identity(store.path) or saved.get("table") != _definition(store):
        return None
    rows = wallog.rows_since(store.path, wallog.Cursor.from_list(saved.get("wal")))
    return None if rows is None else frozenset(rows.rowids)


def forget(store: Store, server_id: str) -> None:
    """Drop the kept cursor (inside the sync's first write): a sync that fails leaves none."""
    if store.has_table(_STATE):
        run_sql(store, f"DELETE FROM {_STATE} WHERE key = ?", (_KEY.format(server_id),))


def keep(store: Store, server_id: str, value: str | None) -> None:
    """Keep :func:`now`'s value for the next sync (inside the successful sync's last write)."""
    if value is not None:
        run_sql(store, f"INSERT OR REPLACE INTO {_STATE} (key, value) VALUES (?, ?)", (_KEY.format(server_id), value))


def _load(store: Store, server_id: str) -> dict | None:
    if not store.has_table(_STATE):
        return None
    rows = all_rows(store, f"SELECT value FROM {_STATE} WHERE key = ?", (_KEY.format(server_id),))
    try:
        value = json.loads(rows[0][0]) if rows else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _definition(store: Store) -> str | None:
    rows = all_rows(store, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memories'")
    return rows[0][0] if rows else None


def _identity(path: Path) -> list[int]:
    """The file's device and inode: a file renamed over it (a restore) is another file."""
    st = os.stat(path)
    return [st.st_dev, st.st_ino]


__all__ = ["changed", "forget", "keep", "now"]
