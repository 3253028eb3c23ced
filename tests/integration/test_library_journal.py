"""An agent that imports ``ora_desktop`` has its writes journalled as ``library``: a person sees
them in ``ora-desktop undo --list`` and can undo them. Real processes: the agent's Python
program writes and exits, then the command line reads the file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .mcp_support import ROOT, server_env

pytestmark = pytest.mark.slow  # starts real processes

AGENT = """
import sys
import ora_desktop

with ora_desktop.open_store(sys.argv[1]) as store:
    added = store.add("The deploy bot posts to the ops channel", importance=6)
    store.update("m-tabs", importance=9)
    store.delete(["m-gone", "m-not-there"])
    print(added.id)
with ora_desktop.open_store(sys.argv[1], journal_as=None) as store:
    store.update("m-deploy", importance=2)  # opted out: not journalled
"""


def run(*argv: object, code: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "ora_desktop"]
    done = subprocess.run([*command, *map(str, argv)], capture_output=True, text=True, env=server_env(), cwd=ROOT,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done


def test_a_library_agents_writes_are_listed_as_library_and_undone_by_a_person(
        seed_db: Callable[..., Path]) -> None:
    path = seed_db([("m-deploy", "The site deploys from main", "fact", 8),
                    ("m-tabs", "The user prefers tabs", "preference", 6),
                    ("m-gone", "The staging server is called blue", "fact", 7)])
    added = run(path, code=AGENT).stdout.strip()

    steps = json.loads(run("undo", "--list", "--db", path, "--json").stdout)
    assert [(s["label"], s["by"]) for s in steps] == [
        ("delete 1 memory", "library"), ("edit importance of m-tabs", "library"), (f"add {added}", "library")]
    for _ in steps:
        run("undo", "--db", path)

    conn = sqlite3.connect(path)
    rows = dict(conn.execute("SELECT id, importance FROM memories"))
    conn.close()
    assert rows == {"m-deploy": 2, "m-tabs": 6, "m-gone": 7}  # m-deploy's opted-out edit stays
