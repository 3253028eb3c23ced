"""A memory exactly as stored: every column's value and SQLite storage class, for a raw view.

DB Browser for SQLite shows every stored value; so does the window's *Stored values* dialog
through :func:`stored_values`. Edits go through :func:`ora_desktop.core.operations.edits.edit`
(validated, journalled, undoable) for the columns in :data:`EDITABLE_FIELDS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from ..rawsql import all_rows
from ..validation import EDITABLE_FIELDS, check_id

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True, slots=True)
class StoredValue:
    """One column of a row: its name, SQLite storage class, value, and whether a person may edit it."""

    column: str
    storage: str  # 'text', 'integer', 'real', 'blob' or 'null' (SQLite's typeof)
    value: Any
    editable: bool


def stored_values(store: Store, memory_id: str) -> list[StoredValue]:
    """Every column of ``memory_id``'s row in the file's column order (one statement)."""
    memory_id = check_id(memory_id)
    columns = list(store.columns)
    select = ", ".join(f'typeof("{c}"), "{c}"' for c in columns)
    rows = all_rows(store, f"SELECT {select} FROM memories WHERE id = ?", [memory_id])
    if not rows:
        raise NotFound(f"{store.path}: no memory with id {memory_id!r}")
    row = rows[0]
    return [StoredValue(c, row[2 * i], row[2 * i + 1], c in EDITABLE_FIELDS) for i, c in enumerate(columns)]
