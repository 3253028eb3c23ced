"""Each face whose extra is not installed says, in one line, which extra to install, and
changes nothing. The missing package is simulated in a real second process by putting ``None``
in ``sys.modules`` (Python's own "not installed" for an import), so the test runs the same in the
full venv and in the Qt-free one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_without(modules: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``ora-desktop ARGS`` in a child process where ``modules`` cannot be imported."""
    code = ("import sys\n"
            f"for name in {modules!r}: sys.modules[name] = None\n"
            "from ora_desktop.cli import main\n"
            "raise SystemExit(main(sys.argv[1:]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=ROOT)


def one_line_naming(result: subprocess.CompletedProcess[str], extra: str) -> str:
    assert result.returncode in (1, 2), result.stderr
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]  # after any progress lines
    assert f"pip install 'ora-desktop[{extra}]'" in line
    return line


@pytest.fixture
def agent_file(seed_db) -> Path:
    return seed_db([("m1", "Deploys go out from the main branch", "fact", 7)])


def test_the_window_without_the_gui_extra_names_it(agent_file):
    line = one_line_naming(run_without(["PySide6", "shiboken6"], "--home", str(agent_file.parents[2])), "gui")
    assert line.startswith("ora-desktop: the window needs the 'gui' extra")


def test_the_mcp_server_without_the_mcp_extra_names_it(agent_file):
    line = one_line_naming(run_without(["mcp"], "mcp", "--db", str(agent_file)), "mcp")
    assert "the MCP server needs the 'mcp' extra" in line


def test_sync_without_the_sync_extra_names_it(agent_file):
    before = agent_file.read_bytes()
    result = run_without(["psycopg"], "sync", "--db", str(agent_file), "--url", "postgresql://ora@127.0.0.1:9/ora")
    assert "sync with a PostgreSQL server needs the 'sync' extra" in one_line_naming(result, "sync")
    assert agent_file.read_bytes() == before


def test_search_by_meaning_without_the_meaning_extra_names_it(agent_file):
    result = run_without(["wordllama", "numkong"], "embed", "--db", str(agent_file))
    assert "search by meaning needs the 'meaning' extra" in one_line_naming(result, "meaning")


def test_the_library_and_lexical_search_need_no_extra(agent_file):
    result = run_without(["PySide6", "shiboken6", "qasync", "mcp", "psycopg", "wordllama", "numkong"],
                         "search", "--db", str(agent_file), "deploys")
    assert result.returncode == 0, result.stderr
    assert "main branch" in result.stdout
