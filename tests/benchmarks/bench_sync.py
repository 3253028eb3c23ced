"""Sync with PostgreSQL beside the raw floor: psycopg ``COPY`` into (and out of) the same table.

* push of 100,000 memories (a first sync into an empty server) vs the raw floor: read the same
  rows from SQLite and ``COPY`` them into ``ora_memories`` with psycopg;
* pull of those 100,000 into an empty file vs ``COPY … TO STDOUT`` + one SQLite transaction of
  ``executemany`` inserts;
* incremental sync of a ``--memories`` file (1,000,000 by default) after 100 memories changed
  here (push) and after 100 changed on the server (pull), end to end (connect, schema check, lock,
  pull, push, mark, tombstones), target under 1 s, vs raw: connect, read the 100 pending rows,
  COPY + upsert them, mark them synced; and the push again while a store holds the file open (the
  window's case: only what the change feed heard since the last sync is compared), and while
  another process holds it open and none here does (the command line or the daemon beside an
  agent: only the rows on the pages the file's log wrote since the last sync are compared).
* throughput of those push and pull runs (memories a second) beside ``COPY``'s;
* a team at once: 20 homes syncing one agent through the server, 5,000 changes each (random edits
  and touches of the same 2,000 memories, seeded), syncing every 500 changes, all in parallel,
  then converging; checked for lost edits, lost touches and conflicts listed other than once
  (``tests/integration/team.py``), vs ``COPY`` of the same 100,000 changed rows.

A throwaway PostgreSQL server is started for the run (``tests/pg_server.py``). Ours and raw take
turns run by run; each push/pull run gets a fresh database.
"""

from __future__ import annotations

import gc
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from ora_desktop.core import OraHome, open_store
from ora_desktop.core.rawsql import all_rows
from ora_desktop.core.sync import sync_file
from ora_desktop.core.sync.server import COLUMNS, DDL
from tests.pg_server import running_server

from .common import DATA, Row, bench_file, fresh_copy, report

PUSH_PULL = 100_000
CHANGED = 100
ROUNDS = 3
TEAM_HOMES, TEAM_CHANGES, TEAM_MEMORIES, TEAM_PER_SYNC = 20, 5_000, 2_000, 500


def _raw_push(path: Path, url: str) -> int:
    """The floor: the same rows read from SQLite, COPYed into the same table."""
    conn = sqlite3.connect(path)
    rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM memories WHERE sync_status IS NOT 'local_only'")
    with psycopg.connect(url) as pg, pg.cursor() as cur:
        cur.execute(DDL)
        with cur.copy(f"COPY ora_memories (site, agent, {', '.join(COLUMNS)}) FROM STDIN") as copy:
            n = 0
            for row in rows:
                copy.write_row(("bench", "raw", *row))
                n += 1
    conn.close()
    return n


def _raw_pull(url: str, target: Path) -> int:
    """The floor: COPY the rows out and insert them into an empty seed file in one transaction."""
    from ora_desktop.core.schema import create_database

    create_database(target)
    conn = sqlite3.connect(target, isolation_level=None)
    cols = ", ".join(COLUMNS)
    with psycopg.connect(url) as pg, pg.cursor() as cur:
        conn.execute("BEGIN IMMEDIATE")
        sql = f"INSERT INTO memories ({cols}, synced_at, sync_status) VALUES ({', '.join('?' * len(COLUMNS))}, " \
              "datetime('now'), 'synced')"
        with cur.copy(f"COPY (SELECT {cols} FROM ora_memories WHERE NOT deleted) TO STDOUT") as copy:
            batch = []
            n = 0
            for row in copy.rows():
                batch.append(row)
                if len(batch) == 5000:
                    conn.executemany(sql, batch)
                    n += len(batch)
                    batch = []
            conn.executemany(sql, batch)
            n += len(batch)
        conn.execute("COMMIT")
    conn.close()
    return n


def _raw_incremental(path: Path, url: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM memories WHERE sync_status = 'pending'").fetchall()
    cols = ", ".join(COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:])
    with psycopg.connect(url) as pg, pg.cursor() as cur:
        cur.execute(f"CREATE TEMP TABLE p ON COMMIT DROP AS SELECT {cols} FROM ora_memories WITH NO DATA")
        with cur.copy(f"COPY p ({cols}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute(f"INSERT INTO ora_memories (site, agent, {cols}) SELECT 'bench', 'raw', {cols} FROM p "
                    f"ON CONFLICT (site, agent, id) DO UPDATE SET {updates}")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE memories SET sync_status = 'synced', synced_at = datetime('now') "
                 "WHERE id IN (SELECT value FROM json_each(?))", (str([r[0] for r in rows]).replace("'", '"'),))
    conn.execute("COMMIT")
    conn.close()


def _timed(fn) -> float:
    gc.collect()
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _change_here(path: Path, round_: int) -> None:
    with open_store(path) as store:
        ids = [r[0] for r in all_rows(store,
            "SELECT id FROM memories WHERE sync_status = 'synced' ORDER BY rowid LIMIT ? OFFSET ?",
            (CHANGED, 1000 * round_))]
        store.update_many(ids, importance=7 + round_ % 3)


def _change_on_server(url: str, site: str, agent: str, round_: int) -> None:
    with psycopg.connect(url) as pg:
        pg.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (f"ora-desktop:{site}/{agent}",))
        pg.execute(
            "UPDATE ora_memories SET content = content || ' (edited elsewhere)', updated_at = "
            "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), change = nextval('ora_memories_change_seq') "
            "WHERE (site, agent, id) IN (SELECT site, agent, id FROM ora_memories WHERE site = %s AND agent = %s "
            "AND NOT deleted ORDER BY id OFFSET %s LIMIT %s)", (site, agent, 5000 + 1000 * round_, CHANGED))
        pg.commit()


def _team(server) -> Row:
    """20 homes at once (see the module's docstring), beside COPY of the same number of rows."""
    from tests.integration.team import problems, run_team

    root = DATA / "scratch" / "team"
    if root.exists():
        import shutil

        shutil.rmtree(root)
    url = server.new_database("team")
    team = run_team(url, root, homes=TEAM_HOMES, memories=TEAM_MEMORIES, changes=TEAM_CHANGES,
                    per_sync=TEAM_PER_SYNC)
    found = problems(team)
    conflicts = sum(team.decided.values())
    print(f"  (team: {team.changes:,} changes by {TEAM_HOMES} homes in {team.seconds:.1f} s, {conflicts:,} conflicts "
          f"settled, {'no problems' if not found else f'{len(found)} PROBLEMS: ' + '; '.join(found[:5])})")
    raw_url = server.new_database("rawteam")
    rows = [(f"mem-{n:08d}", f"home {n % TEAM_HOMES} change {n}", "fact", 5, n % 7, "2026-01-01 00:00:00", 0.5,
             "[]", None, "2026-01-01 00:00:00", "2026-01-01 00:00:00", None) for n in range(team.changes)]

    def copy_in() -> None:
        with psycopg.connect(raw_url) as pg, pg.cursor() as cur:
            cur.execute(DDL)
            with cur.copy(f"COPY ora_memories (site, agent, {', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(("bench", "raw", *row))

    raw = _timed(copy_in)
    return Row(f"team: {TEAM_HOMES} homes x {TEAM_CHANGES:,} changes at once", team.seconds, raw,
               f"converged, nothing lost: {'yes' if not found else 'NO'}", unit="s")


def _held_open(big: Path, url: str, raw: list[float]) -> Row:
    """The same incremental push while a store holds the file open (the window): the sync
    compares only what the file's change feed heard since the last sync (``core/sync/heard.py``)."""
    held = []
    with open_store(big) as window:
        window.count()
        sync_file(big, url)  # the first sync of this process: the full pass, and its cursor
        for i in range(ROUNDS):
            _change_here(big, i + 2 * ROUNDS)
            held.append(_timed(lambda: sync_file(big, url)))
    return Row(f"incremental: {CHANGED} changed here, the file held open (the window)", statistics.median(held),
               statistics.median(raw), f"runs {min(held):.2f}-{max(held):.2f} s")


#: Another program holding the file open (an agent, an MCP server) until its stdin closes.
HOLD = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM memories').fetchone(); "
        "print('open', flush=True); sys.stdin.read()")


def _held_elsewhere(big: Path, url: str, raw: list[float]) -> Row:
    """The same incremental push while another process holds the file open and none here does
    (the command line, the daemon): the sync follows the file's log from the last sync's place in
    it (``core/sync/logged.py``)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(big)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    held = []
    try:
        holder.stdout.readline()
        sync_file(big, url)  # the log starts with this one's writes: no place in it to keep yet
        sync_file(big, url)  # the full pass, and the place in the log the next one starts from
        for i in range(ROUNDS):
            _change_here(big, i + 3 * ROUNDS)
            results = []
            held.append(_timed(lambda results=results: results.append(sync_file(big, url))))
            assert results[0].pushed == CHANGED, results[0].summary
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    return Row(f"incremental: {CHANGED} changed, the file held open by another process", statistics.median(held),
               statistics.median(raw), f"runs {min(held):.2f}-{max(held):.2f} s")


def run(memories: int) -> None:
    rows: list[Row] = []
    with running_server() as server:
        small = bench_file(PUSH_PULL, name="sync")
        push, raw_push, pull, raw_pull = [], [], [], []
        for i in range(ROUNDS):
            copy = fresh_copy(small, f"push-{i}.site.db")
            target = DATA / "scratch" / f"home-{i}" / "sites" / copy.parent.name / copy.name
            url = server.new_database(f"push{i}")
            push.append(_timed(lambda url=url, copy=copy: sync_file(copy, url)))
            raw_url = server.new_database(f"rawpush{i}")
            raw_push.append(_timed(lambda raw_url=raw_url: _raw_push(small, raw_url)))
            home = OraHome(target.parents[2])
            if target.exists():
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{target}{suffix}").unlink(missing_ok=True)
            fresh = home.create_agent(copy.parent.name, copy.name[: -len(".site.db")])
            pull.append(_timed(lambda url=url, fresh=fresh: sync_file(fresh, url)))
            raw_target = DATA / "scratch" / f"rawpull-{i}.site.db"
            for suffix in ("", "-wal", "-shm"):
                Path(f"{raw_target}{suffix}").unlink(missing_ok=True)
            raw_pull.append(_timed(lambda raw_url=raw_url, raw_target=raw_target: _raw_pull(raw_url, raw_target)))
        with open_store(small, readonly=True) as store:
            count = store.count(sync_statuses=("pending", "synced"), superseded="show")
        rows.append(Row(f"push {count:,} memories (first sync)", statistics.median(push), statistics.median(raw_push),
                        f"runs {min(push):.2f}-{max(push):.2f} s"))
        rows.append(Row(f"pull {count:,} memories into an empty file", statistics.median(pull),
                        statistics.median(raw_pull), f"runs {min(pull):.2f}-{max(pull):.2f} s"))
        rows.append(Row("push throughput (vs COPY in)", count / statistics.median(push),
                        count / statistics.median(raw_push), unit="rows/s"))
        rows.append(Row("pull throughput (vs COPY out)", count / statistics.median(pull),
                        count / statistics.median(raw_pull), unit="rows/s"))
        rows.append(_team(server))

        big = fresh_copy(bench_file(memories), "incremental.site.db")
        url = server.new_database("incremental")
        started = time.perf_counter()
        first = sync_file(big, url)
        print(f"  (first sync of the {memories:,}-memory file: pushed {first.pushed:,} in "
              f"{time.perf_counter() - started:.1f} s)")
        raw_url = server.new_database("rawincremental")
        with psycopg.connect(raw_url) as pg:
            pg.execute(DDL)
        site, agent = big.parent.name, big.name[: -len(".site.db")]
        here, there, raw = [], [], []
        for i in range(ROUNDS):
            _change_here(big, i)
            here.append(_timed(lambda: sync_file(big, url)))
            _change_on_server(url, site, agent, i)
            there.append(_timed(lambda: sync_file(big, url)))
            _change_here(big, i + ROUNDS)
            raw.append(_timed(lambda: _raw_incremental(big, raw_url)))
            with open_store(big, readonly=True) as store:
                assert store.count(sync_statuses=("pending",), superseded="show") == 0
        rows.append(Row(f"incremental: {CHANGED} changed here ({memories:,} file)", statistics.median(here),
                        statistics.median(raw), f"< 1 s; runs {min(here):.2f}-{max(here):.2f} s"))
        rows.append(Row(f"incremental: {CHANGED} changed on the server", statistics.median(there),
                        statistics.median(raw), f"< 1 s; runs {min(there):.2f}-{max(there):.2f} s"))
        rows.append(_held_open(big, url, raw))
        rows.append(_held_elsewhere(big, url, raw))
    report(f"sync with PostgreSQL (raw = psycopg COPY into the same table; {ROUNDS} runs each, median)", rows)
