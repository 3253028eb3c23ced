"""Helpers for the sync tests: two homes standing for two machines, and looks at the server."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

import ora_desktop
from ora_desktop.core.records import Memory
from ora_desktop.core.sync import sync_file

SITE, AGENT = "anwe-sh", "ora"


class Machine:
    """One home (``ORA_HOME``) with the agent file ``anwe-sh/ora.site.db``."""

    def __init__(self, root: Path, name: str) -> None:
        self.home = ora_desktop.OraHome(root / name)
        self.path = self.home.create_agent(SITE, AGENT)

    @classmethod
    def with_memories(cls, root: Path, count: int, name: str = "laptop") -> Machine:
        """A home whose file holds ``count`` short memories, ``m0000`` upwards."""
        machine = cls(root, name)
        with machine.store() as store:
            store.add_many({"id": f"m{i:04d}", "content": f"memory {i}", "type": "fact"} for i in range(count))
        return machine

    def store(self, readonly: bool = False) -> ora_desktop.Store:
        return ora_desktop.open_store(self.path, readonly=readonly)

    def sync(self, url: str):
        return sync_file(self.path, url)

    def memories(self) -> dict[str, Memory]:
        with self.store(readonly=True) as store:
            return {m.id: m for m in store.list(superseded="show", limit=None)}

    def view(self) -> dict[str, tuple]:
        """What must agree between machines: every synced column of every memory."""
        return {i: (m.content, m.type, m.importance, m.related_to, m.superseded_by, m.updated_at_text)
                for i, m in self.memories().items()}


def server_rows(url: str, site: str = SITE, agent: str = AGENT) -> dict[str, dict]:
    """id -> row (as a dict) of every server row of (site, agent), tombstones included."""
    with psycopg.connect(url) as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute("SELECT * FROM ora_memories WHERE site = %s AND agent = %s", (site, agent))
        return {row["id"]: row for row in cur.fetchall()}


def digest(path: Path) -> str:
    """The bytes of a file and of its -wal (what 'nothing changed' compares)."""
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        p = Path(f"{path}{suffix}")
        if p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()


def agent_sql(path: Path, sql: str, *params: object) -> None:
    """An agent's own write, in another process, leaving ``sync_status`` alone (the seed's agents
    write raw SQL)."""
    code = ("import sqlite3, sys, json; c = sqlite3.connect(sys.argv[1], timeout=30); "
            "c.execute(sys.argv[2], json.loads(sys.argv[3])); c.commit(); c.close()")
    subprocess.run([sys.executable, "-c", code, str(path), sql, json.dumps(list(params))], check=True, timeout=60)


def failed_sync(machine: Machine, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync that fails at its last step (pins and typed links: the connection dropped)."""
    from ora_desktop.core.sync import engine

    def fails(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("the connection dropped")

    with monkeypatch.context() as patch:
        patch.setattr(engine, "sync_marks", fails)
        with pytest.raises(RuntimeError):
            machine.sync(url)
