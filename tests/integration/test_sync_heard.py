"""A sync in a process that holds the file open pushes from the change feed: only the memories
the feed heard changing since the last sync are compared with what was synced, and whatever the
feed cannot vouch for falls back to the pass over every row."""

from __future__ import annotations

from pathlib import Path

import pytest

from .sync_support import Machine, failed_sync, server_rows
from .sync_support import agent_sql as _raw

MEMORIES = 300


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine.with_memories(tmp_path, MEMORIES)


def test_a_window_open_on_the_file_syncs_only_what_its_feed_heard(pg_url: str, machine: Machine,
                                                                  fingerprinted: list[int]) -> None:
    with machine.store() as window:  # the window (or a library user) holds the file open
        window.list(limit=1)
        assert machine.sync(pg_url).pushed == MEMORIES  # the first sync: every row, one pass
        # The next one compares the rows the first one marked synced (its own writes, heard), no more.
        assert machine.sync(pg_url).pushed == 0
        _raw(machine.path, "UPDATE memories SET content = 'edited by the agent' WHERE id = 'm0007'")
        _raw(machine.path, "INSERT INTO memories (id, content, created_at, updated_at) "
             "VALUES ('agent-new', 'written by the agent', datetime('now'), datetime('now'))")
        window.update("m0100", importance=9)
        fingerprinted[0] = 0
        result = machine.sync(pg_url)
        assert result.pushed == 3
        assert fingerprinted[0] < 50, "the whole file was fingerprinted again"
        rows = server_rows(pg_url)
        assert rows["m0007"]["content"] == "edited by the agent" and "agent-new" in rows
        assert rows["m0100"]["importance"] == 9
    # Nobody holds the file open between these syncs: nothing heard the agent, so every row is compared.
    machine.sync(pg_url)
    _raw(machine.path, "UPDATE memories SET content = 'edited with no window open' WHERE id = 'm0200'")
    fingerprinted[0] = 0
    assert machine.sync(pg_url).pushed == 1
    assert fingerprinted[0] >= MEMORIES
    assert server_rows(pg_url)["m0200"]["content"] == "edited with no window open"


def test_a_failed_sync_leaves_the_next_one_to_compare_every_row(pg_url: str, machine: Machine,
                                                                fingerprinted: list[int], monkeypatch) -> None:
    with machine.store() as window:
        window.list(limit=1)
        machine.sync(pg_url)
        _raw(machine.path, "UPDATE memories SET content = 'edited before a failed sync' WHERE id = 'm0003'")
        failed_sync(machine, pg_url, monkeypatch)
        fingerprinted[0] = 0
        machine.sync(pg_url)
        assert fingerprinted[0] >= MEMORIES
        assert server_rows(pg_url)["m0003"]["content"] == "edited before a failed sync"
