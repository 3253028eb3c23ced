"""The change feed: another program's commit is heard as exactly one ``Change`` naming the ids
it added, changed and removed (read from the log's page versions), whoever committed it; the
store's own commits are not heard again; when the log cannot tell, the answer is a reload."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ora_desktop.core import Change, ChangeKind, Initiator, open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.fileheader import read_at
from ora_desktop.core.operations import edits

from ..conftest import raw_seed_db
from .log_support import agent, checkpoint, index_header, write_index_header

ROWS = [(f"m{i:03d}", f"memory number {i} " + "words " * (i % 40), "fact", 1 + i % 10) for i in range(120)]


def heard(store) -> list[Change]:  # noqa: ANN001
    """Every change the store's feed reports now, then nothing more."""
    changes = []
    while (change := store.external_change()) is not None:
        changes.append(change)
    return changes


@pytest.fixture
def watched(tmp_path: Path):  # noqa: ANN201
    path = raw_seed_db(tmp_path / "agent.site.db", ROWS)
    store = open_store(path)
    assert heard(store) == []  # the first look takes the file as seen
    yield path, store
    store.close()


def test_an_agents_insert_is_one_change_naming_the_new_id(watched):
    path, store = watched
    agent(path, "INSERT INTO memories (id, content, created_at, updated_at) "
                "VALUES ('new-1', 'an agent wrote this', datetime('now'), datetime('now'))")
    [change] = heard(store)
    assert change.added == {"new-1"} and not change.changed and not change.removed
    assert change.initiator is Initiator.EXTERNAL


def test_an_agents_long_memory_in_an_auto_vacuum_file_is_named(tmp_path):
    """An auto-vacuum file keeps each page's parent in pointer-map pages, written whenever a
    page is allocated (here the new memory's overflow pages): bookkeeping, no row's bytes, so the
    new memory is still named, not heard as a reload."""
    path = tmp_path / "vacuumed.site.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA auto_vacuum = FULL")  # (before any table exists)
    conn.close()
    raw_seed_db(path, ROWS)
    store = open_store(path)
    try:
        assert heard(store) == []
        agent(path, "INSERT INTO memories (id, content, created_at, updated_at) "
                    "VALUES ('long-1', ?, datetime('now'), datetime('now'))", params=[["long " * 5000]])
        [change] = heard(store)
        assert change.added == {"long-1"} and not change.changed and not change.removed
    finally:
        store.close()


@pytest.fixture(params=["plain", "auto-vacuum"])
def long_watched(tmp_path: Path, request: pytest.FixtureRequest):  # noqa: ANN201
    """A file whose every tenth memory is too long for its page, each touched before (so a
    touch rewrites only bytes past the leaf, in the memory's last overflow page), and a store of
    it watching."""
    path = tmp_path / "long.site.db"
    if request.param == "auto-vacuum":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA auto_vacuum = FULL")  # (before any table exists)
        conn.close()
    rows = [(f"m{i:03d}", f"memory {i} " + ("long words " * 900 if i % 10 == 0 else ""), "fact", 5) for i in range(60)]
    raw_seed_db(path, rows)
    agent(path, "UPDATE memories SET access_count = 5, last_accessed_at = datetime('now', '-1 day')")
    store = open_store(path)
    assert heard(store) == []
    yield path, store
    store.close()


TOUCH = ("UPDATE memories SET access_count = access_count + 1, last_accessed_at = datetime('now', ?) "
         "WHERE id = ?")


def test_an_agents_touch_of_a_long_memory_names_it_and_what_it_wrote(long_watched):
    """A touch writes no indexed column, and of a long memory only its last overflow page: the
    feed still names the memory and the columns, rather than having every view read again."""
    path, store = long_watched
    agent(path, TOUCH, params=[["+1 minute", "m020"]])
    [change] = heard(store)
    assert change.changed == {"m020"} and not change.added and not change.removed
    assert change.columns == {"access_count", "last_accessed_at"}
    agent(path, TOUCH, params=[["+2 minutes", "m030"]])  # another one, where the first look listed it
    agent(path, TOUCH, params=[["+3 minutes", "m020"]])
    [change] = heard(store)
    assert change.changed == {"m020", "m030"} and change.columns == {"access_count", "last_accessed_at"}


def test_a_long_memory_added_then_touched_is_named(long_watched, monkeypatch):
    """A memory added after the feed listed the file's overflow pages: the feed read its leaf
    (the row added), so its touch is named without listing them again."""
    path, store = long_watched
    query, listings = store.feed._query, []

    def counted(sql, params):  # noqa: ANN001, ANN202
        listings.extend(["dbstat"] if "dbstat" in sql else [])
        return query(sql, params)

    monkeypatch.setattr(store.feed, "_query", counted)
    agent(path, TOUCH, params=[["+1 minute", "m010"]])
    assert heard(store)[0].changed == {"m010"}  # (the overflow pages are listed now)
    agent(path, "INSERT INTO memories (id, content, access_count, last_accessed_at, created_at, updated_at) "
                "VALUES ('late', ?, 5, datetime('now'), datetime('now'), datetime('now'))",
          params=[["late words " * 900]])
    assert heard(store)[0].added == {"late"}
    agent(path, TOUCH, params=[["+2 minutes", "late"]])
    [change] = heard(store)
    assert change.changed == {"late"} and change.columns == {"access_count", "last_accessed_at"}
    assert listings == ["dbstat"]  # once, at the first touch


def test_a_touch_of_a_long_memory_is_a_reload_where_sqlite_cannot_list_its_pages(long_watched, monkeypatch):
    """Without SQLite's dbstat the page's row is not found: every view reads again (never a
    change that names nothing)."""
    path, store = long_watched
    query = store.feed._query

    def no_dbstat(sql, params):  # noqa: ANN001, ANN202
        if "dbstat" in sql:
            raise sqlite3.OperationalError("no such table: dbstat")
        return query(sql, params)

    monkeypatch.setattr(store.feed, "_query", no_dbstat)
    agent(path, TOUCH, params=[["+1 minute", "m020"]])
    [change] = heard(store)
    assert change.kind is ChangeKind.RELOAD


@pytest.mark.parametrize("sql", [
    "UPDATE memories SET content = 'rewritten', updated_at = datetime('now', '+1 minute') WHERE id = 'm042'",
    "UPDATE memories SET importance = 1 + importance % 10 WHERE id = 'm042'",  # updated_at untouched
], ids=["with updated_at", "without updated_at"])
def test_an_agents_update_of_one_row_names_that_row_alone(watched, sql):
    path, store = watched
    agent(path, sql)
    [change] = heard(store)
    assert change.changed == {"m042"} and not change.added and not change.removed


def test_an_agents_edit_names_the_columns_it_wrote(watched):
    """The feed compares the row's stored values: readers that depend on a few columns (the
    supersession edges, the health counts, the review rules) can leave the rest alone. A row
    too long for its page is compared through its overflow pages; an edit that keeps its length
    rewrites only the overflow page it changed (not the row's leaf), found through the index
    entry the edit moved."""
    path, store = watched
    agent(path, "UPDATE memories SET importance = 1 + importance % 10 WHERE id = 'm042'",
          "UPDATE memories SET health_score = 0.5 WHERE id = 'm043'")
    [change] = heard(store)
    assert change.changed == {"m042", "m043"} and change.columns == {"importance", "health_score"}
    agent(path, "UPDATE memories SET superseded_by = 'm001' WHERE id = 'm044'")
    assert [c.columns for c in heard(store)] == [{"superseded_by"}]
    agent(path, "UPDATE memories SET content = ? WHERE id = 'm045'", params=[["long " * 5000]])
    [change] = heard(store)
    assert change.changed == {"m045"} and change.columns == {"content"}
    agent(path, "UPDATE memories SET importance = 1 + importance % 9 WHERE id = 'm045'")  # same length
    [change] = heard(store)
    assert change.changed == {"m045"} and change.columns == {"importance"}
    agent(path, "UPDATE memories SET superseded_by = 'm001' WHERE id = 'm045'")
    assert [c.columns for c in heard(store)] == [{"superseded_by"}]


def test_an_agents_delete_names_the_id_and_the_rowid_it_had(watched):
    path, store = watched
    rowid = store.get("m007").rowid
    agent(path, "DELETE FROM memories WHERE id = 'm007'")
    [change] = heard(store)
    assert change.removed == {"m007"} and change.removed_rowids == {rowid}
    assert not change.added and not change.changed


def test_our_own_writes_are_not_heard_again(watched):
    path, store = watched
    store.update("m001", importance=9)
    store.add("ours", type="fact")
    assert heard(store) == []
    agent(path, "UPDATE memories SET importance = 2 WHERE id = 'm002'")
    assert [c.changed for c in heard(store)] == [{"m002"}]


def _heard_once(store, change: Change, theirs: set[str]) -> None:  # noqa: ANN001
    """Our commit was heard once as ``change`` (a person's edit of m001), the agent's commit once
    as another program's, naming ``theirs``; no change said to be someone else's names ours."""
    from_feed = heard(store)
    assert [c.ids for c in from_feed] == [theirs] and from_feed[0].initiator is Initiator.EXTERNAL
    assert change.ids == {"m001"} and change.initiator is Initiator.USER


def _edit_heard(store) -> Change:  # noqa: ANN001
    told: list[Change] = []
    unsubscribe = store.subscribe(told.append)
    edits.edit(store, "m001", {"importance": 9})
    unsubscribe()
    [ours] = told
    return ours


def test_an_agents_commit_right_before_ours_is_heard_once_and_ours_once(watched):
    """An agent commits, then the person's edit commits before the window looks: each commit is
    heard once, by whom it was made (ours was heard twice: a second time as the agent's)."""
    path, store = watched
    notices = store.feed_reader()  # as the MCP server's notices read the feed
    agent(path, "UPDATE memories SET importance = 2 WHERE id = 'm002'")
    ours = _edit_heard(store)
    assert notices.poll().ids == {"m002"} and notices.poll() is None
    _heard_once(store, ours, {"m002"})


def test_an_agents_commit_right_after_ours_is_heard_once_and_ours_once(watched, monkeypatch):
    """The agent's commit lands between our COMMIT and our reading of the counter."""
    path, store = watched
    ended = store._watch.own_commit_ended

    def agent_first(connection):  # noqa: ANN001, ANN202
        agent(path, "INSERT INTO memories (id, content, created_at, updated_at) "
                    "VALUES ('after-1', 'an agent wrote this', datetime('now'), datetime('now'))")
        return ended(connection)
    monkeypatch.setattr(store._watch, "own_commit_ended", agent_first)
    ours = _edit_heard(store)
    monkeypatch.undo()
    _heard_once(store, ours, {"after-1"})


def test_agents_commits_before_and_after_ours_are_heard_once_each(watched, monkeypatch):
    path, store = watched
    agent(path, "DELETE FROM memories WHERE id = 'm003'")
    ended = store._watch.own_commit_ended

    def agent_first(connection):  # noqa: ANN001, ANN202
        agent(path, "UPDATE memories SET content = 'after ours' WHERE id = 'm004'")
        return ended(connection)
    monkeypatch.setattr(store._watch, "own_commit_ended", agent_first)
    ours = _edit_heard(store)
    monkeypatch.undo()
    [theirs] = heard(store)  # (the window's one look hears both, composed)
    assert (theirs.removed, theirs.changed, theirs.added) == ({"m003"}, {"m004"}, set())
    assert theirs.initiator is Initiator.EXTERNAL and ours.ids == {"m001"}


def test_our_commit_that_restarts_the_log_over_an_agents_is_heard_once(watched):
    """The agent's commit was checkpointed whole, so our commit starts the log again over its
    frames: what it changed can no longer be read (a reload), but ours is still not the agent's."""
    path, store = watched
    agent(path, "UPDATE memories SET importance = 2 WHERE id = 'm002'")
    subprocess.run([sys.executable, "-c", "import sqlite3, sys\n"
                    "print(sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(PASSIVE)').fetchone())",
                    str(path)], check=True, capture_output=True)
    salts = read_at(f"{path}-wal", 8, 16)
    ours = _edit_heard(store)
    assert read_at(f"{path}-wal", 8, 16) != salts  # (ours did restart the log)
    [theirs] = heard(store)
    assert not theirs and theirs.initiator is Initiator.EXTERNAL  # a reload
    assert ours.ids == {"m001"}
    agent(path, "UPDATE memories SET importance = 3 WHERE id = 'm005'")
    assert [c.ids for c in heard(store)] == [{"m005"}]


def test_a_nested_write_of_ours_after_an_agents_commit_is_heard_once(watched):
    """Savepoints inside our transaction: still one commit of ours, stepped past once."""
    path, store = watched
    agent(path, "UPDATE memories SET importance = 2 WHERE id = 'm002'")
    told: list[Change] = []
    store.subscribe(told.append)
    with store.write():
        store.update("m001", importance=9)
        with store.write():
            store.update("m003", importance=9)
    assert [c.ids for c in heard(store)] == [{"m002"}]
    assert [c.ids for c in told] == [{"m001", "m003"}]


def test_an_empty_commit_of_ours_after_an_agents_hears_the_agents_once(watched):
    path, store = watched
    agent(path, "UPDATE memories SET importance = 2 WHERE id = 'm002'")
    with store.write():
        pass
    assert [c.ids for c in heard(store)] == [{"m002"}]


def test_a_job_in_another_process_is_heard_with_its_ids(watched):
    path, store = watched
    agent(path, "UPDATE memories SET expires_at = '2001-01-01 00:00:00' WHERE id IN ('m010', 'm011')")
    heard(store)
    subprocess.run([sys.executable, "-m", "ora_desktop", "run", "cleanup", "--db", str(path)],
                   check=True, capture_output=True)
    [change] = heard(store)
    assert change.removed == {"m010", "m011"}


def test_an_import_in_another_process_is_heard_with_its_ids(watched, tmp_path):
    path, store = watched
    source = tmp_path / "export.jsonl"
    stamp = "2026-01-02 03:04:05"
    source.write_text("".join(json.dumps({"id": f"imp-{i}", "content": f"imported {i}", "type": "fact",
                                          "created_at": stamp, "updated_at": stamp}) + "\n" for i in range(3)))
    subprocess.run([sys.executable, "-m", "ora_desktop", "import", str(source), "--db", str(path)],
                   check=True, capture_output=True)
    [change] = heard(store)
    assert change.added == {"imp-0", "imp-1", "imp-2"}


def test_a_replaced_row_and_a_bulk_change_are_named(watched):
    path, store = watched
    agent(path, "INSERT OR REPLACE INTO memories (id, content, created_at, updated_at) "
                "VALUES ('m020', 'replaced whole', datetime('now'), datetime('now'))",
          "UPDATE memories SET health_score = 0.5 WHERE importance = 3")
    [change] = heard(store)
    threes = {mid for mid, _c, _t, importance in ROWS if importance == 3}
    assert change.changed == threes | {"m020"} and not change.added and not change.removed


def test_a_rollback_journal_file_is_heard_as_a_reload(tmp_path):
    path = raw_seed_db(tmp_path / "journal.site.db", ROWS[:5])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    store = open_store(path)
    heard(store)
    agent(path, "UPDATE memories SET importance = 9 WHERE id = 'm001'")
    [change] = heard(store)
    assert not change and change.initiator is Initiator.EXTERNAL  # rows unknown: views read again
    # No log to split at our BEGIN: an agent's commit right before ours is a reload too, and
    # ours is heard once, as ours; ours alone is nothing to the feed.
    agent(path, "UPDATE memories SET importance = 9 WHERE id = 'm002'")
    ours = _edit_heard(store)
    [theirs] = heard(store)
    assert not theirs and ours.ids == {"m001"}
    store.update("m003", importance=1)
    assert heard(store) == []
    store.close()


def _rows(conn: sqlite3.Connection) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in conn.execute("SELECT id, rowid, * FROM memories")}


@pytest.mark.parametrize("seed", [int(s) for s in os.environ.get("FEED_SEEDS", "7").split(",")])
def test_random_writes_are_named_exactly_or_heard_as_a_reload(tmp_path, seed):
    """Inserts (small and spilling to overflow pages), edits in place, touches, deletes, replaces and
    checkpoints, from another connection, several commits between looks: every change the feed
    names is exactly what changed; where it cannot tell it says reload, and never nothing.
    ``FEED_SEEDS=1,2,3`` runs more seeds."""
    rng = random.Random(seed)
    path = tmp_path / "fuzz.site.db"
    write_agent(path, memories=300, seed=3)
    store = open_store(path)
    heard(store)
    conn = sqlite3.connect(path, isolation_level=None)
    before, named, n = _rows(conn), 0, 0
    names = ["rowid", *(r[1] for r in conn.execute("PRAGMA table_info(memories)"))]
    for _step in range(150):
        conn.execute("BEGIN IMMEDIATE")
        for _ in range(rng.randint(1, 3)):
            listed = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY rowid")]
            ids = [rng.choice(listed)] if listed else []
            roll = rng.random()
            if roll < 0.35 or not ids:
                n += 1
                conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                             "VALUES (?, ?, datetime('now'), datetime('now'))",
                             (f"new-{n}", "x" * rng.choice([20, 300, 5000, 9000])))
            elif roll < 0.45:
                conn.execute("UPDATE memories SET importance = ? WHERE id = ?", (rng.randint(1, 10), ids[0]))
            elif roll < 0.55:  # a touch: no indexed column; of a long memory, its overflow pages alone
                conn.execute("UPDATE memories SET access_count = 2 + (access_count + 1) % 100, "
                             "last_accessed_at = datetime('now', ?) WHERE id = ?",
                             (f"-{rng.randint(1, 9)} minutes", ids[0]))
            elif roll < 0.75:  # same length: SQLite may rewrite the overflow pages alone
                text = conn.execute("SELECT content FROM memories WHERE id = ?", ids).fetchone()[0]
                conn.execute("UPDATE memories SET content = ? WHERE id = ?",
                             (text[:-1] + ("q" if not text.endswith("q") else "r"), ids[0]))
            elif roll < 0.93:
                conn.execute("DELETE FROM memories WHERE id = ?", ids)
            else:
                conn.execute("INSERT OR REPLACE INTO memories (id, content, created_at, updated_at) "
                             "VALUES (?, 'replaced', datetime('now'), datetime('now'))", ids)
        conn.execute("COMMIT")
        if rng.random() < 0.05:
            conn.execute(f"PRAGMA wal_checkpoint({rng.choice(['PASSIVE', 'RESTART'])})")
        if rng.random() < 0.3:
            continue  # several commits before the next look
        changes = heard(store)
        after = _rows(conn)
        added, removed = set(after) - set(before), set(before) - set(after)
        changed = {i for i in set(after) & set(before) if after[i] != before[i]}  # a new rowid too (REPLACE)
        if added or removed or changed:
            assert len(changes) == 1
            [change] = changes
            if change:
                named += 1
                assert (_step, change.added, change.removed, change.changed) == (_step, added, removed, changed)
                assert change.added == added and change.removed == removed and change.changed == changed
                # (a rowid a new memory took again is left out: a view reloads rather than drop it)
                assert change.removed_rowids == {before[i][0] for i in removed} - {r[0] for r in after.values()}
                # The columns named cover every value the edits wrote (rows too long for their page too).
                wrote = {names[k] for i in changed for k in range(1, len(names)) if after[i][k] != before[i][k]}
                assert change.columns is None or wrote <= change.columns, (_step, wrote, change.columns)
        before = after
    assert named > 60  # most looks named the rows (a reload is the exception)
    conn.close()
    store.close()


def test_a_commit_between_opening_and_the_first_look_is_named(tmp_path):
    path = raw_seed_db(tmp_path / "agent.site.db", ROWS[:10])
    conn = sqlite3.connect(path, isolation_level=None)  # an agent that keeps its log alive
    conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                 "VALUES ('before', 'x', datetime('now'), datetime('now'))")
    store = open_store(path)  # marks the log where it is, reading none of it
    conn.execute("INSERT INTO memories (id, content, created_at, updated_at) "
                 "VALUES ('after', 'y', datetime('now'), datetime('now'))")
    [change] = heard(store)
    assert change.added == {"after"} and not change.changed and not change.removed
    conn.close()
    store.close()


def test_every_reader_hears_each_commit_once_whoever_looks_first(watched):
    """The window's watcher, the MCP server's notices and a sidecar read one feed: one reader's
    look must not take a commit away from another."""
    path, store = watched
    sidecar = store.feed_reader()
    agent(path, "UPDATE memories SET content = 'first' WHERE id = 'm001'")
    assert store.changed_externally()  # the notices look first
    assert not store.changed_externally()
    [change] = heard(store)  # the window still hears it, with its id
    assert change.changed == {"m001"}
    agent(path, "UPDATE memories SET content = 'second' WHERE id = 'm002'")
    agent(path, "INSERT INTO memories (id, content, created_at, updated_at) "
                "VALUES ('new-2', 'written between two looks', datetime('now'), datetime('now'))")
    [change] = heard(store)
    assert change.changed == {"m002"} and change.added == {"new-2"}
    # The reader that looked least often hears all three commits, as one change.
    change = sidecar.poll()
    assert change.changed == {"m001", "m002"} and change.added == {"new-2"}
    assert sidecar.poll() is None and store.changed_externally() and not store.changed_externally()


def test_a_commit_in_the_log_but_not_yet_published_is_named_once_it_is(watched):
    """A writer appends a commit's frames to the log before the wal-index publishes them; a look
    in between must not read that commit (SQL cannot see its rows yet, and they were dropped for
    good). Replayed exactly: the index header is put back as it was before the second commit."""
    path, store = watched
    insert = ("INSERT INTO memories (id, content, created_at, updated_at) "
              "VALUES (?, 'an agent wrote this', datetime('now'), datetime('now'))")
    agent(path, insert, params=[["published-1"]])
    before = index_header(path)
    agent(path, insert, params=[["written-2"]])
    after = index_header(path)
    write_index_header(path, before)  # the second commit's frames are in the log, not published
    [first] = heard(store)
    assert first.added == {"published-1"}
    write_index_header(path, after)  # now it is
    [second] = heard(store)
    assert second.added == {"written-2"} and not second.removed


def test_a_commit_restarting_the_log_is_named_once_it_is_published(watched):
    """The first commit after a checkpoint copied the whole log writes from the log's start under
    new salts, and publishes them after: a look in between reads none of it (the index still
    names the generation before), and the next look names it."""
    path, store = watched
    insert = ("INSERT INTO memories (id, content, created_at, updated_at) "
              "VALUES (?, 'an agent wrote this', datetime('now'), datetime('now'))")
    agent(path, "UPDATE memories SET content = content || '.' WHERE rowid <= 60")
    assert heard(store)
    agent(path, insert, params=[["published"]])  # heard below, after the log restarted
    busy, frames, copied = checkpoint(path)
    assert busy == 0 and frames == copied  # every frame copied: the next commit restarts the log
    before = index_header(path)
    agent(path, insert, params=[["restarting"]])
    after = index_header(path)
    write_index_header(path, before)  # the restart's frames are in the log, not published
    first = heard(store)
    assert first and not any("restarting" in change.added for change in first)
    write_index_header(path, after)  # now they are
    [change] = heard(store)
    assert change.added == {"restarting"} and not change.removed
