"""Any day of the year: the demo and the jobs with the clock set around month and year ends,
moved forward over the boundary and set back before it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ora_desktop.core import open_store, timestamps
from ora_desktop.core.demo import write_agent, write_demo_home
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.search import parse_query
from ora_desktop.core.timefilter import time_bounds

EDGES = [
    datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC),  # end of a 31-day month
    datetime(2026, 2, 28, 23, 30, tzinfo=UTC),  # end of February, common year
    datetime(2028, 2, 29, 12, 0, tzinfo=UTC),  # leap day
    datetime(2026, 6, 30, 23, 59, tzinfo=UTC),  # end of a 30-day month
    datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC),  # end of the year
    datetime(2027, 1, 1, 0, 0, 0, tzinfo=UTC),  # first second of a year
]


def scalar(path: Path, sql: str, params: tuple = ()) -> object:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("now", EDGES, ids=[f"{e:%Y-%m-%dT%H:%M}" for e in EDGES])
def test_demo_is_sound_at_month_and_year_ends(tmp_path: Path, now: datetime) -> None:
    paths = write_demo_home(tmp_path / "home", memories=1400, seed=4, now=now)
    stamp = timestamps.to_sql(now)
    for path in paths:
        assert scalar(path, "SELECT count(*) FROM memories WHERE julianday(created_at) > julianday(?)", (stamp,)) == 0
        assert scalar(path, "SELECT count(*) FROM memories WHERE julianday(updated_at) < julianday(created_at)") == 0
        assert scalar(path, "SELECT count(*) FROM memories WHERE last_accessed_at IS NOT NULL AND "
                            "julianday(last_accessed_at) > julianday(?)", (stamp,)) == 0
        with open_store(path, readonly=True) as store:
            memories = store.list(limit=None, superseded="show")
            assert not any(m.unparsed for m in memories)
            for first in {m.id for m in memories if m.superseded_by} - {m.superseded_by for m in memories}:
                chain = store.chain(first)
                if not chain.dangling:
                    stamps = [m.created_at for m in chain.members]
                    assert stamps == sorted(stamps, reverse=True), first
    big = paths[0]
    assert scalar(big, "SELECT count(*) FROM memories WHERE julianday(expires_at) < julianday(?)", (stamp,)) > 0
    assert scalar(big, "SELECT count(*) FROM memories WHERE julianday(expires_at) BETWEEN julianday(?) "
                       "AND julianday(?, '+7 days')", (stamp, stamp)) > 0


@pytest.mark.parametrize("now", EDGES, ids=[f"{e:%Y-%m-%dT%H:%M}" for e in EDGES])
def test_jobs_across_the_boundary_and_with_the_clock_set_back(tmp_path: Path, isolated_dirs: Path,
                                                            now: datetime) -> None:
    path = tmp_path / "ora.site.db"
    write_agent(path, 600, seed=9, now=now)
    health = "SELECT total(health_score) FROM memories"

    first = run_job("decay", path, now=now)
    assert first.outcome == "ok" and first.counts["days"] == 1 and first.counts["decayed"] > 0
    after_first = scalar(path, health)
    back = run_job("decay", path, now=now - timedelta(hours=3))  # the clock set back: nothing happens
    assert back.outcome == "ok" and back.counts["days"] == 0 and scalar(path, health) == after_first
    same_day = run_job("decay", path, now=now + timedelta(hours=23))
    assert same_day.counts["days"] == 0
    over = run_job("decay", path, now=now + timedelta(days=1, minutes=1))  # into the next month/year
    assert over.counts["days"] == 1 and scalar(path, health) < after_first
    week = run_job("decay", path, now=now + timedelta(days=8, minutes=1))  # a week later: catches up
    assert week.counts["days"] == 7

    stamp = timestamps.to_sql(now)
    expired = scalar(path, "SELECT count(*) FROM memories WHERE julianday(expires_at) < julianday(?)", (stamp,))
    cleaned = run_job("cleanup", path, now=now)
    assert cleaned.outcome == "ok" and cleaned.counts["expired"] == expired > 0
    assert run_job("cleanup", path, now=now - timedelta(days=1)).counts["expired"] == 0  # clock set back
    soon = scalar(path, "SELECT count(*) FROM memories WHERE julianday(expires_at) < julianday(?, '+8 days')",
                  (stamp,))
    assert soon > 0 and run_job("cleanup", path, now=now + timedelta(days=8)).counts["expired"] == soon
    with open_store(path, readonly=True) as store:
        assert store.count(superseded="show") == 600 - expired - soon


@pytest.mark.parametrize("now", EDGES, ids=[f"{e:%Y-%m-%dT%H:%M}" for e in EDGES])
def test_relative_time_filters_cross_month_and_year_ends(now: datetime) -> None:
    ((_, op, cutoff),) = time_bounds("created", "<7d", now=now)
    assert op == ">" and timestamps.parse(cutoff) == now - timedelta(days=7)
    ((_, op, cutoff),) = time_bounds("expires", "<1mo", now=now)
    assert op == "<" and timestamps.parse(cutoff) == now + timedelta(days=30)
    day = now.strftime("%Y-%m-%d")
    start, end = time_bounds("created", day)
    assert timestamps.parse(end[2]) - timestamps.parse(start[2]) == timedelta(days=1)
    assert parse_query(f"created:{day}").times == (start, end)
