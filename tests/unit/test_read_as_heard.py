"""``Store.read_as_heard``: a read taken exactly where the changes heard so far leave the file, so
that a count moved by each later change's ids stays exact (the window's sidebar)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.operations.stats import file_health

from ..conftest import raw_seed_db
from .log_support import agent

N = 20
ROWS = [(f"m{i}", f"memory {i}", "fact", 5) for i in range(N)]
INSERT = ("INSERT INTO memories (id, content, created_at, updated_at) "
          "VALUES ('{}', 'an agent wrote this', datetime('now'), datetime('now'))")


def count(store) -> int:  # noqa: ANN001
    return file_health(store).count


@pytest.fixture
def watched(tmp_path: Path):  # noqa: ANN201
    path = raw_seed_db(tmp_path / "agent.site.db", ROWS)
    store = open_store(path)
    assert store.external_change() is None  # the first look takes the file as seen
    yield path, store
    store.close()


def test_an_agents_commit_before_the_read_is_heard_with_it_and_counted_in_it(watched):
    path, store = watched
    agent(path, INSERT.format("new-1"))
    change, counted = store.read_as_heard(count)
    assert change is not None and change.added == {"new-1"}
    assert counted == N + 1
    assert store.external_change() is None  # taken from the watcher: not heard twice


def test_a_commit_during_the_read_is_after_its_snapshot_and_heard_after_it(watched):
    path, store = watched

    def count_while_an_agent_commits(store) -> int:  # noqa: ANN001
        first = count(store)
        agent(path, INSERT.format("new-2"))
        assert count(store) == first  # one snapshot
        return first

    change, counted = store.read_as_heard(count_while_an_agent_commits)
    assert change is None and counted == N
    assert store.external_change().added == {"new-2"}  # moves the count read by one: exact


def test_a_commit_between_the_look_and_the_read_makes_it_unsure(watched, monkeypatch):
    path, store = watched
    look = store._watcher.looked

    def look_then_an_agent_commits():  # noqa: ANN202
        answer = look()
        agent(path, INSERT.format("new-3"))
        return answer

    monkeypatch.setattr(store._watcher, "looked", look_then_an_agent_commits)
    _change, counted = store.read_as_heard(count)
    assert counted is None  # its count holds a commit not heard yet: it would be moved twice
    monkeypatch.undo()
    assert store.external_change().added == {"new-3"}
    assert store.read_as_heard(count) == (None, N + 1)


def test_a_commit_of_ours_not_yet_told_makes_it_unsure(watched):
    _path, store = watched
    telling, told = threading.Event(), threading.Event()

    def slow_listener(_change) -> None:  # noqa: ANN001
        telling.set()
        told.wait(10)

    unsubscribe = store.subscribe(slow_listener)
    writer = threading.Thread(target=store.add, kwargs={"content": "ours", "id": "ours-1"})
    writer.start()
    try:
        assert telling.wait(10)
        assert store.read_as_heard(count) == (None, None)  # committed, but the views not told yet
    finally:
        told.set()
        writer.join(10)
        unsubscribe()
    assert store.read_as_heard(count) == (None, N + 1)
