"""Values outside the seed's CHECKs are refused before any SQL, naming the field and the range."""

from __future__ import annotations

import pytest

from ora_desktop import InvalidValue, open_store

BAD = [
    ({"importance": 0}, "importance", "1 to 10"),
    ({"importance": 11}, "importance", "1 to 10"),
    ({"importance": 5.5}, "importance", "1 to 10"),
    ({"importance": "high"}, "importance", "1 to 10"),
    ({"importance": True}, "importance", "1 to 10"),
    ({"health_score": 1.5}, "health_score", "0.0 to 1.0"),
    ({"health_score": -0.1}, "health_score", "0.0 to 1.0"),
    ({"health_score": float("nan")}, "health_score", "0.0 to 1.0"),
    ({"health_score": "good"}, "health_score", "0.0 to 1.0"),
    ({"type": "note"}, "type", "fact, preference, context, task, conversation"),
    ({"sync_status": "uploaded"}, "sync_status", "pending, synced, local_only"),
    ({"content": ""}, "content", "empty"),
    ({"content": "   \n"}, "content", "empty"),
    ({"content": "nul\x00byte"}, "content", "NUL"),
    ({"access_count": -1}, "access_count", "0 or more"),
    ({"expires_at": "next tuesday"}, "expires_at", "YYYY-MM-DD HH:MM:SS"),
    ({"related_to": "m1"}, "related_to", "list"),
    ({"related_to": ["ok", ""]}, "related_to", "non-empty"),
    ({"rowid": 3}, "rowid", "not an editable field"),
]


@pytest.fixture
def store(seed_db):
    path = seed_db([("m1", "first", "fact", 5)])
    with open_store(path) as s:
        yield s


def statements(store):
    """Every SQL statement the store's connection runs from now on."""
    seen: list[str] = []
    store.db.connection().set_trace_callback(seen.append)
    return seen


@pytest.mark.parametrize(("fields", "field", "words"), BAD, ids=[f"{b[1]}={b[0][b[1]]!r}" for b in BAD])
def test_bad_values_refused_before_sql(store, fields, field, words):
    before = store.get("m1")
    seen = statements(store)
    add_fields = {"content": "new", **fields}
    with pytest.raises(InvalidValue) as added:
        store.add(**add_fields)
    assert added.value.field == field
    message = str(added.value)
    assert message.startswith(f"{field}:") and words in message
    with pytest.raises(InvalidValue, match=field):
        store.update("m1", **fields)
    with pytest.raises(InvalidValue, match=field):
        store.update_many(["m1"], **fields)
    with pytest.raises(InvalidValue, match=field):
        store.add_many([{"content": "fine"}, add_fields])
    assert seen == []  # nothing reached SQLite
    store.db.connection().set_trace_callback(None)
    assert store.get("m1") == before
    assert store.count() == 1


def test_edge_values_are_accepted(store):
    low = store.add("low", importance=1, health_score=0.0, type="conversation", sync_status="local_only")
    high = store.add("high", importance="10", health_score=1, type="preference", sync_status="synced")
    assert (low.importance, low.health_score) == (1, 0.0)
    assert (high.importance, high.health_score) == (10, 1.0)


def test_list_filters_refuse_unknown_values(store):
    with pytest.raises(InvalidValue, match="sync_status"):
        store.list(sync_statuses=("uploaded",))
    with pytest.raises(InvalidValue, match="superseded"):
        store.list(superseded="maybe")


def test_a_memory_cannot_point_at_itself(store):
    with pytest.raises(InvalidValue, match="superseded_by"):
        store.update("m1", superseded_by="m1")
    with pytest.raises(InvalidValue, match="related_to"):
        store.update("m1", related_to=["other", "m1"])
    assert store.get("m1").superseded_by is None and store.get("m1").related_to == ()
