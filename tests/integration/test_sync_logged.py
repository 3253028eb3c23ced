"""A sync in a process that does not hold the file open (the command line, the daemon) follows
the file's write-ahead log from the last sync's place in it, while another program keeps the file
open: only the memories on the pages written since are compared with what was synced; whenever
the log cannot vouch, every row is (real PostgreSQL, agents in other processes)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from ora_desktop.core.sync import sync_file

from .sync_support import Machine, failed_sync, server_rows
from .sync_support import agent_sql as agent

pytestmark = pytest.mark.slow  # a real server

MEMORIES = 1000
FEW = 200  # far fewer rows than the file holds: a page or two, and the last sync's own writes


def _holder(path: Path) -> sqlite3.Connection:
    """Another program holding the file open (an agent, an MCP server): the log outlives each sync."""
    conn = sqlite3.connect(path)
    conn.execute("SELECT count(*) FROM memories").fetchone()
    return conn


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine.with_memories(tmp_path, MEMORIES)


@pytest.fixture
def held(machine: Machine, pg_url: str) -> Iterator[sqlite3.Connection]:
    """The file held open by another program, synced twice (the second reads the first's writes)."""
    with closing(_holder(machine.path)) as conn:
        assert machine.sync(pg_url).pushed == MEMORIES
        assert machine.sync(pg_url).pushed == 0
        yield conn


def test_an_agents_edit_and_insert_are_pushed_from_the_log(pg_url: str, machine: Machine, held,
                                                           fingerprinted: list[int]) -> None:
    agent(machine.path, "UPDATE memories SET content = 'edited by the agent' WHERE id = 'm0500'")
    agent(machine.path, "INSERT INTO memories (id, content, created_at, updated_at) "
          "VALUES ('agent-new', 'written by the agent', datetime('now'), datetime('now'))")
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 2
    assert fingerprinted[0] < FEW, f"{fingerprinted[0]} rows fingerprinted: the whole file again"
    rows = server_rows(pg_url)
    assert rows["m0500"]["content"] == "edited by the agent" and "agent-new" in rows


def test_nothing_changed_compares_only_what_the_last_sync_wrote(pg_url: str, machine: Machine, held,
                                                               fingerprinted: list[int]) -> None:
    agent(machine.path, "UPDATE memories SET importance = 9 WHERE id = 'm0123'")
    assert machine.sync(pg_url).pushed == 1
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 0
    assert fingerprinted[0] < FEW, f"{fingerprinted[0]} rows fingerprinted with nothing changed"


def test_with_nobody_holding_the_file_every_row_is_compared(pg_url: str, machine: Machine,
                                                           fingerprinted: list[int]) -> None:
    machine.sync(pg_url)
    machine.sync(pg_url)  # closed: the log is checkpointed into the file and deleted
    agent(machine.path, "UPDATE memories SET content = 'edited with nobody holding the file' WHERE id = 'm0042'")
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 1
    assert fingerprinted[0] >= MEMORIES
    assert server_rows(pg_url)["m0042"]["content"] == "edited with nobody holding the file"


def test_a_log_truncated_twice_since_the_last_sync_means_every_row(pg_url: str, machine: Machine, held,
                                                                  fingerprinted: list[int]) -> None:
    for n in (1, 2):
        agent(machine.path, "UPDATE memories SET content = ? WHERE id = ?", f"edit {n}", f"m000{n}")
        held.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    agent(machine.path, "UPDATE memories SET content = 'edit 3' WHERE id = 'm0003'")
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 3
    assert fingerprinted[0] >= MEMORIES
    rows = server_rows(pg_url)
    assert [rows[f"m000{n}"]["content"] for n in (1, 2, 3)] == ["edit 1", "edit 2", "edit 3"]


def test_an_edit_only_in_a_long_memorys_overflow_page_is_pushed(pg_url: str, machine: Machine,
                                                                fingerprinted: list[int]) -> None:
    filler = " ".join(f"word{i}" for i in range(2000))
    with machine.store() as store:
        store.add_many([{"id": "long", "content": filler + " zebrafish", "type": "fact"}])
    with closing(_holder(machine.path)):
        machine.sync(pg_url)
        machine.sync(pg_url)
        # The same length, past the leaf's part of the row: only its last overflow page is written.
        agent(machine.path, "UPDATE memories SET content = replace(content, 'zebrafish', 'jellyfish') "
              "WHERE id = 'long'")
        fingerprinted[0] = 0
        assert machine.sync(pg_url).pushed == 1
        assert fingerprinted[0] >= MEMORIES  # the log names no row for that page: every row compared
    assert server_rows(pg_url)["long"]["content"].endswith(" jellyfish")


def test_after_a_failed_sync_the_next_compares_every_row(pg_url: str, machine: Machine, held,
                                                        fingerprinted: list[int], monkeypatch) -> None:
    agent(machine.path, "UPDATE memories SET content = 'edited before a failed sync' WHERE id = 'm0003'")
    failed_sync(machine, pg_url, monkeypatch)
    agent(machine.path, "UPDATE memories SET content = 'edited after it' WHERE id = 'm0900'")
    fingerprinted[0] = 0
    machine.sync(pg_url)
    assert fingerprinted[0] >= MEMORIES
    rows = server_rows(pg_url)
    assert rows["m0003"]["content"] == "edited before a failed sync"
    assert rows["m0900"]["content"] == "edited after it"
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 0
    assert fingerprinted[0] < FEW  # and the one after follows the log again


EDITOR = """
import os, sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
n = 0
while not os.path.exists(sys.argv[2]):
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE memories SET content = ? WHERE id = ?", (f"edit {n}", f"m{n * 37 % 1000:04d}"))
        if n % 5 == 0:
            conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                         "VALUES (?, 'new', datetime('now'), datetime('now'))", (f"agent-{n}",))
        conn.execute("COMMIT")
        n += 1
        time.sleep(0.005)
    except sqlite3.OperationalError:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
"""


def test_syncs_while_an_agent_keeps_writing_miss_nothing(pg_url: str, machine: Machine, held,
                                                         tmp_path: Path) -> None:
    """Commits landing while a sync reads are pushed by it or by the next one, never by neither."""
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", EDITOR, str(machine.path), str(stop)])
    try:
        for _ in range(8):
            machine.sync(pg_url)
    finally:
        stop.touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0
    machine.sync(pg_url)
    here = {r[0]: r[1] for r in held.execute("SELECT id, content FROM memories")}
    there = {i: row["content"] for i, row in server_rows(pg_url).items() if not row["deleted"]}
    assert len(here) > MEMORIES  # the agent wrote while the syncs ran
    assert there == here


def test_a_column_added_with_a_default_is_pushed_for_every_row(pg_url: str, tmp_path: Path) -> None:
    """``ALTER TABLE … ADD COLUMN … DEFAULT`` changes every row and writes none of their pages."""
    path = tmp_path / "anwe-sh" / "ora.site.db"
    path.parent.mkdir()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT, created_at TEXT, updated_at TEXT, "
                     "synced_at TEXT, sync_status TEXT DEFAULT 'pending')")
        conn.executemany("INSERT INTO memories (id, content, updated_at) VALUES (?, ?, '2026-01-01 00:00:00')",
                         [(f"m{i}", f"memory {i}") for i in range(50)])
    with closing(_holder(path)):
        assert sync_file(path, pg_url).pushed == 50
        sync_file(path, pg_url)
        agent(path, "ALTER TABLE memories ADD COLUMN importance INTEGER DEFAULT 9")
        assert sync_file(path, pg_url).pushed == 50
    assert {row["importance"] for row in server_rows(pg_url, agent="ora").values()} == {9}


def test_edits_on_both_sides_of_a_restart_of_the_log_are_pushed(pg_url: str, machine: Machine, held) -> None:
    agent(machine.path, "UPDATE memories SET content = 'before the restart' WHERE id = 'm0100'")
    held.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()  # the next commit starts the log again
    agent(machine.path, "UPDATE memories SET content = 'after the restart' WHERE id = 'm0700'")
    assert machine.sync(pg_url).pushed == 2
    rows = server_rows(pg_url)
    assert (rows["m0100"]["content"], rows["m0700"]["content"]) == ("before the restart", "after the restart")


def test_an_edit_then_a_vacuum_is_pushed(pg_url: str, machine: Machine, held) -> None:
    agent(machine.path, "DELETE FROM memories WHERE id BETWEEN 'm0010' AND 'm0400'")
    agent(machine.path, "UPDATE memories SET content = 'edited before a vacuum' WHERE id = 'm0900'")
    agent(machine.path, "VACUUM")  # every page written again, rows moved
    machine.sync(pg_url)
    assert server_rows(pg_url)["m0900"]["content"] == "edited before a vacuum"


def test_a_dry_run_leaves_the_place_in_the_log_alone(pg_url: str, machine: Machine, held,
                                                    fingerprinted: list[int]) -> None:
    agent(machine.path, "UPDATE memories SET content = 'edited before a dry run' WHERE id = 'm0321'")
    assert sync_file(machine.path, pg_url, dry_run=True).pushed == 1  # (its count compares every row)
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 1
    assert fingerprinted[0] < FEW
    assert server_rows(pg_url)["m0321"]["content"] == "edited before a dry run"
