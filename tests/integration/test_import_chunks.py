"""An import writes in short transactions, so an agent writing beside it is never locked out, and
stays all-or-nothing to the person: a bad row writes nothing, each chunk decides its conflicts
against what an agent wrote meanwhile, one undo takes exactly the import back, a failure
part-way takes back what was written, and an import whose process was killed is taken back by
the next one and said."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ora_desktop.core import Initiator, OraError, chunks, create_database, open_store
from ora_desktop.core.exchange import pending as import_pending
from ora_desktop.core.operations.importing import ImportRefused, import_memories, undo_import
from ora_desktop.core.operations.undo import undo
from tests.integration import impatient_agent
from tests.unit.test_cli_helpers import cli

OLD = "2025-01-01 00:00:00"


def jsonl(path: Path, count: int, prefix: str = "imp", stamp: str = OLD, bad_at: int | None = None) -> Path:
    """``count`` memories ``<prefix>-<i>`` as our JSONL (line ``bad_at`` with an importance of 11)."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            out.write(json.dumps({"id": f"{prefix}-{i}", "content": f"imported memory {i} about deploys and caches",
                                  "type": "fact", "importance": 11 if i == bad_at else 5, "created_at": stamp,
                                  "updated_at": stamp}) + "\n")
    return path


def agent_file(path: Path, ids: list[str]) -> Path:
    """A seed file holding ``ids`` (the agent's own memories, written at ``OLD``)."""
    create_database(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executemany("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                     "VALUES (?, 'the agent wrote this', 'fact', 5, ?, ?)", [(i, OLD, OLD) for i in ids])
    conn.close()
    return path


def rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def as_agent(db: Path, sql: str, params: tuple = ()) -> None:
    """One write by another process, with a 1 s busy timeout (it fails if the lock is held)."""
    script = ("import sqlite3, sys, json; c = sqlite3.connect(sys.argv[1], timeout=1, isolation_level=None); "
              "c.execute('BEGIN IMMEDIATE'); c.execute(sys.argv[2], json.loads(sys.argv[3])); c.execute('COMMIT')")
    subprocess.run([sys.executable, "-c", script, str(db), sql, json.dumps(list(params))], check=True,
                   capture_output=True, timeout=60)


@pytest.mark.slow
def test_an_import_of_100000_memories_never_locks_out_an_agent_and_is_one_undo_step(tmp_path: Path) -> None:
    db = agent_file(tmp_path / "agent.site.db", [f"own-{i}" for i in range(100)])
    source = jsonl(tmp_path / "big.jsonl", 100_000)
    report, stop = tmp_path / "agent.json", tmp_path / "stop"
    process = impatient_agent.start(db, "agent", report, stop)
    try:
        impatient_agent.wait_ready(process, report)
        with open_store(db) as store:
            told = []
            store.subscribe(told.append)
            result = import_memories(store, source)
            seen = impatient_agent.finish(process, report, stop)
            assert seen["locked"] == 0, seen
            assert seen["commits"] > 0
            assert result.added == 100_000 and chunks.last_sizer.chunks > 1
            heard = [i for c in told for i in c.added]  # each chunk's commit heard once, with its ids
            assert sorted(heard) == sorted(f"imp-{i}" for i in range(100_000))
            assert {c.initiator for c in told} == {Initiator.IMPORT}
            assert rows(db, "SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'import.pending.%'") == [(0,)]
            agents = rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'agent-%'")
            undone = undo(store)  # one step for every chunk
        assert len(undone.change.removed) == 100_000
        assert rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'imp-%'") == [(0,)]
        assert rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'own-%'") == [(100,)]
        assert rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'agent-%'") == agents  # the agent's stay
    finally:
        stop.touch()
        process.wait(timeout=60)


def test_a_bad_row_at_the_end_of_a_long_source_writes_nothing(tmp_path: Path) -> None:
    db = agent_file(tmp_path / "agent.site.db", ["own-1"])
    source = jsonl(tmp_path / "in.jsonl", 3000, bad_at=2999)
    with open_store(db) as store, pytest.raises(ImportRefused) as error:
        import_memories(store, source)
    assert "line 3000, field importance" in str(error.value) and "nothing was imported" in str(error.value)
    assert rows(db, "SELECT id FROM memories") == [("own-1",)]
    assert rows(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'ora_desktop_%'") == [(0,)]


@pytest.mark.parametrize("policy", ["skip", "newer", "replace"])
def test_an_id_an_agent_writes_between_chunks_is_decided_against_the_agents_row(tmp_path: Path,
                                                                                policy: str) -> None:
    """The agent inserts, after the import's first chunk, an id a later chunk brings, newer than
    the import's row: ``skip`` and ``newer`` keep the agent's row, ``replace`` replaces it and
    keeps it in the trash (an undo brings it back)."""
    db = agent_file(tmp_path / "agent.site.db", ["own-1"])
    source = jsonl(tmp_path / "in.jsonl", 3000)
    wrote: list[tuple[int, int]] = []

    def between(done: int, total: int) -> None:  # (called between chunks, the lock free)
        if not wrote:
            as_agent(db, "INSERT INTO memories (id, content, type, importance, created_at, updated_at) VALUES "
                         "('imp-2999', 'the agent wrote this first', 'fact', 5, datetime('now'), datetime('now'))")
            wrote.append((done, total))

    with open_store(db) as store:
        result = import_memories(store, source, on_conflict=policy, progress=between)
        assert wrote and wrote[0][0] < wrote[0][1]  # the agent wrote while the import was under way
        [(content,)] = rows(db, "SELECT content FROM memories WHERE id = 'imp-2999'")
        if policy == "replace":
            assert (result.added, result.replaced, result.kept) == (2999, 1, 0)
            assert content == "imported memory 2999 about deploys and caches"
            assert rows(db, "SELECT json_extract(row_json, '$.content') FROM ora_desktop_trash") == [
                ("the agent wrote this first",)]
            undo(store)
            assert rows(db, "SELECT content FROM memories WHERE id = 'imp-2999'") == [("the agent wrote this first",)]
        else:
            assert (result.added, result.replaced, result.kept) == (2999, 0, 1)
            assert content == "the agent wrote this first"
            undo(store)
            assert rows(db, "SELECT content FROM memories WHERE id = 'imp-2999'") == [("the agent wrote this first",)]
        assert rows(db, "SELECT count(*) FROM memories") == [(2,)]  # own-1 and the agent's


def test_undo_of_a_chunked_import_removes_exactly_it_and_brings_replaced_rows_back(tmp_path: Path) -> None:
    db = agent_file(tmp_path / "agent.site.db", [f"imp-{i}" for i in range(0, 3000, 100)] + ["own-1"])
    source = jsonl(tmp_path / "in.jsonl", 3000, stamp="2026-01-01 00:00:00")
    before = rows(db, "SELECT * FROM memories ORDER BY id")

    calls: list[int] = []

    def between(done: int, total: int) -> None:
        as_agent(db, "INSERT INTO memories (id, content, created_at, updated_at) "
                     "VALUES (?, 'meanwhile', datetime('now'), datetime('now'))", (f"agent-{done}",))
        calls.append(done)

    with open_store(db) as store:
        result = import_memories(store, source, on_conflict="newer", progress=between)
        assert (result.added, result.replaced) == (2970, 30) and chunks.last_sizer.chunks > 2
        undo(store)
    after = rows(db, "SELECT * FROM memories WHERE id NOT LIKE 'agent-%' ORDER BY id")
    assert after == before  # every column of every row as it was, the replaced ones included
    assert len(calls) > 2  # the agent wrote between chunks, and its rows stay
    assert rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'agent-%'") == [(len(calls),)]


def test_an_import_cancelled_part_way_takes_back_what_it_wrote(tmp_path: Path) -> None:
    """Rows replaced in both chunks written (one trash batch) all come back."""
    db = agent_file(tmp_path / "agent.site.db", ["own-1", *(f"imp-{i}" for i in range(5, 3000, 50))])
    source = jsonl(tmp_path / "in.jsonl", 3000, stamp="2026-01-01 00:00:00")
    before = rows(db, "SELECT * FROM memories ORDER BY id")
    asked: list[int] = []

    def cancel() -> bool:
        asked.append(1)
        return len(asked) >= 2  # (after two chunks went in: 3,000 rows take at least four)

    with open_store(db) as store, pytest.raises(OraError) as error:
        import_memories(store, source, on_conflict="replace", cancel=cancel)
    assert "import cancelled" in str(error.value) and "were taken back, nothing was imported" in str(error.value)
    assert rows(db, "SELECT * FROM memories ORDER BY id") == before
    assert rows(db, "SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'import.pending.%'") == [(0,)]


@pytest.mark.parametrize("finder", ["next import", "check --repair"])
def test_a_killed_import_is_found_and_taken_back_and_said(tmp_path: Path, finder: str) -> None:
    """SIGKILL part-way leaves a half-imported file with its mark: ``run check`` reports it
    (changing nothing); the next import, or ``run check --repair``, takes it back and says so."""
    db = agent_file(tmp_path / "agent.site.db", ["own-1", "imp-5"])
    before = rows(db, "SELECT * FROM memories ORDER BY id")
    source = jsonl(tmp_path / "big.jsonl", 100_000, stamp="2026-01-01 00:00:00")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    importer = subprocess.Popen([sys.executable, "-m", "ora_desktop", "import", str(source), "--db", str(db),
                                 "--on-conflict", "replace"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not _chunks_marked(db) >= 3:
            assert importer.poll() is None and time.monotonic() < deadline, "the import ended before it was killed"
            time.sleep(0.05)
        importer.send_signal(signal.SIGKILL)
    finally:
        importer.wait(timeout=60)
    half = rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'imp-%'")[0][0]
    assert 2 < half < 100_000  # half imported, and marked so
    as_agent(db, "INSERT INTO memories (id, content, created_at, updated_at) "
                 "VALUES ('agent-1', 'after the kill', datetime('now'), datetime('now'))")

    def ora(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "ora_desktop", *args, "--db", str(db)], env=env,
                              capture_output=True, text=True, timeout=120)

    checked = ora("run", "check")
    assert f"an import of {source} stopped part-way (its process is gone)" in checked.stdout, checked.stdout
    assert rows(db, "SELECT count(*) FROM memories WHERE id LIKE 'imp-%'") == [(half,)]  # (a check changes nothing)
    if finder == "next import":
        done = ora("import", str(jsonl(tmp_path / "small.jsonl", 2, prefix="next")))
        assert done.returncode == 0, done.stderr
        assert f"note: an import of {source} stopped part-way was taken back" in done.stderr
        assert rows(db, "SELECT count(*) FROM memories WHERE id IN ('next-0', 'next-1')") == [(2,)]
    else:
        done = ora("run", "check", "--repair")
        assert done.returncode == 0 and "repaired: 1 imports stopped part-way" in done.stdout, done.stdout
    assert rows(db, "SELECT * FROM memories WHERE id NOT IN ('next-0', 'next-1', 'agent-1') ORDER BY id") == before
    assert rows(db, "SELECT content FROM memories WHERE id = 'agent-1'") == [("after the kill",)]
    assert rows(db, "SELECT count(*) FROM ora_desktop_trash WHERE reason = ?", (import_pending.REASON,)) == [(half,)]
    assert rows(db, "SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'import.pending.%'") == [(0,)]
    assert "stopped part-way" not in ora("run", "check").stdout


def _chunks_marked(db: Path) -> int:
    try:
        return rows(db, "SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'import.pending.%.%'")[0][0]
    except sqlite3.OperationalError:  # (no such table yet)
        return 0


def test_a_take_back_that_stops_part_way_is_finished_by_the_next_one(tmp_path: Path, monkeypatch) -> None:
    """The take-back of a cancelled import fails after moving the import's rows to the trash (the
    disk, say): the mark stays, says how far it got, and the next import finishes it without
    trashing the rows it brought back."""
    db = agent_file(tmp_path / "agent.site.db", ["own-1", "imp-5"])
    before = rows(db, "SELECT * FROM memories ORDER BY id")
    source = jsonl(tmp_path / "in.jsonl", 3000, stamp="2026-01-01 00:00:00")
    with open_store(db) as store:
        real = type(store).restore_deleted

        def failing(self, trash_ids):  # noqa: ANN001, ANN202
            raise OraError("disk I/O error")

        monkeypatch.setattr(type(store), "restore_deleted", failing)
        with pytest.raises(OraError) as error:
            import_memories(store, source, on_conflict="replace", cancel=lambda: True)
        assert "could not be taken back (disk I/O error)" in str(error.value)
        assert "the next import into" in str(error.value)
        assert rows(db, "SELECT id FROM memories") == [("own-1",)]  # imp-5 still in the trash
        monkeypatch.setattr(type(store), "restore_deleted", real)
        result = import_memories(store, jsonl(tmp_path / "small.jsonl", 1, prefix="next"))
    [line] = result.recovered
    assert "1 memory it had replaced came back" in line
    assert rows(db, "SELECT * FROM memories WHERE id != 'next-0' ORDER BY id") == before
    assert rows(db, "SELECT count(*) FROM ora_desktop_state WHERE key LIKE 'import.pending.%'") == [(0,)]


def test_undo_import_of_an_import_too_big_for_the_journal_goes_in_chunks(tmp_path: Path) -> None:
    """``undo_import`` (the library's take-back of an import over the journal's limit) moves what
    the import wrote to the trash in short transactions, then brings the replaced rows back."""
    db = agent_file(tmp_path / "agent.site.db", [f"imp-{i}" for i in range(0, 3000, 100)] + ["own-1"])
    before = rows(db, "SELECT * FROM memories ORDER BY id")
    with open_store(db) as store:
        result = import_memories(store, jsonl(tmp_path / "in.jsonl", 3000, stamp="2026-01-01 00:00:00"),
                                 on_conflict="replace")
        chunks.new_sizer()
        change = undo_import(store, result)
    assert chunks.last_sizer.chunks > 1
    assert len(change.removed) == 2970 and len(change.changed) == 30
    assert rows(db, "SELECT * FROM memories ORDER BY id") == before


def test_the_rows_an_import_replaces_across_chunks_are_one_trash_batch_one_restore_brings_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """600 rows replaced over several chunks: the trash (``ora-desktop trash --json``) lists them
    as one "replaced by import" batch, the result names that batch, and one restore of it
    (``undo_import``) brings every replaced row back as it was."""
    replaced = [f"imp-{i}" for i in range(0, 3000, 5)]
    db = agent_file(tmp_path / "agent.site.db", [*replaced, "own-1"])
    before = rows(db, "SELECT * FROM memories ORDER BY id")
    with open_store(db) as store:
        result = import_memories(store, jsonl(tmp_path / "in.jsonl", 3000, stamp="2026-01-01 00:00:00"),
                                 on_conflict="replace")
        assert chunks.last_sizer.chunks > 2 and result.replaced == 600
        listed = cli(capsys, "trash", "--db", db, "--json", "--limit", "1000").json()
        assert len(listed) == 600 and {r["reason"] for r in listed} == {"replaced by import"}
        assert {r["batch"] for r in listed} == set(result.replaced_batches)  # one batch for the whole import
        assert len(result.replaced_batches) == 1
        undo_import(store, result)
    assert rows(db, "SELECT * FROM memories ORDER BY id") == before
    assert rows(db, "SELECT count(*) FROM ora_desktop_trash WHERE reason = 'replaced by import'") == [(0,)]


@pytest.mark.parametrize("back", ["undo", "undo_import", "cancelled"])
def test_an_import_replacing_memories_leaves_the_links_to_them_alone(tmp_path: Path, back: str) -> None:
    """A replaced memory keeps its id, so the other memories' links to it (``related_to``,
    ``superseded_by``) stay as they are, rows untouched; taking the import back (an undo,
    ``undo_import``, a cancel part-way) leaves the whole file as it was, links included."""
    db = agent_file(tmp_path / "agent.site.db", [*(f"imp-{i}" for i in range(0, 3000, 500)), "own-1", "own-2"])
    with sqlite3.connect(db) as conn:
        conn.execute("""UPDATE memories SET related_to = '["imp-500", "imp-2500"]', sync_status = 'synced'
                        WHERE id = 'own-1'""")
        conn.execute("UPDATE memories SET superseded_by = 'imp-1000', sync_status = 'synced' WHERE id = 'own-2'")
    before = rows(db, "SELECT * FROM memories ORDER BY id")
    own = rows(db, "SELECT * FROM memories WHERE id LIKE 'own-%' ORDER BY id")
    source = jsonl(tmp_path / "in.jsonl", 3000, stamp="2026-01-01 00:00:00")
    with open_store(db) as store:
        if back == "cancelled":
            asked: list[int] = []
            with pytest.raises(OraError, match="were taken back"):
                import_memories(store, source, on_conflict="replace", cancel=lambda: len(asked.append(1) or asked) >= 3)
        else:
            result = import_memories(store, source, on_conflict="replace")
            assert result.replaced == 6
            assert rows(db, "SELECT * FROM memories WHERE id LIKE 'own-%' ORDER BY id") == own
            undo(store) if back == "undo" else undo_import(store, result)
    assert rows(db, "SELECT * FROM memories ORDER BY id") == before
