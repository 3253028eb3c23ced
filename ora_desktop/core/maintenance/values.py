"""Check rules for values an agent should not have written: odd types, and bytes that are not UTF-8.

* **Odd values** — a number where a timestamp belongs (SQLite reads ``expires_at = 5`` as a
  Julian day in 4713 BC, so cleanup would delete the row), text where a number belongs (``'NaN'``
  health would decay to 0). Jobs leave such rows alone; ``check`` names them for a person.
* **Invalid UTF-8** — a text value whose bytes do not decode. Reads show it with U+FFFD
  replacement characters (:mod:`ora_desktop.core.decoding`); ``check`` reports each such value and
  ``check --repair`` rewrites it as valid UTF-8, first keeping the original bytes in the file's
  plain ``ora_desktop_original_bytes`` table (memory id, column, original bytes, when) so nothing
  is lost.
"""

from __future__ import annotations

from .. import engine_tables
from ..decoding import is_valid_utf8
from ..rawsql import run_sql
from ..store import Store

# A timestamp starts with a date; anything else (a number, "soon") is not taken at face value.
TIMESTAMP_SHAPE = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"
TIME_COLUMNS = ("last_accessed_at", "created_at", "updated_at", "expires_at", "synced_at")
NUMBER_COLUMNS = ("importance", "health_score", "access_count")
ORIGINALS = engine_tables.ORIGINALS
SAMPLE = 200


def looks_like_time(column: str) -> str:
    """SQL: the column holds text shaped like a timestamp (jobs compare only such values)."""
    return f"(typeof({column}) = 'text' AND {column} GLOB {TIMESTAMP_SHAPE})"


def is_number(column: str) -> str:
    """SQL: the column holds a number (not text that merely looks like one, such as ``'NaN'``)."""
    return f"typeof({column}) IN ('integer', 'real')"


def odd_value_rules(columns: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """name → (WHERE clause, description) for values of the wrong kind (for ``check``'s lint)."""
    rules = {}
    for col in TIME_COLUMNS:
        if col in columns:
            # Text SQLite can read as a time but not shaped like one: a number, read as a Julian day.
            rules[f"odd_{col}"] = (f"{col} IS NOT NULL AND {col} != '' AND NOT {looks_like_time(col)} "
                                   f"AND julianday({col}) IS NOT NULL",
                                   f"{col} holds a number, not a timestamp; jobs leave the row alone")
    for col in NUMBER_COLUMNS:
        if col in columns:
            rules[f"odd_{col}"] = (f"{col} IS NOT NULL AND NOT {is_number(col)}",
                                   f"{col} is not a number; jobs leave the row alone")
    return rules


def text_columns(store: Store) -> list[str]:
    """The memory columns that hold text (every column but the numeric ones)."""
    return [c for c in store.columns if c not in NUMBER_COLUMNS]


def invalid_utf8(store: Store) -> list[tuple[int, str, str, bytes]]:
    """(rowid, id shown, column, original bytes) of every text value whose bytes are not UTF-8."""
    cols = text_columns(store)
    blobs = ", ".join(f"CAST({c} AS BLOB)" for c in cols)
    found = []
    for rowid, *values in run_sql(store, f"SELECT rowid, {blobs} FROM memories"):
        for col, raw in zip(cols, values, strict=True):
            if raw is not None and not is_valid_utf8(raw):
                shown = values[cols.index("id")].decode("utf-8", "replace") if "id" in cols else str(rowid)
                found.append((rowid, shown, col, raw))
    return found


def lint_text(store: Store, findings: list[tuple[str, str]]) -> dict[str, int]:
    """``check``'s count of invalid UTF-8 values, with one finding per value (the first 200)."""
    bad = invalid_utf8(store)
    for _rowid, memory_id, col, _raw in bad[:SAMPLE]:
        findings.append((memory_id, f"{col} holds bytes that are not valid UTF-8"))
    return {"invalid_utf8": len(bad)}


def repair_text(store: Store, dry_run: bool) -> int:
    """Rewrite invalid UTF-8 values as valid text (U+FFFD for bad bytes), keeping the originals first.

    Runs in its own ``BEGIN IMMEDIATE`` transaction (or the caller's); returns how many values.
    """
    if dry_run:
        return len(invalid_utf8(store))
    with store.write():
        bad = invalid_utf8(store)
        if not bad:
            return 0
        store.create_engine_tables(ORIGINALS)
        for rowid, _shown, col, raw in bad:
            fixed = raw.decode("utf-8", "replace")
            run_sql(store, f"INSERT INTO {ORIGINALS} (memory_id, column_name, original, repaired_at) "
                          "VALUES (?, ?, ?, datetime('now'))",
                          (fixed if col == "id" else _id_text(store, rowid), col, raw))
            run_sql(store, f"UPDATE memories SET {col} = ? WHERE rowid = ?", (fixed, rowid))
    return len(bad)


def _id_text(store: Store, rowid: int) -> str:
    raw = run_sql(store, "SELECT CAST(id AS BLOB) FROM memories WHERE rowid = ?", (rowid,)).fetchone()[0]
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
