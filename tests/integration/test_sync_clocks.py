"""Clocks that lie and conflicts that can all be found (real PostgreSQL server)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from ora_desktop.core import timestamps
from ora_desktop.core.operations import sync as sync_ops
from ora_desktop.core.sync import CONFLICT, conflicts
from tests.integration.sync_support import Machine

pytestmark = pytest.mark.slow  # a real server
DAY = timedelta(days=1)


@contextlib.contextmanager
def clock(monkeypatch: pytest.MonkeyPatch, skew: timedelta) -> Iterator[None]:
    """This process's clock ``skew`` off (every edit, deletion and sync made inside uses it)."""
    real = timestamps.now
    with monkeypatch.context() as patch:
        patch.setattr(timestamps, "now", lambda: real() + skew)
        yield


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Machine, Machine]:
    return Machine(tmp_path, "skewed"), Machine(tmp_path, "right")


def _shared(url: str, a: Machine, b: Machine, text: str = "The staging host is stage-1") -> str:
    with b.store() as store:
        memory = store.add(text, type="fact")
    b.sync(url)
    a.sync(url)
    return memory.id


@pytest.mark.parametrize("skew", [DAY, -DAY], ids=["a day ahead", "a day behind"])
def test_the_later_edit_wins_whatever_the_clocks_say(pg_url: str, homes, monkeypatch, skew: timedelta) -> None:
    a, b = homes  # a's clock is skewed, b's is right
    memory_id = _shared(pg_url, a, b)
    first, second = (a, b) if skew > timedelta(0) else (b, a)
    # The stale edit first (on the clock that runs ahead it looks a day newer), the real last edit 2.5 s later.
    for machine, text in ((first, "stale edit"), (second, "the last edit")):
        with clock(monkeypatch, skew if machine is a else timedelta(0)), machine.store() as store:
            store.update(memory_id, content=text)
        time.sleep(2.5 if machine is first else 0)
    with clock(monkeypatch, timedelta(0)):
        b_result = b.sync(pg_url)
    with clock(monkeypatch, skew):
        a_result = a.sync(pg_url)
    with clock(monkeypatch, timedelta(0)):
        b.sync(pg_url)
    assert a.memories()[memory_id].content == b.memories()[memory_id].content == "the last edit"
    assert b_result.warnings == ()
    assert a_result.clock_offset == pytest.approx(-skew.total_seconds(), abs=3)
    assert any("clock is 1 day" in w for w in a_result.warnings) and "clock is 1 day" in a_result.summary
    # The decision and its basis are kept with the conflict, listed with the losing version.
    with a.store(readonly=True) as store:
        page = conflicts(store)
    assert [(e.memory_id, e.kind) for e in page.entries] == [(memory_id, "edit")]
    assert "in server time" in page.entries[0].basis and "this clock" in page.entries[0].basis
    assert page.entries[0].kept.memory.content == "stale edit"


def test_a_delete_overridden_by_a_later_edit_is_a_conflict_on_both_machines(pg_url: str, homes) -> None:
    a, b = homes
    memory_id = _shared(pg_url, a, b, "The office wifi password rotates monthly")
    with a.store() as store:
        store.delete(memory_id)
    a.sync(pg_url)  # the tombstone reaches the server
    time.sleep(2.5)
    with b.store() as store:
        store.update(memory_id, content="The office wifi password rotates weekly")
    b_result = b.sync(pg_url)  # B's later edit beats the delete and brings the memory back
    a_result = a.sync(pg_url)
    assert a.memories()[memory_id].content == "The office wifi password rotates weekly"
    assert [(d.memory_id, d.kind, d.winner) for d in b_result.conflicts] == [(memory_id, "delete", "this file")]
    assert [(d.memory_id, d.kind, d.winner) for d in a_result.conflicts] == [(memory_id, "delete", "server")]
    for machine in (a, b):
        with machine.store(readonly=True) as store:
            page = conflicts(store)
        assert [(e.memory_id, e.kind) for e in page.entries] == [(memory_id, "delete")], machine.home.root
    # On A the deletion is kept as the conflict's losing side, no longer as a plain, stale deletion.
    with a.store(readonly=True) as store:
        assert [t.reason for t in store.trash() if t.memory.id == memory_id] == [CONFLICT]
    assert a.sync(pg_url).conflicts == ()  # listed once: a later sync does not record it again
    with a.store(readonly=True) as store:
        assert conflicts(store).total == 1


def test_conflicts_come_in_pages_with_the_total(pg_url: str, homes) -> None:
    a, b = homes
    ids = []
    with b.store() as store:
        ids = [store.add(f"Fact number {n}").id for n in range(7)]
    b.sync(pg_url)
    a.sync(pg_url)
    for machine, tag in ((a, "A"), (b, "B")):
        with machine.store() as store:
            for memory_id in ids:
                store.update(memory_id, content=f"edited on {tag}: {memory_id}")
    b.sync(pg_url)
    assert len(a.sync(pg_url).conflicts) == 7
    first = sync_ops.conflicts(a.path, limit=3)
    second = sync_ops.conflicts(a.path, limit=3, offset=3)
    last = sync_ops.conflicts(a.path, limit=3, offset=6)
    assert (first.total, len(first.entries), len(second.entries), len(last.entries)) == (7, 3, 3, 1)
    assert sorted(e.memory_id for p in (first, second, last) for e in p.entries) == sorted(ids)
    with pytest.raises(Exception, match="limit of at least 1"):
        sync_ops.conflicts(a.path, limit=0)


def test_status_shows_a_last_sync_in_the_future_as_a_clock_problem(pg_url: str, homes, monkeypatch) -> None:
    a, _ = homes
    with clock(monkeypatch, DAY):
        a.sync(pg_url)  # the last sync is recorded on a clock a day ahead
    status = sync_ops.status(a.path)
    assert status.clock_problem is not None and "in the future" in status.clock_problem
    assert "clock" in status.clock_problem
