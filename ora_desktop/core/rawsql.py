"""SQL on a store's connection, for the engine's own modules only.

`Store` keeps its statement runner private; the engine's modules (operations, jobs, sync, the
trash) reach it through these two functions. The faces never import this module: an
import-linter contract in `pyproject.toml` forbids it, and `tests/unit/test_layers.py` finds no
SQL text in `cli/`, `gui/`, `mcp/` or `daemon.py` (ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import Store


def run_sql(store: Store, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
    """Run one statement on this thread's connection of ``store`` (errors name the file)."""
    return store._execute(sql, params)  # noqa: SLF001 (the one doorway to the private runner)


def all_rows(store: Store, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    """Every row of one statement (errors met while stepping are translated too)."""
    return store._fetch_all(sql, params)  # noqa: SLF001
