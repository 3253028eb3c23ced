"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, npm) against
``ora-desktop mcp --http``: every server scenario whose capability we serve passes.

The suite needs Node 22 or newer; npm installs one locally (the ``node`` package) beside the
suite, in ``.conformance/`` at the repository root (kept between runs, ignored by git). The test
is skipped, saying why, only when npm is missing or cannot install them. The scenarios that need
the suite's own fixture tools, resources and prompts (``test_image_content``,
``test://static-text``...) or client features (sampling, elicitation) do not apply to a memory
server: docs/mcp.md lists both kinds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .mcp_support import ROOT, server_env
from .test_mcp_server import free_port, start_http

pytestmark = pytest.mark.slow

SUITE = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node@22"
#: The server scenarios that apply to this server (its capabilities, not the suite's fixtures).
APPLICABLE = ("server-initialize", "ping", "logging-set-level", "completion-complete", "tools-list",
              "tools-call-error", "resources-list", "resources-subscribe", "resources-unsubscribe", "prompts-list",
              "server-sse-multiple-streams", "dns-rebinding-protection")
FOLDER = Path(os.environ.get("ORA_CONFORMANCE_DIR", ROOT / ".conformance"))


def conformance_bin() -> Path:
    """The suite's command, installed with a Node 22 runtime beside it (once)."""
    binary = FOLDER / "node_modules" / ".bin" / "conformance"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the MCP conformance suite (npm) cannot be had")
    FOLDER.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(FOLDER), NODE, SUITE],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not binary.exists():
        pytest.skip(f"npm could not install {NODE} and {SUITE}: {done.stderr.strip()[-300:]}")
    return binary


def test_every_applicable_conformance_scenario_passes(seed_db: Callable[..., Path]) -> None:
    binary = conformance_bin()
    agent_file = seed_db([("m-1", "The site deploys from main", "fact", 8)])
    port = free_port()
    server = start_http(agent_file, "--http", f"127.0.0.1:{port}")
    env = {**server_env(), "PATH": f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        failed = {}
        for scenario in APPLICABLE:
            run = subprocess.run([str(binary), "server", "--url", f"http://127.0.0.1:{port}/mcp", "--scenario",
                                  scenario], capture_output=True, text=True, timeout=300, env=env, cwd=FOLDER)
            if run.returncode != 0 or not re.search(r"Passed: (\d+)/\1, 0 failed", run.stdout):
                failed[scenario] = run.stdout[-800:] + run.stderr[-400:]
        assert not failed, failed
    finally:
        server.terminate()
        server.wait(timeout=30)
