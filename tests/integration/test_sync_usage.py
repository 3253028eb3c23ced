"""Usage merges between machines; raw agent updates travel (real PostgreSQL, real processes)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core.sync import conflicts
from tests.integration.sync_support import Machine
from tests.integration.sync_support import agent_sql as _raw

pytestmark = pytest.mark.slow  # a real server


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Machine, Machine]:
    return Machine(tmp_path, "laptop"), Machine(tmp_path, "desk")


def _shared(url: str, a: Machine, b: Machine, health: float = 0.5) -> str:
    """One memory both machines hold, synced, with a known health and no use yet."""
    with a.store() as store:
        memory = store.add("The release checklist lives in docs/release.md", type="fact", importance=5)
        store.update(memory.id, health_score=health)
    a.sync(url)
    b.sync(url)
    return memory.id


def _usage(machine: Machine, memory_id: str) -> tuple:
    m = machine.memories()[memory_id]
    return m.access_count, m.last_accessed_at, round(m.health_score, 6)


def test_touches_on_two_machines_add_up_everywhere(pg_url: str, homes) -> None:
    a, b = homes
    memory_id = _shared(pg_url, a, b)
    with a.store() as store:
        for _ in range(5):
            store.touch(memory_id)
    with b.store() as store:
        store.touch(memory_id)
        store.update(memory_id, importance=8)
    b.sync(pg_url)
    result = a.sync(pg_url)
    b.sync(pg_url)
    assert result.conflicts == ()  # a touch is not a content conflict
    assert _usage(a, memory_id) == _usage(b, memory_id)
    count, last, health = _usage(a, memory_id)
    assert count == 6 and last is not None and health == pytest.approx(1.0)
    assert a.memories()[memory_id].importance == 8 == b.memories()[memory_id].importance


def test_a_content_edit_elsewhere_does_not_erase_a_touch_here(pg_url: str, homes) -> None:
    a, b = homes
    memory_id = _shared(pg_url, a, b)
    with a.store() as store:
        store.touch(memory_id)
        store.touch(memory_id)
    with b.store() as store:
        store.update(memory_id, content="The release checklist lives in docs/releasing.md")
    b.sync(pg_url)
    result = a.sync(pg_url)
    b.sync(pg_url)
    assert result.conflicts == ()
    for machine in (a, b):
        m = machine.memories()[memory_id]
        assert (m.content, m.access_count, round(m.health_score, 6)) == (
            "The release checklist lives in docs/releasing.md", 2, 0.7)
    assert a.view() == b.view()


def test_a_day_decayed_on_both_machines_counts_once_and_keeps_a_touch(pg_url: str, homes) -> None:
    a, b = homes
    memory_id = _shared(pg_url, a, b)
    lower = "UPDATE memories SET health_score = health_score - 0.01 WHERE id = ?"  # what one day's decay does
    _raw(a.path, lower, memory_id)
    _raw(b.path, lower, memory_id)
    a.sync(pg_url)
    b.sync(pg_url)
    a.sync(pg_url)
    assert _usage(a, memory_id)[2] == _usage(b, memory_id)[2] == pytest.approx(0.49)
    # A touch on one machine and the next day's decay on the other: both count, once.
    with a.store() as store:
        store.touch(memory_id)
    _raw(b.path, lower, memory_id)
    a.sync(pg_url)
    b.sync(pg_url)
    a.sync(pg_url)
    assert _usage(a, memory_id) == _usage(b, memory_id)
    assert _usage(a, memory_id)[0] == 1 and _usage(a, memory_id)[2] == pytest.approx(0.58)


def test_an_agents_raw_update_travels_though_it_leaves_sync_status_alone(pg_url: str, homes) -> None:
    a, b = homes
    memory_id = _shared(pg_url, a, b)
    _raw(a.path, "UPDATE memories SET content = 'Checklist: docs/release.md, then tag' WHERE id = ?", memory_id)
    with sqlite3.connect(a.path) as conn:
        assert conn.execute("SELECT sync_status FROM memories WHERE id = ?", (memory_id,)).fetchone() == ("synced",)
    assert a.sync(pg_url).pushed == 1
    b.sync(pg_url)
    assert b.memories()[memory_id].content == "Checklist: docs/release.md, then tag"


def test_a_raw_update_is_never_silently_overwritten_by_a_pull(pg_url: str, homes) -> None:
    a, b = homes
    memory_id = _shared(pg_url, a, b)
    _raw(a.path, "UPDATE memories SET content = 'Raw change by the agent on A' WHERE id = ?", memory_id)
    with b.store() as store:
        store.update(memory_id, content="Edited on B")
    b.sync(pg_url)
    result = a.sync(pg_url)
    assert [d.memory_id for d in result.conflicts] == [memory_id]
    with a.store(readonly=True) as store:
        kept = {e.kept.memory.content for e in conflicts(store).entries if e.kept}
    current = a.memories()[memory_id].content
    assert {current} | kept == {"Raw change by the agent on A", "Edited on B"}


def test_a_sync_stopped_after_its_push_counts_no_touch_twice(pg_url: str, homes, monkeypatch) -> None:
    from ora_desktop.core.sync import engine

    a, b = homes
    memory_id = _shared(pg_url, a, b)
    with a.store() as store:
        for _ in range(3):
            store.touch(memory_id)

    def stop(*args, **kwargs):
        raise KeyboardInterrupt("stopped between the server's commit and the local mark")

    with monkeypatch.context() as patch:
        patch.setattr(engine.local, "mark_pushed", stop)
        with pytest.raises(KeyboardInterrupt):
            a.sync(pg_url)  # the server has the touches; the file does not know it sent them
    with a.store() as store:
        store.touch(memory_id)  # one more before the next sync
    a.sync(pg_url)
    b.sync(pg_url)
    assert _usage(a, memory_id)[0] == _usage(b, memory_id)[0] == 4
