"""``ora-desktop sync`` as a real process against a real PostgreSQL server: output, bad input, SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from ora_desktop.core.config import config_path
from ora_desktop.core.sync_settings import holds_password
from tests.integration.sync_support import Machine, digest, server_rows
from tests.pg_server import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # real processes and a real server


def _stdin_url(argv: tuple[object, ...]) -> tuple[list[str], str | None]:
    """``--url`` refuses a password on the command line: such a URL goes through ``--url -``."""
    args = [str(a) for a in argv]
    if "--url" in args and holds_password(args[args.index("--url") + 1]):
        at = args.index("--url") + 1
        url, args[at] = args[at], "-"
        return args, url + "\n"
    return args, None


def ora(*argv: object, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environ.pop("ORA_DEBUG", None)
    args, given = _stdin_url(argv)
    result = subprocess.run([sys.executable, "-m", "ora_desktop", *args], capture_output=True, text=True,
                            env=environ, timeout=300, cwd=ROOT, input=given or "")
    if check:
        assert result.returncode == 0, result.stderr
    return result


def spawn(*argv: object) -> subprocess.Popen:
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    args, given = _stdin_url(argv)
    process = subprocess.Popen([sys.executable, "-m", "ora_desktop", *args], env=environ, cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None
    process.stdin.write(given or "")
    process.stdin.close()
    return process


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    m = Machine(tmp_path, "laptop")
    with m.store() as store:
        store.add("Deploys go out from main", type="fact", importance=7)
    return m


def test_sync_from_config_prints_no_password_and_is_recorded(pg_url: str, machine: Machine, tmp_path: Path) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(f'[sync]\nurl = "{pg_url}"\ninterval = "5m"\n')
    result = ora("sync", "--db", machine.path, "--json")
    data = json.loads(result.stdout)["files"][0]
    assert (data["outcome"], data["pushed"], data["pulled"]) == ("ok", 1, 0)
    assert PASSWORD not in result.stdout + result.stderr and "postgres@127.0.0.1" in data["server"]
    history = ora("jobs", "--job", "sync", "--json").stdout
    assert '"outcome": "ok"' in history and PASSWORD not in history
    status = json.loads(ora("sync", "--db", machine.path, "--status", "--json").stdout)["files"][0]
    assert status["pending"] == 0 and status["last_sync"]["pushed"] == 1 and status["configured"]
    second = Machine(tmp_path, "desk")
    text = ora("sync", "--home", second.home.root, "--all").stdout
    assert "pulled 1" in text and PASSWORD not in text


@pytest.mark.parametrize("case", ["not a url", "server down", "wrong password", "unknown database"])
def test_a_server_that_cannot_be_used_is_one_line_and_changes_nothing(case: str, pg_server, machine: Machine) -> None:
    free = pg_server.port + 1 if pg_server.port < 65000 else pg_server.port - 1
    url = {
        "not a url": "postgresql://postgres:hunter2@127.0.0.1:notaport/x",
        "server down": f"postgresql://postgres:hunter2@127.0.0.1:{free}/postgres?connect_timeout=5",
        "wrong password": pg_server.url(password="hunter2"),
        "unknown database": pg_server.url("no_such_db").replace(PASSWORD, "hunter2"),
    }[case]
    before = digest(machine.path)
    result = ora("sync", "--db", machine.path, "--url", url, check=False)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("ora-desktop sync: ")
    assert "Traceback" not in result.stderr and "hunter2" not in result.stderr + result.stdout
    assert "***" in lines[0] or "postgres@127.0.0.1" in lines[0]
    expected = {"not a url": "not a usable PostgreSQL URL", "server down": "is it running",
                "wrong password": "refused the user name or password", "unknown database": "no_such_db"}[case]
    assert expected in lines[0]
    assert digest(machine.path) == before


def test_a_foreign_server_table_is_one_line_and_changes_nothing(pg_url: str, machine: Machine) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE ora_memories (site text, agent text, id text, body jsonb)")
    before = digest(machine.path)
    result = ora("sync", "--db", machine.path, "--url", pg_url, check=False)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "has another shape" in result.stderr and "missing columns content" in result.stderr
    assert PASSWORD not in result.stderr
    assert digest(machine.path) == before


def test_a_password_on_the_command_line_is_refused_and_standard_input_is_read(pg_url: str, machine: Machine) -> None:
    before = digest(machine.path)
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "ora_desktop", "sync", "--db", str(machine.path), "--url"]
    refused = subprocess.run([*command, pg_url], capture_output=True, text=True, env=environ, cwd=ROOT, timeout=120)
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1 and PASSWORD not in refused.stderr + refused.stdout
    assert "holds a password" in lines[0] and "PGPASSWORD" in lines[0] and "--url -" in lines[0]
    assert digest(machine.path) == before
    empty = subprocess.run([*command, "-"], input="\n", capture_output=True, text=True, env=environ, cwd=ROOT,
                           timeout=120)
    assert empty.returncode == 2 and "standard input held no URL" in empty.stderr
    given = subprocess.run([*command, "-", "--json"], input=pg_url + "\n", capture_output=True, text=True,
                           env=environ, cwd=ROOT, timeout=120)
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["files"][0]["pushed"] == 1 and PASSWORD not in given.stdout + given.stderr


def test_no_server_configured_and_bad_arguments_are_one_line(machine: Machine) -> None:
    result = ora("sync", "--db", machine.path, check=False)
    assert result.returncode == 2 and "no sync server is set up" in result.stderr
    result = ora("sync", check=False)
    assert result.returncode == 2 and "say which database" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_sync_killed_mid_push_converges_when_run_again(pg_url: str, machine: Machine, tmp_path: Path) -> None:
    total = 60000
    with machine.store() as store:
        store.add_many({"content": f"bulk memory {i} " + "word " * 20} for i in range(total - 1))
    process = spawn("sync", "--db", machine.path, "--url", pg_url)
    deadline = time.monotonic() + 120
    killed_at = None
    with psycopg.connect(pg_url, autocommit=True) as conn:
        while time.monotonic() < deadline and process.poll() is None:
            try:
                count = conn.execute("SELECT count(*) FROM ora_memories").fetchone()[0]
            except psycopg.errors.UndefinedTable:
                count = 0
            if count > 0:
                process.send_signal(signal.SIGKILL)
                killed_at = count
                break
            time.sleep(0.02)
    process.wait(timeout=60)
    assert killed_at is not None and killed_at < total, "the sync finished before it could be killed"
    ora("sync", "--db", machine.path, "--url", pg_url)
    rows = server_rows(pg_url)
    assert len(rows) == total
    memories = machine.memories()
    assert len(memories) == total and {m.sync_status for m in memories.values()} == {"synced"}
    other = Machine(tmp_path, "desk")
    other.sync(pg_url)
    assert other.view() == machine.view()


def test_status_shows_a_future_last_sync_as_a_clock_problem(pg_url: str, machine: Machine) -> None:
    ora("sync", "--db", machine.path, "--url", pg_url)
    with sqlite3.connect(machine.path) as conn:  # the sync ran on a clock a day ahead
        conn.execute("UPDATE ora_desktop_sync SET last_sync = datetime('now', '+1 day')")
    result = ora("sync", "--db", machine.path, "--status")
    assert "(clock problem)" in result.stdout
    assert "clock problem: the last sync is 1 day in the future" in result.stderr
    data = json.loads(ora("sync", "--db", machine.path, "--status", "--json").stdout)["files"][0]
    assert "in the future" in data["clock_problem"]


def test_conflicts_are_paged_with_the_total(pg_url: str, machine: Machine, tmp_path: Path) -> None:
    other = Machine(tmp_path, "desk")
    with other.store() as store:
        ids = [store.add(f"Shared fact {n}").id for n in range(5)]
    other.sync(pg_url)
    machine.sync(pg_url)
    for m, tag in ((machine, "here"), (other, "there")):
        with m.store() as store:
            for memory_id in ids:
                store.update(memory_id, content=f"{tag}: {memory_id}")
    other.sync(pg_url)
    machine.sync(pg_url)
    first = ora("sync", "--db", machine.path, "--conflicts", "--limit", "2")
    assert "conflicts 1-2 of 5" in first.stdout and "more: --offset 2" in first.stderr
    last = ora("sync", "--db", machine.path, "--conflicts", "--limit", "2", "--offset", "4")
    assert "conflicts 5-5 of 5" in last.stdout and "more:" not in last.stderr
    data = json.loads(ora("sync", "--db", machine.path, "--conflicts", "--json", "--limit", "50").stdout)["files"][0]
    assert data["total"] == 5 and sorted(c["memory_id"] for c in data["conflicts"]) == sorted(ids)
    assert all("in server time" in c["basis"] for c in data["conflicts"])
    bad = ora("sync", "--db", machine.path, "--conflicts", "--limit", "0", check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_vacuum_reclaims_the_server_table_and_says_what_it_did(pg_url: str, machine: Machine) -> None:
    with machine.store() as store:
        doomed = [store.add(f"Text to erase {n} " + "x" * 400).id for n in range(200)]
    machine.sync(pg_url)
    with machine.store() as store:
        store.delete(doomed)
    machine.sync(pg_url)  # 200 tombstones: the old row versions are dead tuples now
    result = ora("sync", "--vacuum", "--url", pg_url)
    assert "VACUUM of ora_memories" in result.stdout and "bytes before" in result.stdout
    assert "WAL" in result.stderr and PASSWORD not in result.stdout + result.stderr
    full = ora("sync", "--vacuum", "--full", "--url", pg_url, "--json")
    data = json.loads(full.stdout)
    # The rewrite keeps only live rows (the tombstones): the deleted text's pages are given back.
    assert data["full"] and data["size_after"] < data["size_before"] and "LOCKS" in full.stderr.upper()
    assert ora("sync", "--full", "--url", pg_url, check=False).returncode == 2
