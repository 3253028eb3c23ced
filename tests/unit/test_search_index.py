"""The sidecar index: incremental refresh, rebuilds after VACUUM / deletion / version change,
a replaced file, progress and cancel."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from ora_desktop.core.search import BuildTask, drop_index, ensure_index, index_state, search, sidecar_path
from ora_desktop.core.search.index import get_index
from ora_desktop.core.search.sidecar import INDEX_VERSION
from tests.unit.search_support import ids, insert, make_file


@pytest.fixture
def db(ora_home: Path) -> Path:
    rows = [{"id": f"m{i}", "content": f"filler memory number {i} about gardening"} for i in range(300)]
    rows.append({"id": "needle", "content": "the quick brown fox"})
    return make_file(ora_home / "sites" / "s" / "ora.site.db", rows)


def writer(db: Path) -> sqlite3.Connection:
    """Another connection writing like an agent (WAL, autocommit per statement)."""
    return sqlite3.connect(db, isolation_level=None)


def sidecar_rows(db: Path) -> int:
    with sqlite3.connect(sidecar_path(db)) as conn:
        return conn.execute("SELECT count(*) FROM docs").fetchone()[0]


def test_first_search_builds_with_progress(db: Path) -> None:
    seen: list[tuple[int, int]] = []
    result = search(db, "fox", progress=lambda done, total: seen.append((done, total)))
    assert ids(result) == ["needle"]
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == 2 * 301
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    state = index_state(db)
    assert state.built and state.rows == 301 and not state.stale and not state.tags_pending


def test_refresh_sees_inserts_updates_and_deletes(db: Path) -> None:
    assert ids(search(db, "fox")) == ["needle"]
    conn = writer(db)
    insert(conn, [{"id": "new", "content": "a lazy dog and a fox", "updated_at": "2019-01-01 00:00:00"}])
    assert set(ids(search(db, "fox"))) == {"needle", "new"}
    conn.execute("UPDATE memories SET content = 'the quick brown cat', updated_at = datetime('now') "
                 "WHERE id = 'needle'")
    assert ids(search(db, "fox")) == ["new"]
    assert ids(search(db, "cat")) == ["needle"]
    conn.execute("DELETE FROM memories WHERE id = 'new'")
    assert ids(search(db, "fox")) == []
    conn.execute("DELETE FROM memories WHERE id IN ('m5', 'm250')")
    assert index_state(db).stale
    assert "m5" not in ids(search(db, "gardening", limit=1000))
    assert sidecar_rows(db) == 299
    conn.close()


def test_delete_then_insert_with_the_same_count_is_seen(db: Path) -> None:
    search(db, "fox")
    conn = writer(db)
    conn.execute("DELETE FROM memories WHERE id = 'needle'")
    insert(conn, [{"id": "other", "content": "unrelated text", "updated_at": "2018-01-01 00:00:00"}])
    assert ids(search(db, "fox")) == []
    assert ids(search(db, "unrelated")) == ["other"]
    assert sidecar_rows(db) == 301


def test_rowid_reused_after_deleting_the_last_row(db: Path) -> None:
    search(db, "fox")
    conn = writer(db)
    conn.execute("DELETE FROM memories WHERE id = 'needle'")
    insert(conn, [{"id": "reuse", "content": "reused rowid text", "updated_at": "2018-01-01 00:00:00"}])
    assert ids(search(db, "fox")) == []
    assert ids(search(db, "reused")) == ["reuse"]


def test_vacuum_renumbering_is_detected(db: Path) -> None:
    search(db, "fox")
    conn = writer(db)
    conn.execute("DELETE FROM memories WHERE id IN (" + ",".join(f"'m{i}'" for i in range(0, 200)) + ")")
    conn.execute("VACUUM")
    insert(conn, [{"id": "after", "content": "fresh fox after vacuum", "updated_at": "2018-01-01 00:00:00"}])
    conn.execute("UPDATE memories SET content = 'no animals here', updated_at = datetime('now') "
                 "WHERE id = 'needle'")
    assert ids(search(db, "fox")) == ["after"]
    assert len(ids(search(db, "gardening", limit=1000))) == 100
    assert sidecar_rows(db) == 102


def test_reload_that_renumbers_rowids_is_detected(db: Path) -> None:
    search(db, "fox")
    conn = writer(db)
    conn.execute("CREATE TEMP TABLE keep AS SELECT * FROM memories WHERE id NOT IN ('m1', 'm2', 'm3')")
    conn.execute("DELETE FROM memories")
    conn.execute("INSERT INTO memories SELECT * FROM keep ORDER BY id DESC")  # every rowid changes
    conn.execute("UPDATE memories SET content = 'the slow red fox', updated_at = datetime('now') WHERE id = 'm7'")
    assert set(ids(search(db, "fox"))) == {"needle", "m7"}
    assert sidecar_rows(db) == 298
    with sqlite3.connect(sidecar_path(db)) as side, sqlite3.connect(db) as src:
        hints = dict(side.execute("SELECT mid, srow FROM docs"))
        assert hints == dict(src.execute("SELECT id, rowid FROM memories"))


def test_replaced_file_is_reconciled(db: Path, tmp_path: Path) -> None:
    backup = tmp_path / "backup.site.db"
    shutil.copyfile(db, backup)
    search(db, "fox")
    conn = writer(db)
    conn.execute("UPDATE memories SET content = 'changed to wolf', updated_at = datetime('now') WHERE id = 'needle'")
    conn.close()
    assert ids(search(db, "wolf")) == ["needle"]
    tmp = db.with_suffix(".tmp")
    shutil.copyfile(backup, tmp)
    tmp.replace(db)  # a restore: another inode, older content...
    for suffix in ("-wal", "-shm"):  # ...whose stale WAL is dropped, as restore does (the index held it open)
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert ids(search(db, "fox")) == ["needle"]
    assert ids(search(db, "wolf")) == []


def test_deleted_cache_and_old_version_rebuild(db: Path) -> None:
    search(db, "fox")
    assert drop_index(db) is True
    assert not index_state(db).built
    assert ids(search(db, "fox")) == ["needle"]
    with sqlite3.connect(sidecar_path(db)) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", (json.dumps(0),))
    state = index_state(db)
    assert not state.built and "version" in state.reason
    assert ids(search(db, "fox")) == ["needle"]
    assert index_state(db).version == INDEX_VERSION


def test_damaged_sidecar_is_rebuilt(db: Path) -> None:
    search(db, "fox")
    get_index(db).close()
    sidecar_path(db).write_bytes(b"garbage" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(sidecar_path(db)) + suffix).unlink(missing_ok=True)
    assert ids(search(db, "fox")) == ["needle"]


def test_search_without_waiting_uses_the_fallback(db: Path) -> None:
    result = search(db, "fox", wait=False)
    assert result.fallback and "index" in result.note and ids(result) == ["needle"]
    assert not index_state(db).built


def test_cancel_leaves_no_partial_index(db: Path) -> None:
    state = ensure_index(db, cancel=lambda: True)
    assert not state.built and state.reason == "cancelled"
    assert not sidecar_path(db).exists()
    assert not list(sidecar_path(db).parent.glob("*.building-*"))


def test_cancel_during_tags_keeps_a_searchable_index_and_resumes(db: Path) -> None:
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return index_state(db).built  # cancel as soon as the text phase is in place

    state = ensure_index(db, cancel=cancel)
    assert state.built and state.tags_pending and state.reason == "cancelled"
    assert ids(search(db, "fox")) == ["needle"]
    assert ids(search(db, "tag:function=x")) == []  # waits for the tags
    assert not index_state(db).tags_pending


def test_background_build_task(db: Path) -> None:
    done = threading.Event()
    progress: list[tuple[int, int]] = []
    task = BuildTask(db, on_progress=lambda d, t: progress.append((d, t)), on_done=lambda s: done.set())
    assert done.wait(30)
    state = task.wait(5)
    assert task.done and state is not None and state.built and task.error is None
    assert progress[-1] == (602, 602)
    task = BuildTask(db, rebuild=True)
    task.cancel()
    task.wait(30)
    assert index_state(db).built  # a cancelled rebuild keeps the previous index


def test_another_file_at_the_same_path_after_build(db: Path, ora_home: Path) -> None:
    search(db, "fox")
    other = make_file(ora_home / "other.site.db", [{"id": "x", "content": "completely different fox"}])
    shutil.copyfile(other, db)
    assert ids(search(db, "fox")) == ["x"]


@pytest.mark.parametrize("file_settled", [False, True])
def test_a_refresh_vouches_only_for_a_file_that_has_settled(db: Path, monkeypatch: pytest.MonkeyPatch,
                                                           file_settled: bool) -> None:
    """A writer appends its commit to the -wal before it publishes it in -shm: a refresh looking in
    between records the new file stats but reads a snapshot without that commit. Those stats must
    not let later searches skip looking again, or the agent's last write stays unsearchable."""
    from ora_desktop.core.search import index as index_module
    from ora_desktop.core.search.refresh import RefreshMixin

    search(db, "fox")
    conn = writer(db)
    conn.execute("UPDATE memories SET content = 'a penguin note', updated_at = '2030-01-01 00:00:00' "
                 "WHERE id = 'needle'")
    real_apply = RefreshMixin._apply

    def snapshot_without_the_commit(self, conn_, candidates, compare=False):  # noqa: ANN001, ANN202
        return real_apply(self, conn_, [c for c in candidates if c[1] != "needle"], compare)

    monkeypatch.setattr(index_module, "settled", lambda stats: file_settled)
    monkeypatch.setattr(RefreshMixin, "_apply", snapshot_without_the_commit)
    assert ids(search(db, "penguin")) == []  # that refresh could not see it
    monkeypatch.setattr(RefreshMixin, "_apply", real_apply)
    # Nothing changes on disk any more (the writer's last write). Just after that write the
    # stats vouched for nothing, so the next search looks again and finds it; only a refresh
    # of a file quiet for SETTLE_NS may let later searches skip.
    assert ids(search(db, "penguin")) == ([] if file_settled else ["needle"])
    conn.close()


def test_searching_leaves_nothing_beside_the_agent_file_once_closed(db: Path) -> None:
    # The search index reads the file under SQLite's locks: its -wal/-shm exist while the index
    # holds the file, and the anchor connection, closed last, removes them (sidecar.attach_source).
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    before = sorted(p.name for p in db.parent.iterdir())
    assert ids(search(db, "fox")) == ["needle"]
    ensure_index(db, rebuild=True)
    assert ids(search(db, "fox")) == ["needle"]
    get_index(db).close()
    assert sorted(p.name for p in db.parent.iterdir()) == before
