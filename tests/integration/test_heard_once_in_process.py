"""A job, a sync pull or an import run in the window's own process works on a store of its own:
the window's store hears each such commit once, with its ids and who made it (a job, a sync, an
import), never as another program's, and its listeners hear nothing more."""

from __future__ import annotations

import json
from pathlib import Path

from ora_desktop.core import Change, Initiator, open_store
from ora_desktop.core.maintenance.jobs import run_job
from ora_desktop.core.operations.importing import import_memories

from .sync_support import Machine


def heard(store) -> list[Change]:  # noqa: ANN001
    changes = []
    while (change := store.external_change()) is not None:
        changes.append(change)
    return changes


def watched(path: Path):  # noqa: ANN201
    """The window's store of ``path``: its watcher's changes, and what its listeners hear."""
    store = open_store(path)
    assert heard(store) == []
    told: list[Change] = []
    store.subscribe(told.append)
    return store, told


def test_an_in_process_job_is_heard_once_as_a_job(tmp_path: Path):
    machine = Machine(tmp_path, "one")
    with machine.store() as writer:
        kept = writer.add("stays", type="fact").id
        gone = [writer.add(f"expired {i}", type="fact", expires_at="2001-01-01 00:00:00").id for i in range(2)]
    window, told = watched(machine.path)
    report = run_job("cleanup", machine.path, home=machine.home, record=False)
    assert report.outcome == "ok"
    [change] = heard(window)
    assert change.removed == set(gone) and kept not in change.ids
    assert change.initiator is Initiator.JOB and told == []
    window.close()


def test_an_in_process_import_is_heard_once_as_an_import(tmp_path: Path):
    machine = Machine(tmp_path, "one")
    source = tmp_path / "export.jsonl"
    stamp = "2026-01-02 03:04:05"
    source.write_text("".join(json.dumps({"id": f"imp-{i}", "content": f"imported {i}", "type": "fact",
                                          "created_at": stamp, "updated_at": stamp}) + "\n" for i in range(3)))
    window, told = watched(machine.path)
    with open_store(machine.path) as importer:
        import_memories(importer, source)
    [change] = heard(window)
    assert change.added == {"imp-0", "imp-1", "imp-2"}
    assert change.initiator is Initiator.IMPORT and told == []
    window.close()


def test_an_import_in_chunks_is_heard_as_an_import_each_id_once(tmp_path: Path):
    """Each chunk's commit is heard once, as the import's, with the ids it added and replaced:
    the window's store hears them all (none as another program's), the importer's listeners too."""
    machine = Machine(tmp_path, "one")
    with machine.store() as writer:
        kept = [writer.add(f"to be replaced {i}", type="fact").id for i in range(3)]
    source = tmp_path / "export.jsonl"
    stamp = "2030-01-02 03:04:05"
    ids = [f"imp-{i}" for i in range(3000)]
    source.write_text("".join(json.dumps({"id": i, "content": f"imported {i}", "type": "fact", "created_at": stamp,
                                          "updated_at": stamp}) + "\n" for i in [*ids, *kept]))
    window, told = watched(machine.path)
    looked: list[Change] = []  # (the window's watcher looks now and then: here between chunks)
    with open_store(machine.path) as importer:
        mine: list[Change] = []
        importer.subscribe(mine.append)
        import_memories(importer, source, on_conflict="replace", progress=lambda *_: looked.extend(heard(window)))
    looked += heard(window)
    for changes in (looked, mine):
        assert len(changes) > 1 and {c.initiator for c in changes} == {Initiator.IMPORT}, changes
        assert sorted(i for c in changes for i in c.added) == sorted(ids)
        assert sorted(i for c in changes for i in c.changed) == sorted(kept) and not any(c.removed for c in changes)
    assert told == []
    window.close()


def test_an_in_process_sync_pull_is_heard_once_as_a_sync(tmp_path: Path, pg_url: str):
    there, here = Machine(tmp_path, "there"), Machine(tmp_path, "here")
    with there.store() as writer:
        pulled = {writer.add(f"written on another machine {i}", type="fact").id for i in range(3)}
    there.sync(pg_url)
    window, told = watched(here.path)
    result = here.sync(pg_url)
    assert result.pulled == 3
    changes = heard(window)
    assert len(changes) == 1, changes
    assert changes[0].added == pulled and changes[0].initiator is Initiator.SYNC and told == []
    window.close()
