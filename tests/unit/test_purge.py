"""Purge: forgetting on purpose, completely, and never by accident (bad input changes nothing)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.cli import main
from ora_desktop.core import DatabaseLocked, ReadOnlyDatabase, open_store, scrub
from ora_desktop.core.backup import create_backup
from ora_desktop.core.operations.purge import empty_trash, plan_purge, purge
from ora_desktop.core.rawsql import all_rows, run_sql
from ora_desktop.core.search import ensure_index, search
from ora_desktop.core.search.sidecar import sidecar_path

SECRET = "zqx7secretvortex9token"


@pytest.fixture
def db(seed_db: Callable[..., Path]) -> Path:
    path = seed_db([("a", "alpha memory", "fact", 5), ("b", "bravo memory", "fact", 5)])
    with open_store(path) as store:
        store.add(f"the token is {SECRET}", id="s", related_to=["a"])
        store.link("a", "s")
        store.supersede("b", "s")
    return path


def _digest(path: Path) -> str:
    return "".join(hashlib.sha256(Path(f"{path}{s}").read_bytes()).hexdigest()
                   for s in ("", "-wal") if Path(f"{path}{s}").exists())


def _holds(path: Path) -> bool:
    return bool(scrub.find_residue([path], [SECRET.encode()]))


def test_purge_of_a_live_memory_removes_row_links_index_and_bytes(db: Path) -> None:
    ensure_index(db)
    assert len(search(db, SECRET).hits) == 1
    with open_store(db) as store:
        result = store.purge(["s"])
        assert result.purged == ("s",) and result.live == 1 and result.wal_truncated
        assert store.find("s") is None and store.trash() == []
        assert store.get("a").related_to == () and store.get("b").superseded_by is None
        assert result.change.removed == {"s"} and result.change.changed == {"a", "b"}
    assert not _holds(db) and not _holds(sidecar_path(db))
    assert search(db, SECRET).hits == []


def test_purge_of_a_trashed_memory_and_empty_trash(db: Path) -> None:
    ensure_index(db)
    with open_store(db) as store:
        store.delete(["s"])
        store.delete(["a"])
        assert purge(store, ["s"]).trash_rows == 1
        assert [d.memory.id for d in store.trash()] == ["a"]
        result = empty_trash(store)
        assert result.purged == ("a",) and store.trash_count() == 0
        assert run_sql(store, "SELECT count(*) FROM ora_desktop_trash_links").fetchone()[0] == 0
    assert not _holds(db) and not _holds(sidecar_path(db))


def test_empty_trash_older_than_keeps_recent_deletes(db: Path) -> None:
    with open_store(db) as store:
        store.delete(["s", "a"])
        run_sql(store, "UPDATE ora_desktop_trash SET deleted_at = '2020-01-01 00:00:00' WHERE memory_id = 'a'")
        assert empty_trash(store, older_than_days=30).purged == ("a",)
        assert [d.memory.id for d in store.trash()] == ["s"]


def test_the_plan_names_counts_and_the_backups_holding_them(db: Path) -> None:
    backup = create_backup(db)
    with open_store(db) as store:
        store.delete(["s"])
        plan = plan_purge(store, ["s", "a"])
        assert plan.live == ("a",) and plan.count == 2 and plan.backups == (backup.path,)
        assert "2 memories" in plan.describe() and backup.path.name in plan.describe()
        result = purge(store, ["s"], rewrite_backups=True)
    assert result.backups_rewritten == (backup.path,)
    assert not _holds(backup.path)
    conn = sqlite3.connect(backup.path)
    try:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT related_to FROM memories WHERE id = 'a'").fetchone()[0] is None
    finally:
        conn.close()
    assert backup.path.stat().st_mode & 0o777 == 0o600


def test_an_id_no_longer_in_the_file_is_named_and_the_others_purged(db: Path) -> None:
    with open_store(db) as store:
        plan = plan_purge(store, ["s", "nope"])
        assert plan.gone == ("nope",) and "'nope' is no longer in the file" in plan.describe()
        result = store.purge(["s", "nope"])
        assert store.find("s") is None
    assert result.already_gone == ("nope",) and result.index_held == ()
    assert "purged 1 memory" in result.message and "'nope' was no longer in it" in result.message


def test_purging_again_after_a_purge_died_past_its_commit_scrubs_the_index(db: Path) -> None:
    ensure_index(db)

    def killed(*_args, **_kw):
        raise KeyboardInterrupt  # the process stops right after the commit

    with open_store(db) as store:
        with pytest.MonkeyPatch.context() as patch, pytest.raises(KeyboardInterrupt):
            patch.setattr(scrub, "forget", killed)
            store.purge(["s"])
        assert store.find("s") is None and _holds(sidecar_path(db))
        result = store.purge(["s"])
    assert result.already_gone == ("s",) and result.index_held == ("s",)
    assert "no longer in" in result.message and "removed what the search index still held" in result.message
    assert not _holds(sidecar_path(db)) and not _holds(db)


def test_a_purge_keeps_no_descriptor_of_a_replaced_backup(db: Path) -> None:
    backup = create_backup(db).path
    with open_store(db) as store:
        store.purge(["s"], rewrite_backups=True)
    assert not _holds(backup)
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            held.append(os.readlink(f"/proc/self/fd/{fd}"))
    assert not [link for link in held if link.startswith(str(backup)) and link.endswith("(deleted)")], \
        "the old backup's bytes, purged text included, stay alive through a descriptor we kept"


def test_read_only_file_refuses_and_changes_nothing(db: Path) -> None:
    before = _digest(db)
    with open_store(db, readonly=True) as store, pytest.raises(ReadOnlyDatabase):
        store.purge(["s"])
    assert _digest(db) == before


def test_a_held_write_lock_is_waited_for_then_refused_with_nothing_half_done(db: Path) -> None:
    ensure_index(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    try:
        with open_store(db, timeout=0.5) as store, pytest.raises(DatabaseLocked, match="locked"):
            store.purge(["s"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert time.monotonic() - started >= 0.4  # it waited for the lock first
    with open_store(db) as store:
        assert store.get("s").content.endswith(SECRET) and store.get("a").related_to == ("s",)
    assert len(search(db, SECRET).hits) == 1  # the index was not scrubbed either


def test_a_lock_released_while_waiting_lets_the_purge_through(db: Path) -> None:
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.3, lambda: holder.execute("ROLLBACK")).start()
    with open_store(db, timeout=5) as store:
        assert store.purge(["s"]).live == 1
    holder.close()


def test_residue_left_by_another_writer_is_found_and_vacuumed_away(db: Path) -> None:
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA secure_delete = OFF")  # an agent whose SQLite leaves deleted text behind
    writer.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES "
                   "('dup', ?, datetime('now'), datetime('now'))", (f"the token is {SECRET}",))
    writer.commit()
    writer.execute("DELETE FROM memories WHERE id = 'dup'")
    writer.commit()
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.close()
    with open_store(db) as store:
        result = store.purge(["s"])
    assert result.vacuumed and not _holds(db)
    with open_store(db) as store:
        assert {m.id for m in store.list()} == {"a", "b"}


def test_text_shared_with_a_memory_that_stays_is_not_residue(db: Path) -> None:
    with open_store(db) as store:
        store.add(f"copy: the token is {SECRET}", id="twin")
        result = store.purge(["s"])
        assert not result.vacuumed and store.get("twin")


def test_registered_scrubbers_are_called_with_the_purged_ids(db: Path) -> None:
    calls = []

    def vector_sidecar(path: Path, ids: frozenset[str], wanted: list[bytes]) -> Path | None:
        calls.append((path, ids, wanted))
        return None

    scrub.register(vector_sidecar)
    try:
        with open_store(db) as store:
            store.purge(["s"])
    finally:
        scrub._registered.remove(vector_sidecar)
    assert calls and calls[0][1] == {"s"} and SECRET.encode() in calls[0][2][0]


def test_needle_is_a_verbatim_run_of_the_text() -> None:
    assert scrub.needle('he said "a long enough run of words"\nok') == b"a long enough run of words"
    assert scrub.needle("short") is None
    assert scrub.needle("é" * 40).decode("utf-8")  # never cut inside a character


@pytest.mark.parametrize("argv, words", [
    (["purge", "s"], ["--yes", "1 memory"]),
    (["purge", "--yes"], ["--trash"]),
    (["purge", "s", "--trash", "--yes"], ["not both"]),
    (["purge", "s", "--older-than", "3", "--yes"], ["--trash only"]),
])
def test_cli_bad_input_is_one_line_and_changes_nothing(capsys, db: Path, argv: list[str], words: list[str]) -> None:
    before = _digest(db)
    assert main([*argv, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and all(w in err for w in words), err
    assert _digest(db) == before


def test_cli_purge_and_empty_trash(capsys, db: Path) -> None:
    assert main(["purge", "s", "--db", str(db), "--yes"]) == 0
    assert "purged 1 memory" in capsys.readouterr().out
    assert main(["rm", "a", "--db", str(db)]) == 0
    assert main(["purge", "--trash", "--db", str(db), "--yes"]) == 0
    assert "purged 1 memory" in capsys.readouterr().out
    assert main(["purge", "--trash", "--db", str(db), "--yes"]) == 0
    assert "nothing to purge" in capsys.readouterr().out
    assert main(["purge", "nope", "--db", str(db), "--yes"]) == 0  # already gone: finished, and said so
    assert "'nope' is no longer in" in capsys.readouterr().out


def test_purge_removes_the_memory_from_the_vector_sidecar_too(db: Path) -> None:
    from ora_desktop.core.search.semantic import ensure_vectors
    from ora_desktop.core.search.vectors import vector_path

    ensure_vectors(db)
    vectors = vector_path(db)

    def held(memory_id: str) -> int:
        with sqlite3.connect(vectors) as conn:
            return conn.execute("SELECT count(*) FROM vecs WHERE mid = ?", (memory_id,)).fetchone()[0]

    assert held("s") == 1
    with open_store(db) as store:
        result = store.purge(["s"])
    assert vectors in result.sidecars
    assert held("s") == 0 and held("a") == 1


def test_purge_of_a_file_that_syncs_queues_an_id_only_tombstone(db: Path) -> None:
    from ora_desktop.core.sync import local

    with open_store(db) as store:
        with store.write():
            local.ensure_tables(store)  # the file has met a sync server
        store.delete(["s"], "test")
        store.purge(["s"])
        queued = all_rows(store, f"SELECT memory_id FROM {local.TOMBSTONE_TABLE}")
    assert queued == [("s",)]


def test_purge_of_a_file_that_never_synced_adds_no_sync_table(db: Path) -> None:
    with open_store(db) as store:
        store.purge(["s"])
        assert not store.has_table("ora_desktop_sync_tombstones")


def test_purge_forgets_undo_steps_that_kept_the_purged_text(db: Path) -> None:
    from ora_desktop.core.operations import edits, journal

    with open_store(db) as store:
        edits.edit(store, "s", {"content": "the token was rotated"})  # the journal keeps the old text
        edits.edit(store, "a", {"importance": 9})  # a step on a memory that stays
        assert _holds(db) or _holds(Path(f"{db}-wal"))
        store.purge(["s"])
        assert [e.label for e in journal.entries(store)] == ["edit importance of a"]
    assert not _holds(db)


def test_empty_trash_forgets_undo_steps_of_the_memories_it_forgets(db: Path) -> None:
    from ora_desktop.core.operations import edits, journal

    with open_store(db) as store:
        edits.edit(store, "s", {"content": "the token was rotated"})
        edits.delete(store, ["s"])
        empty_trash(store)
        assert journal.entries(store) == []
    assert not _holds(db)
