"""Two homes (two machines) syncing through one real PostgreSQL server."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ora_desktop.core.rawsql import run_sql
from ora_desktop.core.sync import CONFLICT, REMOTE_DELETE, SyncError, conflicts, queue_tombstones, sync_file
from ora_desktop.core.sync.server import DDL, SCHEMA_VERSION, Server
from tests.integration.sync_support import AGENT, SITE, Machine, server_rows

pytestmark = pytest.mark.slow  # a real server


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Machine, Machine]:
    return Machine(tmp_path, "laptop"), Machine(tmp_path, "server")


def _converge(url: str, *machines: Machine) -> None:
    for _ in range(2):
        for machine in machines:
            machine.sync(url)


def test_adds_edits_deletes_supersessions_and_links_converge(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        old = store.add("Deploys go out from main", type="fact", importance=7)
        doomed = store.add("A note to delete later", type="context")
    with b.store() as store:
        theirs = store.add("The team prefers squash merges", type="preference")
        rated = store.add("CI takes about 12 minutes", type="context", importance=4)
    _converge(url := pg_url, a, b)
    assert a.view() == b.view() and set(a.view()) == {old.id, doomed.id, theirs.id, rated.id}
    assert all(m.sync_status == "synced" and not m.is_dirty for m in a.memories().values())

    with a.store() as store:
        new = store.add("Deploys go out from the release branch", type="fact", importance=8)
        store.supersede(old.id, new.id)
        store.link(new.id, theirs.id)
    with b.store() as store:
        store.update(rated.id, importance=9)
        store.delete(doomed.id)
    _converge(url, a, b)
    view = b.view()
    assert view == a.view()
    assert doomed.id not in view
    assert view[old.id][4] == new.id  # superseded_by travelled
    assert theirs.id in view[new.id][3] and new.id in view[theirs.id][3]  # related_to both ways
    assert view[rated.id][2] == 9
    # The delete reached A as a recoverable removal, and the server keeps only the id.
    with a.store() as store:
        assert [t.reason for t in store.trash() if t.memory.id == doomed.id] == [REMOTE_DELETE]
    stone = server_rows(url)[doomed.id]
    assert stone["deleted"] and stone["content"] is None and stone["type"] is None


def test_a_conflicting_edit_keeps_the_newer_and_the_loser_in_the_trash(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        memory = store.add("The API rate limit is 100 rps")
    _converge(pg_url, a, b)
    with b.store() as store:
        store.update(memory.id, content="The API rate limit is 200 rps (B)")
    time.sleep(1.1)  # timestamps have whole seconds: A's edit is the newer one
    with a.store() as store:
        store.update(memory.id, content="The API rate limit is 500 rps (A)")
    b.sync(pg_url)  # B's edit reaches the server first
    result = a.sync(pg_url)
    assert [(d.memory_id, d.winner) for d in result.conflicts] == [(memory.id, "this file")]
    b_result = b.sync(pg_url)
    assert b_result.conflicts == ()  # B had nothing pending: it simply takes the winner
    assert a.view() == b.view()
    assert a.memories()[memory.id].content.endswith("(A)")
    with a.store(readonly=True) as store:
        kept = [e.kept for e in conflicts(store).entries]
    assert [(k.memory.id, k.reason, k.memory.content) for k in kept] == [
        (memory.id, CONFLICT, "The API rate limit is 200 rps (B)")]


def test_the_server_version_wins_when_newer_and_ours_is_kept(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        memory = store.add("Staging database is on port 5433")
    _converge(pg_url, a, b)
    with a.store() as store:
        store.update(memory.id, content="Staging database is on port 5434 (A, older)")
    time.sleep(1.1)
    with b.store() as store:
        store.update(memory.id, content="Staging database is on port 6543 (B, newer)")
    b.sync(pg_url)
    result = a.sync(pg_url)
    assert [(d.memory_id, d.winner) for d in result.conflicts] == [(memory.id, "server")], result.conflicts
    assert a.memories()[memory.id].content.endswith("(B, newer)")
    with a.store(readonly=True) as store:
        assert [e.kept.memory.content for e in conflicts(store).entries] == [
            "Staging database is on port 5434 (A, older)"]


def test_local_only_never_leaves_its_machine(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        secret = store.add("The root password hint is in the blue notebook")
        store.update(secret.id, sync_status="local_only")
        shared = store.add("Shared fact")
    _converge(pg_url, a, b)
    rows = server_rows(pg_url)
    assert set(rows) == {shared.id}
    assert secret.id not in b.memories()
    with a.store() as store:  # edited and deleted: still nothing leaves
        store.update(secret.id, content="edited secret")
        store.delete(secret.id)
    a.sync(pg_url)
    assert set(server_rows(pg_url)) == {shared.id}


def test_a_purged_memory_leaves_only_its_id_on_the_server(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        memory = store.add("Customer card number 4111 1111 1111 1111")
    _converge(pg_url, a, b)
    with a.store() as store, store.write():  # what a purge does: row gone, no trash copy, a queued tombstone
        run_sql(store, "DELETE FROM memories WHERE id = ?", (memory.id,))
        queue_tombstones(store, [memory.id])
    a.sync(pg_url)
    row = server_rows(pg_url)[memory.id]
    assert row["deleted"] and all(row[c] is None for c in ("content", "type", "importance", "related_to"))
    b.sync(pg_url)
    assert memory.id not in b.memories()


def test_an_edit_newer_than_a_delete_elsewhere_survives(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        memory = store.add("Keep me if someone still cares")
    _converge(pg_url, a, b)
    with a.store() as store:
        store.delete(memory.id)
    a.sync(pg_url)
    time.sleep(1.1)
    with b.store() as store:
        store.update(memory.id, content="Still needed (edited after the delete)")
    result = b.sync(pg_url)
    assert [(d.winner, d.server_deleted) for d in result.conflicts] == [("this file", True)]
    a.sync(pg_url)
    assert a.memories()[memory.id].content == "Still needed (edited after the delete)"
    assert a.view() == b.view()


def test_two_machines_syncing_at_once_converge(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        store.add_many({"content": f"laptop memory {i}"} for i in range(3000))
    with b.store() as store:
        store.add_many({"content": f"server memory {i}"} for i in range(3000))
    errors: list[BaseException] = []

    def run(machine: Machine) -> None:
        try:
            machine.sync(pg_url)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(m,)) for m in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    _converge(pg_url, a, b)
    assert a.view() == b.view() and len(a.view()) == 6000
    rows = server_rows(pg_url)
    assert len(rows) == 6000 and not any(r["deleted"] for r in rows.values())


def test_rerunning_a_sync_changes_nothing(pg_url: str, homes) -> None:
    a, _ = homes
    with a.store() as store:
        store.add_many({"content": f"memory {i}"} for i in range(50))
    first = a.sync(pg_url)
    changes = {r["change"] for r in server_rows(pg_url).values()}
    second = a.sync(pg_url)
    assert (first.pushed, second.pushed, second.pulled, second.tombstones) == (50, 0, 0, 0)
    assert {r["change"] for r in server_rows(pg_url).values()} == changes


def test_the_schema_is_created_once_and_matches_the_sync_guide(pg_url: str, homes) -> None:
    a, _ = homes
    with Server(pg_url) as server:
        assert server.prepare() and server.created_schema
        first = server.server_id
    with Server(pg_url) as server:
        assert server.prepare() and not server.created_schema and server.server_id == first
    guide = (Path(__file__).resolve().parents[2] / "docs" / "sync.md").read_text(encoding="utf-8")
    assert DDL.strip() in guide


def test_a_dry_run_changes_nothing_on_either_side(pg_url: str, homes) -> None:
    a, b = homes
    with a.store() as store:
        store.add("one")
    a.sync(pg_url)
    with a.store() as store:
        store.add("two")
    before = server_rows(pg_url)
    result = sync_file(a.path, pg_url, dry_run=True)
    assert (result.pushed, result.pulled, result.dry_run) == (1, 0, True)
    assert server_rows(pg_url) == before
    assert sum(m.sync_status == "pending" for m in a.memories().values()) == 1
    preview = sync_file(b.path, pg_url, dry_run=True)
    assert preview.pulled == 1 and b.memories() == {}


def test_a_server_table_of_another_shape_is_refused(pg_url: str, pg_server, homes) -> None:
    a, _ = homes
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE ora_memories (id serial PRIMARY KEY, body text)")
    with a.store() as store:
        store.add("stays pending")
    with pytest.raises(SyncError, match="another shape"):
        a.sync(pg_url)
    assert [m.sync_status for m in a.memories().values()] == ["pending"]


def test_a_server_made_by_the_previous_version_is_migrated_and_a_newer_one_refused(pg_url: str, homes) -> None:
    import psycopg

    a, b = homes
    first = DDL.replace("    edited_at        timestamptz,       -- the content's last edit (or the deletion) in the "
                        "server's time\n", "").replace(
        "    push_id          text,              -- the sync run that wrote this version (a crashed run finds its "
        "own)\n", "")
    assert "edited_at" not in first and "push_id" not in first
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the schema as version 1 made it, with a row in it
        conn.execute(first)
        conn.execute("INSERT INTO ora_memories (site, agent, id, content, type, importance, access_count, "
                     "health_score, created_at, updated_at) VALUES (%s, %s, 'mem-v1', 'pushed by version 1', "
                     "'fact', 5, 0, 1.0, '2026-01-01 00:00:00', '2026-01-01 00:00:00')", (SITE, AGENT))
    a.sync(pg_url)
    assert a.memories()["mem-v1"].content == "pushed by version 1"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        version = conn.execute("SELECT value FROM ora_sync_meta WHERE key = 'schema_version'").fetchone()[0]
        columns = {r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns "
                                              "WHERE table_name = 'ora_memories'")}
        assert version == str(SCHEMA_VERSION) == "2" and {"edited_at", "push_id"} <= columns
        conn.execute("UPDATE ora_sync_meta SET value = '3' WHERE key = 'schema_version'")
    with b.store() as store:
        store.add("stays pending")
    with pytest.raises(SyncError, match="schema is version 3, newer than this ora-desktop understands"):
        b.sync(pg_url)
    assert [m.sync_status for m in b.memories().values()] == ["pending"]
