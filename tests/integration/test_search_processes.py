"""Search with real processes: the CLI, and an agent process writing while we search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ora_desktop.core.search import index_state, search
from tests.unit.search_support import make_file

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # starts real processes


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}


def ora(*argv: object, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "ora_desktop", *map(str, argv)], capture_output=True,
                            text=True, env=env(), timeout=120, cwd=ROOT)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def agent(db: Path, script: str) -> None:
    """Run ``script`` in another Python process with ``conn`` open on ``db`` (an agent writing)."""
    code = f"import sqlite3\nconn = sqlite3.connect({str(db)!r}, isolation_level=None)\n" + textwrap.dedent(script)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=env())


@pytest.fixture
def home(ora_home: Path) -> Path:
    sites = ora_home / "sites"
    make_file(sites / "anwe-sh" / "ora.site.db", [
        {"id": "a1", "content": "deploy runs on fridays; TypeError in src/app.ts", "importance": 9},
        {"id": "a2", "content": "the deploy key lives in the vault", "related_to": '["a3"]'},
        {"id": "a3", "content": "vault tokens rotate monthly"},
    ])
    make_file(sites / "shop-eu" / "ora.site.db", [{"id": "s1", "content": "shop deploy freeze in december"}])
    return ora_home


def test_another_process_inserts_updates_and_deletes(home: Path) -> None:
    db = home / "sites" / "anwe-sh" / "ora.site.db"
    assert {h.memory.id for h in search(db, "vault")} == {"a2", "a3"}
    agent(db, """
        conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                     "VALUES ('n1', 'a brand new vault policy', 'fact', 5, datetime('now'), datetime('now'))")
        conn.execute("UPDATE memories SET content = 'tokens never rotate', updated_at = datetime('now') "
                     "WHERE id = 'a3'")
        conn.execute("DELETE FROM memories WHERE id = 'a2'")
    """)
    assert index_state(db).stale
    assert {h.memory.id for h in search(db, "vault")} == {"n1"}
    assert {h.memory.id for h in search(db, "rotate")} == {"a3"}
    assert not index_state(db).stale
    # And a second process (the CLI) sees the same, from the same sidecar.
    out = json.loads(ora("search", "vault", "--db", db, "--json").stdout)
    assert [h["id"] for h in out["hits"]] == ["n1"]


def test_cli_search_across_sites_json_and_table(home: Path) -> None:
    out = json.loads(ora("search", "deploy", "--home", home, "--json").stdout)
    assert {(h["site"], h["agent"], h["id"]) for h in out["hits"]} == {
        ("anwe-sh", "ora", "a1"), ("anwe-sh", "ora", "a2"), ("shop-eu", "ora", "s1")}
    assert "[deploy]" in out["hits"][0]["snippet"]
    table = ora("search", "deploy", "--home", home, "--site", "shop-eu").stdout
    assert "shop-eu/ora" in table and "anwe-sh" not in table
    one = json.loads(ora("search", "tag:error=TypeError", "--home", home, "--site", "anwe-sh", "--agent", "ora",
                         "--json").stdout)
    assert [h["id"] for h in one["hits"]] == ["a1"]


def test_cli_context_and_reindex(home: Path) -> None:
    target = ("--home", home, "--site", "anwe-sh", "--agent", "ora")
    out = json.loads(ora("context", "deploy key", "--budget", "60", *target, "--json").stdout)
    assert out["tokens"] <= 60 and out["text"]
    text = ora("context", "deploy key", "--budget", "500", *target).stdout
    assert "vault tokens rotate monthly" in text  # a related_to neighbour
    rebuilt = ora("reindex", "--home", home).stdout
    assert rebuilt.count("indexed") == 2


def test_cli_bad_input(home: Path) -> None:
    for query in ['"NEAR(', "AND", "*", "'; DROP TABLE memories; --", ""]:
        result = ora("search", query, "--home", home, "--json")
        assert json.loads(result.stdout)["hits"] == []
    missing = ora("search", "x", "--db", home / "nope.site.db", check=False)
    assert missing.returncode == 2 and "nope.site.db" in missing.stderr and "Traceback" not in missing.stderr
    bad = ora("context", "x", "--budget", "0", "--db", home / "sites" / "anwe-sh" / "ora.site.db", check=False)
    assert bad.returncode == 2 and "at least 1" in bad.stderr
    warned = ora("search", "type:banana deploy", "--home", home)
    assert "type:banana ignored" in warned.stderr


def test_searchers_and_a_writer_at_once(home: Path) -> None:
    """Two processes search in a loop (refreshing the same sidecar) while this one writes."""
    db = home / "sites" / "anwe-sh" / "ora.site.db"
    search(db, "vault")  # built once; the searchers then only refresh
    loop = textwrap.dedent(f"""
        import sys, time
        from ora_desktop.core.search import search
        deadline = time.time() + 4
        seen = 0
        while time.time() < deadline:
            seen = max(seen, len(search({str(db)!r}, "penguin", limit=500).hits))
        print(seen)
    """)
    searchers = [subprocess.Popen([sys.executable, "-c", loop], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env()) for _ in range(2)]
    import sqlite3
    import time

    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    for i in range(60):
        conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                     "VALUES (?, 'a penguin note', datetime('now'), datetime('now'))", (f"p{i}",))
        time.sleep(0.02)
    conn.close()
    for proc in searchers:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    assert len(search(db, "penguin", limit=500).hits) == 60
