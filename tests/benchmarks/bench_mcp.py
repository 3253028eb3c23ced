"""The MCP server's round trip against the same call on the library in-process, in one run.

* ``recall('fact')`` and ``search(q, limit=20)`` through the MCP SDK's own client, talking to a
  real ``ora-desktop mcp --read-only`` subprocess over stdio (JSON-RPC encode, pipe, argument
  validation, the core call, structured content + text, decode), against
  :mod:`ora_desktop.core.operations.agent_memory` called directly on an open store: the same
  rows, the same ranking. Calls alternate MCP / library so both share the machine's noise.

The ratio (MCP / library) is what the protocol costs an agent on top of the engine.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ora_desktop.core import open_store
from ora_desktop.core.operations import agent_memory as ops
from ora_desktop.core.search import ensure_index

from .common import DATA, ROOT, Row, bench_file, p50, report

QUERIES = ("Kenji", "flaky CI runs", "billing webhook TypeError", "sitemap", "pricing page copy")
REPEAT = 21


def run(memories: int) -> None:
    source = bench_file(memories)
    cache = DATA / "scratch" / "search-cache"  # shared with bench_search: the index is built once
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        started = time.perf_counter()
        ensure_index(source)
        print(f"  (index ready in {time.perf_counter() - started:.1f} s)")
        anyio.run(_measure, source)
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous


async def _measure(source: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, env=env, cwd=ROOT,
                                   args=["-m", "ora_desktop", "mcp", "--db", str(source), "--read-only"])
    with open(os.devnull, "w") as errlog, open_store(source, readonly=True) as store:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=600) as session:
                await session.initialize()
                rows = []
                calls = [("recall('fact')", "recall", {"type": "fact"}, lambda: ops.recall(store, "fact"))]
                calls += [(f"search {q!r}", "search", {"query": q, "limit": 20},
                           lambda q=q: ops.search(store, q, 20)) for q in QUERIES]
                for label, tool, arguments, local in calls:
                    remote, direct = await _alternating(session, tool, arguments, local)
                    rows.append(Row(f"{label} p50 (MCP)", p50(remote), p50(direct), "MCP / in-process"))
                report("MCP round trip (stdio, real subprocess) vs library in-process", rows, baseline="library")


async def _alternating(session: ClientSession, tool: str, arguments: dict, local) -> tuple[list[float], list[float]]:
    """MCP and library timings of the same call, alternated, after one warm-up of each."""
    first = await session.call_tool(tool, arguments)
    assert not first.is_error, first.content
    local()
    remote, direct = [], []
    for _ in range(REPEAT):
        started = time.perf_counter()
        result = await session.call_tool(tool, arguments)
        remote.append(time.perf_counter() - started)
        assert not result.is_error
        started = time.perf_counter()
        local()
        direct.append(time.perf_counter() - started)
    return remote, direct
