"""``ora-desktop mcp`` answers ``initialize`` before doing what only later requests need: the
tools, resources and prompts are registered on their first use, and the search index warm-up
starts once the answer is out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})


def test_tools_resources_and_prompts_are_registered_when_first_looked_at(seed_db: Callable[..., Path]) -> None:
    """A built server has not loaded the engine's operations nor built a tool's schema yet; the
    first list (or call, or read) registers them all, so a client sees every one."""
    path = seed_db([("m1", "first", "fact", 5)])
    code = (
        "import sys, anyio\n"
        "from ora_desktop.core import open_store\n"
        "from ora_desktop.mcp.server import build_server\n"
        f"store = open_store({str(path)!r}).__enter__()\n"
        "server = build_server(store)\n"
        "unloaded = sorted(m for m in ('ora_desktop.core.operations.agent_memory', 'ora_desktop.mcp.tools', "
        "'ora_desktop.core.maintenance') if m not in sys.modules)\n"
        "tools = [t.name for t in anyio.run(server.list_tools)]\n"
        "prompts = [p.name for p in anyio.run(server.list_prompts)]\n"
        "templates = anyio.run(server.list_resource_templates)\n"
        "print(unloaded, 'remember' in tools and 'recall' in tools, prompts, len(templates) > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[0] == ("['ora_desktop.core.maintenance', 'ora_desktop.core.operations.agent_memory', "
                                  "'ora_desktop.mcp.tools'] True ['start_task', 'wrap_up'] True")


def test_the_index_warm_up_starts_after_the_answer_to_initialize(seed_db: Callable[..., Path]) -> None:
    """The warm-up here ends the process at once: the client still gets its answer first."""
    path = seed_db([("m1", "first", "fact", 5)])
    code = ("import os, sys\n"
            "import ora_desktop.mcp.server as server\n"
            "server.warm_index = lambda path: os._exit(3)\n"
            "from ora_desktop.cli import main\n"
            f"main(['mcp', '--db', {str(path)!r}])\n")
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env={**os.environ})
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE.encode() + b"\n")
    process.stdin.flush()
    answer = process.stdout.readline()
    assert process.wait(timeout=60) == 3  # the warm-up ran, after...
    assert json.loads(answer)["result"]["serverInfo"]["name"] == "ora-desktop"  # ...the answer went out
