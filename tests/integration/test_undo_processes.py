"""Undo across processes: a step journalled by one process is taken back by ``ora-desktop undo`` in another."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import raw_seed_db
from tests.unit.test_operations_undo import rows

from .test_backup_processes import cli

pytestmark = pytest.mark.slow

EDITOR = r"""
import sys
from ora_desktop.core import open_store
from ora_desktop.core.operations import edits
with open_store(sys.argv[1]) as store:
    edits.delete(store, ["b"], "tidy")
    edits.edit(store, "a", {"importance": 1})
"""


def test_cli_undoes_another_process_steps_newest_first_around_an_agent_write(ora_home: Path) -> None:
    db = raw_seed_db(ora_home / "sites" / "shop" / "ora.site.db",
                     [("a", "Deploys go out from main", "fact", 8), ("b", "Cache in src/lib", "fact", 3)])
    start = rows(db)
    subprocess.run([sys.executable, "-c", EDITOR, str(db)], check=True, timeout=120)
    with sqlite3.connect(db) as conn:  # an agent adds a memory meanwhile: not ours, left alone
        conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                     "VALUES ('agent-1', 'from the agent', datetime('now'), datetime('now'))")
    first = cli("undo", "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert "edit importance of a" in first.stdout
    second = cli("undo", "--db", str(db))
    assert second.returncode == 0 and "delete 1 memory" in second.stdout
    assert [r for r in rows(db) if r[0] != "agent-1"] == start
    third = cli("undo", "--db", str(db))
    assert third.returncode == 2 and "nothing to undo" in third.stderr and "Traceback" not in third.stderr
