"""Every store operation on files made by the seed's own raw SQL (not by our code)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from ora_desktop import (
    Change,
    Conflict,
    InvalidValue,
    ListQuery,
    Memory,
    NotFound,
    ReadOnlyDatabase,
    open_store,
)
from ora_desktop.core.rawsql import run_sql
from tests.unit.core_support import legacy_memories

SEED_ROWS = [
    ("m-fact-hi", "The site deploys from main", "fact", 9),
    ("m-fact-lo", "Old build box was at 10.0.0.4", "fact", 2),
    ("m-pref", "User prefers dark mode\nand short answers", "preference", 6),
    ("m-ctx", "Project started in January", "context", 5),
    ("m-task", "Ship the release notes", "task", 7),
    ("m-conv", "Talked about the CI cache", "conversation", 4),
]


def raw(path, sql, params=()):
    """Run SQL through plain sqlite3, as another program would."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(sql, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


@pytest.fixture
def db(seed_db):
    return seed_db(SEED_ROWS)


@pytest.fixture
def store(db):
    with open_store(db) as s:
        yield s


def test_get_find_and_records(store):
    memory = store.get("m-pref")
    assert isinstance(memory, Memory)
    assert memory.content.startswith("User prefers dark mode")
    assert memory.title == "User prefers dark mode"
    assert memory.type == "preference" and memory.importance == 6
    assert memory.health_score == 1.0 and memory.access_count == 0
    assert memory.sync_status == "pending" and memory.is_dirty
    assert memory.created_at.tzinfo is UTC
    assert abs(memory.created_at - datetime.now(UTC)) < timedelta(minutes=5)
    assert memory.related_to == () and not memory.related_malformed
    with pytest.raises(NotFound, match="m-none"):
        store.get("m-none")
    assert store.find("m-none") is None
    with pytest.raises(AttributeError):
        memory.content = "changed"  # records are immutable


def test_get_many_and_by_rowids(store):
    found = store.get_many(["m-ctx", "m-task", "m-missing", "m-ctx"])
    assert set(found) == {"m-ctx", "m-task"}
    keys = store.row_keys(order_by="id", descending=False)
    rows = store.by_rowids(list(reversed(keys)))
    assert [m.id for m in rows] == sorted((r[0] for r in SEED_ROWS), reverse=True)


def test_add_writes_the_seed_format(store, db):
    memory = store.add("Deploy key rotates monthly", type="fact", importance=8)
    stored = raw(db, "SELECT content, type, importance, created_at, updated_at, sync_status, health_score "
                     "FROM memories WHERE id = ?", (memory.id,))
    content, type_, importance, created, updated, sync, health = stored[0]
    assert (content, type_, importance, sync, health) == ("Deploy key rotates monthly", "fact", 8, "pending", 1.0)
    assert len(created) == 19 and created[10] == " " and created == updated  # datetime('now') format
    # The seed's own recall query finds it.
    ids = [r[0] for r in raw(db, "SELECT id FROM memories WHERE type = ? AND health_score > 0.3 "
                                 "ORDER BY importance DESC, created_at DESC LIMIT 20", ("fact",))]
    assert memory.id in ids


def test_add_with_id_and_fields(store):
    memory = store.add("Pinned", type="context", importance=3, id="custom-1", related_to=["m-ctx"],
                       expires_at=datetime(2030, 1, 1, tzinfo=UTC), sync_status="local_only")
    assert memory.id == "custom-1"
    assert memory.related_to == ("m-ctx",)
    assert memory.expires_at == datetime(2030, 1, 1, tzinfo=UTC)
    assert memory.sync_status == "local_only" and not memory.is_dirty
    with pytest.raises(InvalidValue, match="id"):
        store.add("Again", id="custom-1")


def test_add_many_is_all_or_nothing(store):
    change = store.add_many([{"content": f"bulk {i}", "type": "task", "importance": 1 + i % 10}
                             for i in range(500)])
    assert len(change.added) == 500
    assert store.count(types=("task",)) == 501
    before = store.count()
    with pytest.raises(InvalidValue, match="importance"):
        store.add_many([{"content": "fine"}, {"content": "bad", "importance": 11}])
    with pytest.raises(InvalidValue, match="id"):
        store.add_many([{"content": "a", "id": "dup"}, {"content": "b", "id": "dup"}])
    with pytest.raises(InvalidValue, match="id"):
        store.add_many([{"content": "new one", "id": "new-1"}, {"content": "exists", "id": "m-ctx"}])
    assert store.count() == before
    assert store.find("new-1") is None


def test_update_follows_the_sync_rule(store, db):
    raw(db, "UPDATE memories SET sync_status = 'synced', synced_at = datetime('now', '+1 minute'), "
            "updated_at = datetime('now', '-1 day')")
    raw(db, "UPDATE memories SET sync_status = 'local_only' WHERE id = 'm-ctx'")
    assert not store.get("m-fact-hi").is_dirty
    updated = store.update("m-fact-hi", content="The site deploys from release branches", importance=10)
    assert updated.content == "The site deploys from release branches" and updated.importance == 10
    assert updated.sync_status == "pending"
    assert abs(updated.updated_at - datetime.now(UTC)) < timedelta(minutes=1)
    local = store.update("m-ctx", content="Project started in February")
    assert local.sync_status == "local_only"
    assert abs(local.updated_at - datetime.now(UTC)) < timedelta(minutes=1)
    explicit = store.update("m-pref", sync_status="synced")
    assert explicit.sync_status == "synced"


def test_update_many_follows_the_sync_rule(store, db):
    raw(db, "UPDATE memories SET sync_status = 'synced', updated_at = '2024-01-01 00:00:00'")
    raw(db, "UPDATE memories SET sync_status = 'local_only' WHERE id = 'm-task'")
    change = store.update_many(["m-task", "m-conv", "m-missing"], importance=3)
    assert change.changed == {"m-task", "m-conv"}
    task, conv, untouched = store.get("m-task"), store.get("m-conv"), store.get("m-ctx")
    assert (task.importance, conv.importance) == (3, 3)
    assert task.sync_status == "local_only" and conv.sync_status == "pending"
    assert conv.updated_at.year >= 2025 and untouched.updated_at.year == 2024
    assert untouched.sync_status == "synced"


def test_update_errors_and_conflict(store, db):
    with pytest.raises(NotFound):
        store.update("m-none", content="x")
    start = store.get("m-conv")
    raw(db, "UPDATE memories SET content = 'agent edit', updated_at = '2099-01-01 00:00:00' WHERE id = 'm-conv'")
    with pytest.raises(Conflict, match="changed by another program"):
        store.update("m-conv", expected_version=start.version, content="my edit")
    assert store.get("m-conv").content == "agent edit"
    fresh = store.get("m-conv")
    assert store.update("m-conv", expected_version=fresh.version, content="my edit").content == "my edit"
    with pytest.raises(InvalidValue, match="id"):
        store.update("m-conv", id="other")  # not an editable field


def test_touch_is_the_seeds_access_update(store, db):
    raw(db, "UPDATE memories SET health_score = 0.95, access_count = 2 WHERE id = 'm-ctx'")
    touched = store.touch("m-ctx")
    assert touched.access_count == 3
    assert touched.health_score == 1.0  # capped
    assert abs(touched.last_accessed_at - datetime.now(UTC)) < timedelta(minutes=1)
    assert touched.version == store.get("m-ctx").version  # the record returned is the row as stored
    raw(db, "UPDATE memories SET health_score = 0.5 WHERE id IN ('m-task', 'm-conv')")
    change = store.touch_many(["m-task", "m-conv"])
    assert change.changed == {"m-task", "m-conv"}
    assert store.get("m-task").health_score == pytest.approx(0.6)
    with pytest.raises(NotFound):
        store.touch("m-none")


def test_delete_is_recoverable_and_restore(store, db):
    extra = store.add("to delete", id="gone-1", related_to=["m-ctx"])
    removed = store.delete(["gone-1", "m-conv", "m-unknown"], reason="test delete")
    assert {m.id for m in removed} == {"gone-1", "m-conv"}
    assert store.find("gone-1") is None
    trashed = store.trash()
    assert {t.memory.id for t in trashed} == {"gone-1", "m-conv"}
    kept = next(t for t in trashed if t.memory.id == "gone-1")
    assert kept.reason == "test delete" and kept.memory.related_to == ("m-ctx",)
    assert kept.memory.content == extra.content
    change, skipped = store.restore_deleted([t.trash_id for t in trashed])
    assert change.added == {"gone-1", "m-conv"} and skipped == ()
    restored = store.get("gone-1")
    assert (restored.content, restored.related_to, restored.version) == (extra.content, extra.related_to, extra.version)
    assert store.trash() == []
    # Every column comes back exactly as it was, seed-written timestamps included.
    assert raw(db, "SELECT * FROM memories WHERE id = 'm-conv'")[0][1] == "Talked about the CI cache"


def test_restore_keeps_copies_it_cannot_put_back(store):
    store.add("version one", id="dup")
    store.delete("dup")
    store.add("version two", id="dup")
    store.delete("dup")
    store.add("version three", id="other")
    store.delete("other")
    store.add("occupies other", id="other")
    trashed = store.trash()
    change, skipped = store.restore_deleted([t.trash_id for t in trashed])
    assert change.added == {"dup"}
    assert store.get("dup").content == "version two"  # the latest deleted copy
    assert set(skipped) == {"dup", "other"}
    left = {(t.memory.id, t.memory.content) for t in store.trash()}
    assert left == {("dup", "version one"), ("other", "version three")}  # nothing lost


def test_delete_many_ids_in_one_statement(store):
    store.add_many([{"content": f"n{i}", "id": f"bulk-{i}"} for i in range(40000)])
    removed = store.delete([f"bulk-{i}" for i in range(40000)])
    assert len(removed) == 40000
    assert store.count() == len(SEED_ROWS)
    assert store.trash_count() == 40000


def test_subscribers_get_what_changed(store):
    seen: list[Change] = []
    unsubscribe = store.subscribe(seen.append)
    memory = store.add("x")
    store.update(memory.id, content="y")
    store.delete(memory.id)
    unsubscribe()
    store.add("not seen")
    # One Change per commit; the library's update is the journalled edit operation (its label).
    assert [c.source for c in seen] == ["add", "edit", "deleted"]
    assert [c.kind.name for c in seen] == ["ADDED", "EDITED", "DELETED"]
    assert seen[0].added == {memory.id} and seen[1].changed == {memory.id} and seen[2].removed == {memory.id}


def test_supersede_and_chain(store, db):
    raw(db, "UPDATE memories SET sync_status = 'synced', updated_at = '2024-01-01 00:00:00'")
    store.add("The site deploys from main via CI", id="v2", created_at="2025-02-01 00:00:00")
    v3 = store.add("The site deploys from main via CI, tagged", id="v3", created_at="2025-03-01 00:00:00")
    store.supersede("m-fact-hi", "v2")
    change = store.supersede("v2", "v3")
    assert change.changed == {"v2"} and change.source == "supersede"
    old = store.get("m-fact-hi")
    assert old.superseded_by == "v2" and old.sync_status == "pending" and old.updated_at.year >= 2025
    chain = store.chain("v2")
    assert [m.id for m in chain.members] == ["v3", "v2", "m-fact-hi"]
    assert chain.live.id == v3.id and not chain.cycle and chain.dangling == ()
    assert store.live_version("m-fact-hi").id == "v3"
    with pytest.raises(InvalidValue, match="cycle"):
        store.supersede("v3", "m-fact-hi")
    with pytest.raises(NotFound):
        store.supersede("v3", "nope")
    # Hidden from lists by default, shown on request.
    assert "m-fact-hi" not in {m.id for m in store.list()}
    assert {"m-fact-hi", "v2"} <= {m.id for m in store.list(superseded="only")}


def test_chain_reports_cycles_and_dangling_ids(store, db):
    raw(db, "UPDATE memories SET superseded_by = 'm-task' WHERE id = 'm-conv'")
    raw(db, "UPDATE memories SET superseded_by = 'm-conv' WHERE id = 'm-task'")
    chain = store.chain("m-conv")
    assert chain.cycle and chain.live is None
    assert {m.id for m in chain.members} == {"m-conv", "m-task"}
    raw(db, "UPDATE memories SET superseded_by = 'ghost' WHERE id = 'm-ctx'")
    dangling = store.chain("m-ctx")
    assert dangling.dangling == ("ghost",) and dangling.live is None


def test_link_unlink_and_neighbors(store, db):
    raw(db, "UPDATE memories SET sync_status = 'synced'")
    change = store.link("m-ctx", "m-task")
    assert change.changed == {"m-ctx", "m-task"}
    assert store.get("m-ctx").related_to == ("m-task",)
    assert store.get("m-task").related_to == ("m-ctx",)
    assert store.get("m-ctx").sync_status == "pending"
    store.link("m-task", "m-conv", mutual=False)
    raw(db, """UPDATE memories SET related_to = '["m-task", "ghost"]' WHERE id = 'm-pref'""")
    near = store.neighbors("m-ctx", hops=2)
    assert {(m.id, d) for m, d in near.found} == {("m-task", 1), ("m-conv", 2)}
    assert store.neighbors_of(store.get("m-ctx"), hops=2) == near  # from a memory in hand (context)
    assert store.neighbors("m-pref").dangling == ("ghost",)
    store.unlink("m-ctx", "m-task")
    assert store.get("m-ctx").related_to == () and store.get("m-task").related_to == ("m-conv",)
    assert raw(db, "SELECT related_to FROM memories WHERE id = 'm-ctx'")[0][0] is None
    with pytest.raises(InvalidValue):
        store.link("m-ctx", "m-ctx")
    with pytest.raises(NotFound):
        store.link("m-ctx", "ghost")


def test_malformed_related_to_is_reported_not_fatal(store, db):
    raw(db, "UPDATE memories SET related_to = '[broken' WHERE id = 'm-conv'")
    memory = store.get("m-conv")
    assert memory.related_to == () and memory.related_malformed
    assert store.neighbors("m-conv").malformed == ("m-conv",)
    with pytest.raises(InvalidValue, match="malformed"):
        store.link("m-conv", "m-ctx")
    assert raw(db, "SELECT related_to FROM memories WHERE id = 'm-conv'")[0][0] == "[broken"


def test_recall_and_important_have_the_seeds_semantics(store, db):
    raw(db, "UPDATE memories SET health_score = 0.3 WHERE id = 'm-fact-lo'")
    assert [m.id for m in store.recall("fact")] == ["m-fact-hi"]  # health must be above 0.3
    raw(db, "UPDATE memories SET health_score = 0.31 WHERE id = 'm-fact-lo'")
    assert [m.id for m in store.recall("fact")] == ["m-fact-hi", "m-fact-lo"]
    store.add_many([{"content": f"f{i}", "type": "fact", "importance": 5} for i in range(30)])
    assert len(store.recall("fact")) == 20 and len(store.recall("fact", limit=5)) == 5
    with pytest.raises(InvalidValue, match="type"):
        store.recall("facts")
    important = store.important()
    expected = raw(db, "SELECT id FROM memories WHERE importance >= 7 OR (type = 'fact' AND health_score >= 0.5)")
    assert len(expected) < 50 and {m.id for m in important} == {r[0] for r in expected}
    assert [m.importance for m in important] == sorted((m.importance for m in important), reverse=True)
    assert "m-fact-lo" not in {m.id for m in important}  # fact with health 0.31 < 0.5, importance 2


def test_tasks_read_task_context(db, seed_db):
    raw(db, "INSERT INTO task_context (id, task_description, input_data, output_data, status, created_at) "
            """VALUES ('t1', 'Summarise the repo', '{"repo": "ora"}', 'not json', 'completed', datetime('now'))""")
    with open_store(db) as store:
        (task,) = store.tasks()
    assert task.task_description == "Summarise the repo"
    assert task.input_data == {"repo": "ora"} and task.output_data == "not json"
    assert task.status == "completed" and task.created_at.tzinfo is UTC


def test_list_filters(store, db):
    raw(db, "UPDATE memories SET health_score = 0.15, sync_status = 'synced', synced_at = datetime('now', '+1 day') "
            "WHERE id = 'm-fact-lo'")
    raw(db, "UPDATE memories SET expires_at = datetime('now', '-1 day') WHERE id = 'm-conv'")
    raw(db, "UPDATE memories SET expires_at = datetime('now', '+2 days') WHERE id = 'm-task'")
    raw(db, "UPDATE memories SET expires_at = datetime('now', '+30 days'), sync_status = 'local_only' "
            "WHERE id = 'm-ctx'")

    def ids(**filters):
        return {m.id for m in store.list(**filters)}

    assert ids(types=("fact",)) == {"m-fact-hi", "m-fact-lo"}
    assert ids(types=("fact", "task")) == {"m-fact-hi", "m-fact-lo", "m-task"}
    assert ids(importance_min=6, importance_max=7) == {"m-pref", "m-task"}
    assert ids(health_max=0.2) == {"m-fact-lo"}
    assert ids(health_min=0.5) == {r[0] for r in SEED_ROWS} - {"m-fact-lo"}
    assert ids(sync_statuses=("synced",)) == {"m-fact-lo"}
    assert ids(expired=True) == {"m-conv"}
    assert "m-conv" not in ids(expired=False)
    assert ids(expiring_within_days=7) == {"m-task"}
    assert ids(dirty=False) == {"m-fact-lo", "m-ctx"}
    assert ids(dirty=True) == {"m-fact-hi", "m-pref", "m-task", "m-conv"}
    assert ids(text="CI") == {"m-conv"}
    assert ids(text="100%") == set()
    assert ids(ids=("m-pref", "m-task")) == {"m-pref", "m-task"}
    assert store.count(types=("fact",)) == 2
    with pytest.raises(InvalidValue, match="type"):
        store.list(types=("nope",))
    with pytest.raises(InvalidValue, match="order_by"):
        store.list(order_by="content; DROP TABLE memories")


@pytest.mark.parametrize("column", ["id", "content", "type", "importance", "access_count", "health_score",
                                    "created_at", "updated_at", "expires_at", "sync_status", "rowid"])
def test_list_sorts_on_any_column(store, db, column):
    raw(db, "UPDATE memories SET expires_at = '2026-01-0' || (rowid % 3 + 1) || ' 00:00:00' WHERE rowid % 2 = 0")
    for descending in (False, True):
        got = [m.id for m in store.list(order_by=column, descending=descending)]
        key = f"julianday({column})" if column.endswith("_at") else column
        direction = "DESC" if descending else "ASC"
        want = [r[0] for r in raw(db, f"SELECT id FROM memories ORDER BY {key} {direction}, rowid {direction}")]
        assert got == want


def test_facets_count_every_facet(store, db):
    raw(db, "UPDATE memories SET health_score = 0.05, sync_status = 'synced' WHERE id = 'm-fact-lo'")
    raw(db, "UPDATE memories SET health_score = 0.55 WHERE id = 'm-pref'")
    facets = store.facets()
    assert facets.total == 6
    assert facets.types == {"fact": 2, "preference": 1, "context": 1, "task": 1, "conversation": 1}
    assert facets.sync_statuses == {"pending": 5, "synced": 1}
    assert facets.importance == {9: 1, 2: 1, 6: 1, 5: 1, 7: 1, 4: 1}
    assert facets.health_buckets["0.0-0.1"] == 1 and facets.health_buckets["0.5-0.6"] == 1
    assert facets.health_buckets["0.9-1.0"] == 4 and sum(facets.health_buckets.values()) == 6
    assert store.facets(types=("fact",)).total == 2
    store.supersede("m-conv", "m-ctx")
    assert store.facets().total == 5 and store.facets(superseded="show").total == 6


def test_writes_refused_on_a_read_only_store(db):
    before = db.read_bytes()
    with open_store(db, readonly=True) as store:
        for attempt in (
            lambda: store.add("x"),
            lambda: store.add_many([{"content": "x"}]),
            lambda: store.update("m-ctx", content="x"),
            lambda: store.update_many(["m-ctx"], content="x"),
            lambda: store.touch("m-ctx"),
            lambda: store.delete(["m-ctx"]),
            lambda: store.supersede("m-ctx", "m-task"),
            lambda: store.link("m-ctx", "m-task"),
            lambda: store.restore_deleted([1]),
        ):
            with pytest.raises(ReadOnlyDatabase, match="read-only"):
                attempt()
        assert store.get("m-ctx").content == "Project started in January"
    assert db.read_bytes() == before


def test_list_query_object_and_keyword_filters_agree(store):
    query = ListQuery(types=("fact",), order_by="importance")
    assert store.list(query) == store.list(types=("fact",), order_by="importance")
    assert store.list(query, limit=1) == store.list(query)[:1]


def test_extra_columns_are_kept_through_delete_and_restore(tmp_path):
    path = tmp_path / "extra.site.db"
    conn = legacy_memories(path, ", embedding_model TEXT, source_url TEXT")
    conn.execute("INSERT INTO memories (id, content, created_at, updated_at, embedding_model, source_url) "
                 "VALUES ('e1', 'with extras', datetime('now'), datetime('now'), 'mini-lm', 'https://x')")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert any("extra columns" in w and "embedding_model" in w for w in store.warnings)
        assert store.get("e1").content == "with extras"
        store.add("new row", id="e2")
        (deleted,) = store.delete("e1")
        change, _ = store.restore_deleted([t.trash_id for t in store.trash()])
        assert change.added == {"e1"}
    assert raw(path, "SELECT embedding_model, source_url FROM memories WHERE id = 'e1'") == [("mini-lm", "https://x")]
    assert raw(path, "SELECT count(*) FROM ora_desktop_trash") == [(0,)]


def test_changed_externally_ignores_our_own_writes(store, db):
    assert not store.changed_externally()
    store.add("ours")
    store.update("m-ctx", content="ours too")
    assert not store.changed_externally()
    raw(db, "UPDATE memories SET content = 'theirs' WHERE id = 'm-task'")
    assert store.changed_externally()
    assert not store.changed_externally()
    assert store.get("m-task").content == "theirs"


def test_legacy_text_in_numeric_columns_does_not_break_records(tmp_path):
    path = tmp_path / "legacy.site.db"
    conn = legacy_memories(path)
    conn.executemany("INSERT INTO memories (id, content, type, importance, health_score, created_at, updated_at) "
                     "VALUES (?, ?, 'fact', ?, ?, datetime('now'), datetime('now'))",
                     [("odd", "text in numbers", "high", "very"), ("ok", "plain", 5, 0.9)])
    conn.commit()
    conn.close()
    with open_store(path) as store:
        memory = store.get("odd")
        assert memory.health_score == "very" and memory.importance == "high" and not memory.recallable
        assert store.facets().total == 2
        assert [m.id for m in store.list(order_by="importance", descending=True)] == ["odd", "ok"]  # text > numbers
        assert [m.id for m in store.recall("fact")] == ["odd", "ok"]  # as the seed's SQL would: 'very' > 0.3


def test_new_ids_are_unique_and_sort_by_creation():
    from ora_desktop.core.writes import new_id

    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == 2000
    assert all(len(i) == 36 and i.startswith("mem-") for i in ids)
    first, later = new_id(), None
    import time

    time.sleep(0.002)
    later = new_id()
    assert first < later


def test_remove_where_recoverably_and_purge(store, db):
    raw(db, "UPDATE memories SET expires_at = '2020-01-01T00:00:00.000Z' WHERE id IN ('m-conv', 'm-ctx')")
    removed = store.remove_where_recoverably(
        "expires_at IS NOT NULL AND julianday(expires_at) < julianday('now')", [], reason="expired")
    assert {m.id for m in removed} == {"m-conv", "m-ctx"}
    assert {t.reason for t in store.trash()} == {"expired"}
    assert store.purge_trash(older_than_days=1) == 0  # just deleted: kept
    raw(db, "UPDATE ora_desktop_trash SET deleted_at = datetime('now', '-40 days')")
    assert store.purge_trash(older_than_days=30) == 2
    assert store.trash() == []


def test_write_groups_several_operations_in_one_transaction(store):
    with pytest.raises(RuntimeError), store.write():
        store.add("first", id="tx-1")
        store.update("m-ctx", content="changed inside")
        raise RuntimeError("abort")
    assert store.find("tx-1") is None
    assert store.get("m-ctx").content == "Project started in January"
    with store.write():
        store.add("first", id="tx-1")
        run_sql(store, "UPDATE memories SET importance = 8 WHERE id = ?", ["tx-1"])
    assert store.get("tx-1").importance == 8


def test_is_dirty_agrees_with_the_dirty_filter(store, db):
    raw(db, "UPDATE memories SET synced_at = NULL WHERE id = 'm-ctx'")
    raw(db, "UPDATE memories SET synced_at = '2099-01-01 00:00:00', sync_status = 'synced' WHERE id = 'm-task'")
    raw(db, "UPDATE memories SET synced_at = '2000-01-01T00:00:00Z', sync_status = 'synced' WHERE id = 'm-conv'")
    raw(db, "UPDATE memories SET sync_status = 'local_only' WHERE id = 'm-pref'")
    listed = {m.id for m in store.list(dirty=True)}
    assert listed == {m.id for m in store.list() if m.is_dirty}
    assert "m-ctx" in listed and "m-conv" in listed and "m-task" not in listed and "m-pref" not in listed


def test_changes_inside_a_write_are_told_after_commit_and_not_at_all_after_rollback(store):
    seen: list[Change] = []
    store.subscribe(seen.append)
    with pytest.raises(RuntimeError), store.write():
        store.add("rolled back", id="rb")
        assert seen == []
        raise RuntimeError("abort")
    assert seen == []
    with store.write():
        store.add("kept", id="kept")
        store.touch("kept")
        assert seen == []
    [change] = seen  # one commit, heard once: the touch of a memory just added is part of its adding
    assert change.added == {"kept"} and not change.changed


def test_chain_with_branches_lists_each_level_newest_first(store, db):
    raw(db, "UPDATE memories SET created_at = '2025-01-0' || rowid || ' 00:00:00'")
    raw(db, "UPDATE memories SET created_at = '2025-01-05T12:00:00.000Z' WHERE id = 'm-ctx'")  # ISO, newest
    store.supersede("m-fact-hi", "m-task")
    store.supersede("m-fact-lo", "m-task")
    store.supersede("m-ctx", "m-task")
    store.supersede("m-task", "m-conv")
    chain = store.chain("m-fact-lo")
    assert [m.id for m in chain.members] == ["m-conv", "m-task", "m-ctx", "m-fact-lo", "m-fact-hi"]
    assert chain.live.id == "m-conv" and not chain.cycle


def test_bulk_removal_without_records_still_tells_subscribers(store):
    seen: list[Change] = []
    store.subscribe(seen.append)
    removed = store.remove_where_recoverably("type = ?", ["fact"], "cleanup", return_records=False)
    assert removed == () and removed.count == 2 and removed.change == seen[-1]
    assert seen[-1].removed == {"m-fact-hi", "m-fact-lo"}
    assert {t.memory.id for t in store.trash(batch=removed.batch)} == {"m-fact-hi", "m-fact-lo"}
    assert {t.memory.id for t in store.trash()} == {"m-fact-hi", "m-fact-lo"}


def test_a_write_between_open_and_the_watchers_first_look_is_seen(store, db):
    """The window opens a file on one thread and polls it from another a second later: a write by
    someone else in between must not be missed (the watcher thread has no data_version past)."""
    import threading

    raw(db, "UPDATE memories SET content = 'theirs' WHERE id = 'm-task'")
    seen: list[bool] = []
    watcher = threading.Thread(target=lambda: seen.extend([store.changed_externally(), store.changed_externally()]))
    watcher.start()
    watcher.join()
    assert seen == [True, False]


def test_a_watchers_first_look_at_an_unchanged_file_reports_nothing(store, db):
    import threading

    seen: list[bool] = []
    watcher = threading.Thread(target=lambda: seen.append(store.changed_externally()))
    watcher.start()
    watcher.join()
    assert seen == [False]


def _look_from_another_thread(store) -> bool:
    import threading

    seen: list[bool] = []
    watcher = threading.Thread(target=lambda: seen.append(store.changed_externally()))
    watcher.start()
    watcher.join()
    return seen[0]


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_our_writes_from_any_thread_are_not_someone_elses(seed_db, journal):
    """The window writes on worker threads and watches on another one: its own edits must not
    come back as another program's (which would re-read every row key of a large file)."""
    import threading

    path = seed_db(SEED_ROWS)
    raw(path, f"PRAGMA journal_mode={journal}")
    with open_store(path) as store:
        assert not _look_from_another_thread(store)
        for n in range(3):
            writer = threading.Thread(target=lambda n=n: store.update("m-ctx", content=f"ours {n}"))
            writer.start()
            writer.join()
        store.add("ours, on this thread")
        assert not _look_from_another_thread(store)
        raw(path, "UPDATE memories SET content = 'theirs' WHERE id = 'm-task'")
        store.update("m-ctx", content="ours after theirs")  # our commit must not hide theirs
        assert _look_from_another_thread(store)
        assert not _look_from_another_thread(store)


def test_a_commit_landing_right_after_ours_is_someone_elses(store, db):
    """Between our COMMIT and our reading of the counter another writer may commit: the counter
    then moved by more than our one commit."""
    connection = store.db.connection()
    store._watch.own_commit_begins(connection)
    raw(db, "UPDATE memories SET content = 'theirs' WHERE id = 'm-task'")
    store._watch.own_commit_ended(connection)  # we changed nothing, yet the counter moved
    assert store.changed_externally()


def test_row_keys_match_sqlite_order_across_parse_slices(store, db, monkeypatch):
    """Keys are read joined and parsed a slice at a time: every slice boundary keeps them whole."""
    from ora_desktop.core import store as store_module

    raw(db, "INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
            "SELECT 'bulk-' || i, 'row ' || i, 'fact', 1 + i % 10, datetime('now'), datetime('now') FROM n")
    raw(db, "INSERT INTO memories (rowid, id, content, type, importance, created_at, updated_at) "
            "VALUES (-5, 'negative', 'rowid below zero', 'fact', 10, datetime('now'), datetime('now'))")
    monkeypatch.setattr(store_module, "KEY_SLICE", 7)  # many slices
    expected = [r[0] for r in raw(db, "SELECT rowid FROM memories ORDER BY importance DESC, rowid DESC")]
    assert list(store.row_keys(order_by="importance", descending=True, limit=None)) == expected
    assert list(store.row_keys(order_by="importance", descending=True, limit=5)) == expected[:5]
    assert -5 in expected
    assert list(store.row_keys(limit=0)) == []  # group_concat of no rows is NULL


def test_sync_state_names_each_case_once() -> None:
    from ora_desktop.core.records import Memory
    from ora_desktop.core.timestamps import parse

    def memory(status: str, synced: str | None, updated: str) -> Memory:
        return Memory(id="m", content="x", sync_status=status, synced_at=parse(synced) if synced else None,
                      updated_at=parse(updated))

    assert memory("local_only", None, "2026-01-01 00:00:00").sync_state == "local only"
    assert memory("pending", None, "2026-01-01 00:00:00").sync_state == "never synced"
    assert memory("synced", "2026-01-01 00:00:00", "2026-02-01 00:00:00").sync_state == "changed since its last sync"
    assert memory("synced", "2026-03-01 00:00:00", "2026-02-01 00:00:00").sync_state == "in sync"
