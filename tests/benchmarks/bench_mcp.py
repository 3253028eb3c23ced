"""Each MCP tool's round trip beside the same call on the library, in one run.

For every tool: the p50 of the call over **raw JSON-RPC** (one line written to a real
``ora-desktop mcp`` subprocess's stdin, one line read back: pipe, argument validation, the core
call, structured content + text, JSON) and through the **MCP SDK's client** (which also
validates the result against the tool's output schema), against
:mod:`ora_desktop.core.operations.agent_memory` called in-process on an open store, side by
side on one line per tool with the target's verdict. Calls
alternate raw / SDK / library so all three share the machine's noise. Target for raw JSON-RPC:
at most 2x the library call + 2 ms. Reading tools run on a copy of the benchmark file, writing
tools on the same copy (touch, update, remember with ``copy``), so nothing is measured on an
empty file. Also printed: the size of the ``tools/list`` answer, and how long a fresh
``ora-desktop mcp`` takes to answer ``initialize`` beside the SDK's own minimal server (target 1.2x).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ora_desktop.core import open_store
from ora_desktop.core.operations import agent_memory as ops
from ora_desktop.core.search import ensure_index

from .common import DATA, ROOT, Row, bench_file, fmt, fresh_copy, p50, report

REPEAT = 51
STARTS = 5
MINIMAL_SERVER = "from mcp.server.mcpserver import MCPServer\nMCPServer('minimal').run('stdio')\n"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})


class RawClient:
    """JSON-RPC over a real server's stdio, one request line and one answer line at a time."""

    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.ids = itertools.count(1)
        self.process = subprocess.Popen([sys.executable, "-m", "ora_desktop", "mcp", "--db", str(path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=env, cwd=ROOT)
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def request(self, method: str, params: dict) -> dict:
        line = json.dumps({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def call(self, tool: str, arguments: dict) -> dict:
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert not answer["result"].get("isError"), answer
        return answer

    def cpu(self) -> float:
        """Seconds of CPU the server's threads have used so far (0 where it cannot be read)."""
        return _cpu_of(self.process.pid)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def run(memories: int) -> None:
    source = fresh_copy(bench_file(memories), "mcp.site.db")
    cache = DATA / "scratch" / "mcp-cache"
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        started = time.perf_counter()
        ensure_index(source)
        print(f"  (index ready in {time.perf_counter() - started:.1f} s)")
        anyio.run(_measure, source)
        _startup(source)
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous


def _calls(store: Any) -> list[tuple[str, str, dict, Callable[[], object]]]:
    """(label, tool, arguments, the same call in-process) for each tool worth timing."""
    some = store.list(limit=3)
    first, second = some[0].id, some[1].id
    counter = itertools.count()
    return [
        ("recall('fact')", "recall", {"type": "fact"}, lambda: ops.recall(store, "fact")),
        ("important", "important", {}, lambda: ops.important(store)),
        ("search 'flaky CI runs'", "search", {"query": "flaky CI runs"}, lambda: ops.search(store, "flaky CI runs")),
        ("context (2,000 tokens)", "context", {"query": "deploy"}, lambda: ops.context(store, "deploy")),
        ("get", "get", {"id": first}, lambda: ops.memory(store, first)),
        ("list (20 newest)", "list", {}, lambda: ops.list_memories(store)),
        ("touch one", "touch", {"ids": [second]}, lambda: ops.touch(store, [second])),
        ("update importance", "update", {"id": second, "importance": 6},
         lambda: ops.update(store, second, importance=6)),
        ("remember (an identical one)", "remember", {"content": some[2].content},
         lambda: ops.remember(store, some[2].content)),
        ("remember (new)", "remember", {"content": "bench note"},
         lambda: ops.remember(store, f"bench note {next(counter)}")),
    ]


async def _measure(source: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, env=env, cwd=ROOT,
                                   args=["-m", "ora_desktop", "mcp", "--db", str(source)])
    raw = RawClient(source, env)
    with open(os.devnull, "w") as errlog, open_store(source) as store:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=600) as session:
                await session.initialize()
                listing = raw.request("tools/list", {})
                size = len(json.dumps(listing["result"]))
                schemas = sum(len(json.dumps(t.get("outputSchema", {}))) for t in listing["result"]["tools"])
                print(f"  tools/list answer: {size:,} bytes, of which output schemas {schemas:,}")
                print(f"  (load average before: {_load()})")
                rows = []
                texts = (f"bench note {i}" for i in itertools.count(10_000))
                for label, tool, arguments, local in _calls(store):
                    def argument_maker(label: str = label, arguments: dict = arguments) -> dict:
                        # a new text each time for "remember (new)": never an identical one
                        return {"content": next(texts)} if label == "remember (new)" else arguments

                    by_raw, by_sdk, direct, cpu = await _alternating(raw, session, tool, argument_maker, local)
                    rows.append((label, p50(by_raw), p50(by_sdk), p50(direct), p50(cpu[0]), p50(cpu[1])))
                _print_round_trips(rows)
                print(f"  (load average after: {_load()})")
    raw.close()


def _print_round_trips(rows: list[tuple[str, float, float, float, float, float]]) -> None:
    """One line per tool: raw JSON-RPC, SDK client and library p50, the target and its verdict;
    then the CPU the server spent per raw call beside the library call's (what the machine's
    load does not inflate: a round trip also waits for two processes to be scheduled)."""
    print("\n## MCP round trip per tool (stdio, real subprocess; p50) vs the library in-process")
    print(f"{'tool':30} {'raw JSON-RPC':>13} {'SDK client':>13} {'library':>13}  {'target (raw)':>15}  verdict"
          f"   {'server CPU':>13} {'library CPU':>13}")
    for label, by_raw, by_sdk, direct, server_cpu, library_cpu in rows:
        target = 2 * direct + 0.002
        print(f"{label:30} {fmt(by_raw, 'ms'):>13} {fmt(by_sdk, 'ms'):>13} {fmt(direct, 'ms'):>13}  "
              f"<= {fmt(target, 'ms'):>12}  {'met   ' if by_raw <= target else 'MISSED'}   "
              f"{fmt(server_cpu, 'ms'):>13} {fmt(library_cpu, 'ms'):>13}")


def _load() -> str:
    """The 1, 5 and 15 minute load averages (a figure under load says so)."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def _alternating(raw: RawClient, session: ClientSession, tool: str, arguments: Callable[[], dict],
                       local: Callable[[], object]
                       ) -> tuple[list[float], list[float], list[float], tuple[list[float], list[float]]]:
    """Raw, SDK and library timings of the same call, alternated, after one warm-up of each; and
    the CPU of each raw call in the server and of each library call."""
    raw.call(tool, arguments())
    first = await session.call_tool(tool, arguments())
    assert not first.is_error, first.content
    local()
    by_raw, by_sdk, direct, server_cpu, library_cpu = [], [], [], [], []
    for _ in range(REPEAT):
        request = arguments()
        cpu_before = raw.cpu()
        started = time.perf_counter()
        raw.call(tool, request)
        by_raw.append(time.perf_counter() - started)
        server_cpu.append(raw.cpu() - cpu_before)
        started = time.perf_counter()
        result = await session.call_tool(tool, arguments())
        by_sdk.append(time.perf_counter() - started)
        assert not result.is_error
        started, cpu_before = time.perf_counter(), time.thread_time()
        local()
        direct.append(time.perf_counter() - started)
        library_cpu.append(time.thread_time() - cpu_before)
    return by_raw, by_sdk, direct, (server_cpu, library_cpu)


def _first_answer(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``argv`` to its answer to ``initialize``, and the CPU seconds the
    process spent until then (what the machine's load does not inflate)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=env, cwd=ROOT)
    process.stdin.write(INITIALIZE.encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    elapsed = time.perf_counter() - started
    cpu = _cpu_of(process.pid)
    assert "result" in answer, answer
    process.stdin.close()
    process.wait(timeout=60)
    return elapsed, cpu


def _cpu_of(pid: int) -> float:
    """Seconds of CPU process ``pid``'s threads have used so far (Linux ``schedstat``; 0 elsewhere)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(task.read_text().split()[0])
    return total / 1e9


def _startup(source: Path) -> None:
    """Both servers start with their bytecode compiled, as an installed package's is (the SDK's is
    in the venv; ours goes to a scratch cache, written by one unmeasured start of each)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(DATA / "scratch" / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ours_argv = [sys.executable, "-m", "ora_desktop", "mcp", "--db", str(source)]
    minimal_argv = [sys.executable, "-c", MINIMAL_SERVER]
    _first_answer(ours_argv, env)
    _first_answer(minimal_argv, env)
    ours, minimal = [], []
    for _ in range(STARTS):
        ours.append(_first_answer(ours_argv, env))
        minimal.append(_first_answer(minimal_argv, env))
    report("Start to the initialize answer (stdio)", [
        Row("ora-desktop mcp (wall)", p50([w for w, _ in ours]), p50([w for w, _ in minimal]), "<= 1.2x"),
        Row("ora-desktop mcp (its CPU until then)", p50([c for _, c in ours]), p50([c for _, c in minimal]),
            "<= 1.2x")], baseline="SDK minimal")
    print(f"  (load average: {_load()})")
