"""Another process writes while we read and write: no "database is locked", nothing seen twice
or lost. And a read-only session run as a real process leaves the file and its folder as they were."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ora_desktop import open_store
from tests.conftest import raw_seed_db

pytestmark = pytest.mark.slow

# An agent as the seed describes it: plain sqlite3 and the seed's own INSERT, in a loop.
AGENT = textwrap.dedent(
    """
    import sqlite3, sys, time, pathlib
    path, stop, ready = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    idle_after = int(sys.argv[4])  # stop writing (but keep the file open) after this many rows
    conn = sqlite3.connect(path, timeout=10)
    n = 0
    while not stop.exists():
        if n >= idle_after:
            time.sleep(0.01)
            continue
        conn.execute(
            "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
            "VALUES (?, ?, 'conversation', 5, datetime('now'), datetime('now'))",
            (f"agent-{n}", f"agent wrote memory {n}"),
        )
        conn.commit()
        n += 1
        if n == 20:
            ready.touch()
        time.sleep(0.002)
    conn.close()
    print(n)
    """
)


class Agent:
    """A second process inserting memories until told to stop."""

    def __init__(self, path: Path, tmp: Path, idle_after: int = 10**9) -> None:
        self.stop = tmp / "stop"
        self.ready = tmp / "ready"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", AGENT, str(path), str(self.stop), str(self.ready), str(idle_after)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 30
        while not self.ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"agent did not start: {self.proc.communicate()}")
            time.sleep(0.01)

    def finish(self) -> int:
        self.stop.touch()
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err  # the agent never hit "database is locked" either
        return int(out.strip())


def big_file(path: Path, rows: int, journal: str = "wal") -> Path:
    raw_seed_db(path)
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, datetime('now', ?), datetime('now', ?))",
        [(f"old-{i:05d}", f"memory {i}", ("fact", "task", "context")[i % 3], 1 + i % 10,
          f"-{i} minutes", f"-{i} minutes") for i in range(rows)],
    )
    conn.commit()
    if journal != "wal":
        conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.close()
    return path


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_long_read_while_another_process_inserts(tmp_path, journal):
    path = big_file(tmp_path / "agent.site.db", 20000, journal)
    agent = Agent(path, tmp_path)
    try:
        with open_store(path, readonly=True) as store:
            seen: list[str] = []
            for memory in store.iter_all(page=500, order_by="created_at"):
                seen.append(memory.id)
                if len(seen) % 2000 == 0:
                    time.sleep(0.05)  # a slow consumer: the agent keeps writing meanwhile
            changed = store.changed_externally()
    finally:
        written = agent.finish()
    assert written > 20
    old = [i for i in seen if i.startswith("old-")]
    assert len(old) == len(set(old)) == 20000  # every row present throughout, exactly once
    assert len(seen) == len(set(seen))
    assert changed
    with open_store(path) as store:
        assert store.count() == 20000 + written


def test_our_writes_while_another_process_inserts(tmp_path):
    path = big_file(tmp_path / "agent.site.db", 2000)
    agent = Agent(path, tmp_path)
    try:
        with open_store(path) as store:
            for i in range(100):
                memory = store.add(f"ours {i}", type="task", importance=1 + i % 10)
                store.update(memory.id, content=f"ours {i}, edited")
                store.touch(memory.id)
                store.link(memory.id, "old-00001")
            store.update_many([f"old-{i:05d}" for i in range(500)], importance=9)
            store.add_many([{"content": f"batch {i}", "type": "fact"} for i in range(2000)])
            removed = store.delete([f"old-{i:05d}" for i in range(1000, 1500)])
            store.restore_deleted([t.trash_id for t in store.trash(limit=100)])
    finally:
        written = agent.finish()
    assert len(removed) == 500
    with open_store(path) as store:
        assert store.count() == 2000 + 100 + 2000 - 500 + 100 + written
        assert store.count(types=("task",), text=", edited") == 100
        assert store.count(importance_min=9, ids=tuple(f"old-{i:05d}" for i in range(500))) == 500
        assert len(store.get("old-00001").related_to) == 100


def test_read_only_cli_session_leaves_no_trace(tmp_path):
    path = big_file(tmp_path / "sites" / "anwe-sh" / "ora.site.db", 300)
    folder = path.parent
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for args in (["list", "--json"], ["show", "old-00007"], ["recall", "fact"], ["important"], ["check-schema"]):
        out = subprocess.run([sys.executable, "-m", "ora_desktop", *args, "--db", str(path)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "Traceback" not in out.stderr
    listed = subprocess.run([sys.executable, "-m", "ora_desktop", "list", "--json", "--db", str(path)],
                            capture_output=True, text=True, timeout=60, check=True)
    assert "old-00000" in listed.stdout and json.loads(listed.stdout)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_read_only_store_opened_before_the_agent_sees_its_writes(tmp_path):
    """Opened read-only with no writer about (SQLite's locks, nothing left beside the file once
    closed), the store notices a real second process's commits and shows them."""
    path = big_file(tmp_path / "agent.site.db", 100)
    with open_store(path, readonly=True) as store:
        assert not store.immutable and store.count() == 100
        assert not store.changed_externally()
        agent = Agent(path, tmp_path)
        try:
            assert store.changed_externally()
            assert store.count() > 100
            assert store.find("agent-0").content == "agent wrote memory 0"
        finally:
            written = agent.finish()
        store.changed_externally()
        assert store.count() == 100 + written


def test_read_only_session_beside_a_writer_process_changes_nothing(tmp_path):
    """An agent process has the file open (its -wal and -shm exist); our read-only session
    leaves the database bytes and the folder's listing exactly as they were."""
    path = big_file(tmp_path / "agent.site.db", 500)
    agent = Agent(path, tmp_path, idle_after=20)
    try:
        time.sleep(0.1)  # the agent is idle now, holding the file open
        folder = {p.name for p in path.parent.iterdir()}
        db_bytes, wal_bytes = path.read_bytes(), Path(f"{path}-wal").read_bytes()
        with open_store(path, readonly=True) as store:
            assert not store.immutable
            assert store.count() == 520 and store.find("agent-19") is not None
            list(store.iter_all(page=100))
            store.facets()
            store.recall("fact")
        assert {p.name for p in path.parent.iterdir()} == folder
        assert path.read_bytes() == db_bytes and Path(f"{path}-wal").read_bytes() == wal_bytes
    finally:
        assert agent.finish() == 20
