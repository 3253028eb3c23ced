"""The window edits on two threads while an agent process commits as fast as it can: every commit
is heard once, by whom it made it. Ours by the store's listeners (the person's), the agent's by
the feed; no change the feed says is another program's names a memory only we edited."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ora_desktop.core import Change, Initiator, open_store
from ora_desktop.core.operations import edits

from ..conftest import raw_seed_db
from . import agent_writer

OURS = [f"m{i:02d}" for i in range(30)]


def test_commits_interleaved_with_an_agents_are_heard_once_each(tmp_path: Path):
    path = raw_seed_db(tmp_path / "busy.site.db", [(m, f"memory {m}", "fact", 5) for m in OURS])
    log, stop = tmp_path / "agent.log", tmp_path / "stop"
    store = open_store(path)
    assert store.external_change() is None
    told: list[Change] = []
    store.subscribe(told.append)
    writer = agent_writer.start(path, "ag", log, stop)
    try:
        while not log.exists() or len(log.read_text().split()) < 20:  # the agent is writing
            time.sleep(0.01)
        heard: list[Change] = []

        def edit(ids: list[str]) -> None:
            for n, memory_id in enumerate(ids):
                edits.edit(store, memory_id, {"importance": 1 + n % 9})
        threads = [threading.Thread(target=edit, args=(OURS[k::2],)) for k in (0, 1)]
        for thread in threads:
            thread.start()
        while any(t.is_alive() for t in threads):
            if (change := store.external_change()) is not None:
                heard.append(change)
            time.sleep(0.002)  # (the window's watcher looks every few milliseconds at most)
        for thread in threads:
            thread.join()
    finally:
        stop.touch()
        writer.wait(timeout=30)
    while (change := store.external_change()) is not None:
        heard.append(change)
    store.close()

    assert sorted(m for c in told for m in c.ids) == OURS and len(told) == len(OURS)  # ours, once each
    assert all(c.initiator is Initiator.USER for c in told)
    named = [c for c in heard if c]
    assert named  # (the agent's commits were heard by id)
    assert all(c.initiator is Initiator.EXTERNAL and not c.ids & set(OURS) for c in named)
    agents = set(log.read_text().split())
    if len(named) == len(heard):  # (a reload, after the log restarted, names no ids)
        assert set().union(*(c.added for c in named)) == agents
