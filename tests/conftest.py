"""Fixtures shared by every test: an isolated ORA_HOME and app dirs, and seed-made files."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core.schema import INIT_SQL


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own ORA_HOME, cache, data and config folders (never the user's)."""
    root = tmp_path_factory.mktemp("env")
    for var, name in (("XDG_CACHE_HOME", "cache"), ("XDG_DATA_HOME", "data"),
                      ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state")):
        (root / name).mkdir()
        monkeypatch.setenv(var, str(root / name))
    (root / "ora").mkdir()
    monkeypatch.setenv("ORA_HOME", str(root / "ora"))
    monkeypatch.setenv("HOME", str(root))
    return root


@pytest.fixture
def ora_home(isolated_dirs: Path) -> Path:
    """The test's ORA_HOME folder (empty)."""
    return isolated_dirs / "ora"


def raw_seed_db(path: Path, rows: list[tuple] | None = None) -> Path:
    """Create a file with the seed's init SQL through plain sqlite3 and insert rows with the
    seed's own INSERT: rows are (id, content, type, importance)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(INIT_SQL)
    for row in rows or []:
        conn.execute(
            "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, datetime('now'), datetime('now'))",
            row,
        )
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def seed_db(ora_home: Path) -> Callable[..., Path]:
    """Factory: ``seed_db(rows, site="anwe-sh", agent="ora")`` makes a seed-SQL file in ORA_HOME."""

    def make(rows: list[tuple] | None = None, site: str = "anwe-sh", agent: str = "ora") -> Path:
        return raw_seed_db(ora_home / "sites" / site / f"{agent}.site.db", rows)

    return make


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL server for the whole session (started on first use, always stopped)."""
    from tests.pg_server import running_server

    with running_server() as server:
        yield server


@pytest.fixture
def pg_url(pg_server, request: pytest.FixtureRequest) -> str:
    """The URL of a fresh, empty database on the session's server (one per test)."""
    import re

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]
    return pg_server.new_database(name)
