"""Quick MCP reads run on the event loop only when they are known to be short; everything else
keeps a worker thread, so the loop is never held by a long read."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from ora_desktop.core import open_store
from ora_desktop.mcp import quick
from ora_desktop.mcp.agents import Agents


def thread_of_read(path: Path, *, keyed: bool = False) -> str:
    """Where ``quick.read`` ran its reading: "loop" (the calling thread) or "worker"."""
    with open_store(path) as store:
        agents = Agents.one(store)

        async def scenario() -> str:
            loop = threading.get_ident()
            ran = await quick.read(agents, None, lambda s: (s.get("m1"), threading.get_ident())[1], keyed=keyed)
            return "loop" if ran == loop else "worker"

        return anyio.run(scenario)


def test_a_short_read_of_a_small_file_runs_on_the_loop_a_large_file_on_a_worker(
        seed_db: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = seed_db([("m1", "first", "fact", 5)])
    assert thread_of_read(path) == "loop"
    monkeypatch.setattr(quick, "QUICK_BYTES", 0)  # every file is "large" now
    assert thread_of_read(path) == "worker"
    assert thread_of_read(path, keyed=True) == "loop"  # a read by primary key is short on any file


def test_an_agent_of_a_site_not_opened_yet_is_opened_on_a_worker(seed_db: Callable[..., Path],
                                                                  ora_home: Path) -> None:
    from ora_desktop.core import OraHome

    seed_db([("m1", "first", "fact", 5)])
    agents = Agents.of_site(OraHome(ora_home), "anwe-sh")

    async def scenario() -> tuple[str, str]:
        loop = threading.get_ident()
        where = []
        for _ in range(2):
            ran = await quick.read(agents, "ora", lambda s: threading.get_ident(), keyed=True)
            where.append("loop" if ran == loop else "worker")
        return where[0], where[1]

    try:
        assert anyio.run(scenario) == ("worker", "loop")  # opening is not a quick read; then it is open
    finally:
        agents.close()
