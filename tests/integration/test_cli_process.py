"""The real ``python -m ora_desktop`` process: demo data, reads, a write round trip, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # starts real processes


def ora(*argv: object, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    env.pop("ORA_DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-m", "ora_desktop", *map(str, argv)],
        capture_output=True, text=True, input=input, env=env, timeout=120, cwd=ROOT,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def demo_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    result = ora("demo", "--home", home, "--memories", "400")
    assert "wrote" in result.stdout
    return home


def test_demo_then_browse_as_a_user_would(demo_home: Path) -> None:
    agents = json.loads(ora("sites", "--home", demo_home, "--json").stdout)["agents"]
    assert sum(a["memories"] for a in agents) == 400
    target = ("--home", demo_home, "--site", "anwe-sh", "--agent", "ora")
    page = json.loads(ora("list", *target, "--json", "--limit", "10").stdout)
    assert len(page["memories"]) == 10 and page["next_after"]
    second = json.loads(ora("list", *target, "--json", "--limit", "10", "--after", page["next_after"]).stdout)
    assert not {m["id"] for m in page["memories"]} & {m["id"] for m in second["memories"]}
    table = ora("list", *target, "--type", "fact", "--limit", "5").stdout
    assert table.splitlines()[0].startswith("ID") and " fact " in table
    shown = ora("show", *target, page["memories"][0]["id"]).stdout
    assert page["memories"][0]["id"] in shown
    assert ora("check-schema", "--home", demo_home, "--all").stdout.count("OK") == len(agents)


def test_write_round_trip_with_stdin_rm_and_undelete(demo_home: Path) -> None:
    db = demo_home / "sites" / "shop-eu" / "support.site.db"
    text = "Κάτι νέο — 新しい\nline 2"
    added = json.loads(ora("add", "--db", db, "-", "--type", "task", "--json", input=text).stdout)
    assert added["content"] == text
    removed = ora("rm", "--db", db, added["id"])
    assert "ora-desktop undelete" in removed.stdout
    command = removed.stdout.strip().splitlines()[-1].split()
    assert command[:2] == ["ora-desktop", "undelete"]
    ora(*command[1:])  # the printed command works as given
    back = json.loads(ora("show", "--db", db, added["id"], "--json").stdout)
    assert back["memory"]["content"] == added["content"]


def test_errors_are_one_line_without_traceback(demo_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.site.db"
    bad.write_text("not sqlite")
    for argv in (("list", "--db", bad), ("list", "--site", "../x", "--agent", "ora"), ("nonsense",),
                 ("add", "--db", demo_home / "sites" / "anwe-sh" / "ora.site.db", "x", "--importance", "11"),
                 ("show", "--home", demo_home, "--site", "anwe-sh", "--agent", "ora", "no-such-id"),
                 ("demo", "--home", demo_home)):
        result = ora(*argv, check=False)
        assert result.returncode != 0, argv
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr and result.stderr.startswith("ora-desktop")


def test_a_closed_pipe_is_not_an_error(demo_home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ora_desktop", "list", "--home", str(demo_home), "--site", "anwe-sh",
         "--agent", "ora", "--limit", "150", "--superseded", "show"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_version_and_help() -> None:
    assert ora("--version").stdout.startswith("ora-desktop ")
    assert "check-schema" in ora("--help").stdout
