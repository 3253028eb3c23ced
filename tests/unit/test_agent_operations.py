"""The agent operations (what the MCP tools call): their rules, on seed-made files, no Qt, no SDK."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import InvalidValue, NotFound, ReadOnlyDatabase, open_store
from ora_desktop.core.operations import agent_memory as ops
from ora_desktop.core.validation import MAX_CONTENT_CHARS

ROWS = [
    ("m-deploy", "The site deploys from main through the release pipeline", "fact", 8),
    ("m-tabs", "The user prefers tabs", "preference", 6),
    ("m-old", "The API key rotates monthly", "fact", 3),
]


@pytest.fixture
def path(seed_db: Callable[..., Path]) -> Path:
    return seed_db(ROWS)


def dump(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


def test_forget_reports_the_trash_rows_that_bring_the_memories_back(path: Path) -> None:
    with open_store(path) as store:
        ops.forget(store, ["m-deploy"], reason="first")
        done = ops.forget(store, ["m-tabs", "m-old", "m-tabs"], reason="second")
        assert sorted(m.id for m in done.removed) == ["m-old", "m-tabs"]
        assert done.change.removed == {"m-old", "m-tabs"}
        assert len(done.trash_ids) == 2  # this call's rows only, not the earlier forget's
        change, skipped = store.restore_deleted(done.trash_ids)
        assert change.added == {"m-old", "m-tabs"} and not skipped
        assert store.find("m-deploy") is None


def test_forget_touch_with_an_unknown_id_change_nothing(path: Path) -> None:
    before = dump(path)
    with open_store(path) as store:
        for operation in (ops.forget, ops.touch):
            with pytest.raises(NotFound, match="'ghost'"):
                operation(store, ["m-deploy", "ghost"])
            with pytest.raises(InvalidValue, match="ids"):
                operation(store, [])
    assert dump(path) == before


def test_remember_validates_like_the_cli_and_stores_related_and_expiry(path: Path) -> None:
    with open_store(path) as store:
        done = ops.remember(store, "Staging first", "fact", 9, related=["m-deploy"], expires_at="2030-01-01T00:00:00Z")
        assert done.memory.related_to == ("m-deploy",) and done.change.added == {done.memory.id}
        assert done.memory.expires_at is not None and done.memory.expires_at.year == 2030
        count = store.count()
        for kwargs, field in (({"importance": 0}, "importance"), ({"type": "opinion"}, "type"),
                              ({"expires_at": "soon"}, "expires_at"), ({"related": ["bad\x00id"]}, "related_to")):
            with pytest.raises(InvalidValue, match=field):
                ops.remember(store, "x", **{"type": "fact", "importance": 5, **kwargs})
        assert store.count() == count


def test_content_past_the_limit_is_refused_before_any_sql(path: Path) -> None:
    with open_store(path) as store:
        with pytest.raises(InvalidValue, match="content: holds 16,777,217 characters"):
            store.add("x" * (MAX_CONTENT_CHARS + 1))
        assert store.add("x" * MAX_CONTENT_CHARS).content == "x" * MAX_CONTENT_CHARS


def test_reads_check_their_numbers_and_call_the_seed_rules(path: Path) -> None:
    with open_store(path, readonly=True) as store:
        assert [m.id for m in ops.recall(store, "fact")] == ["m-deploy", "m-old"]
        assert [m.id for m in ops.important(store)] == ["m-deploy", "m-old"]  # facts with health >= 0.5
        assert ops.search(store, "release pipeline").hits[0].memory.id == "m-deploy"
        assert ops.context(store, "deploys", 50).tokens <= 50
        for call, field in ((lambda: ops.recall(store, "fact", 0), "limit"),
                            (lambda: ops.recall(store, "fact", True), "limit"),
                            (lambda: ops.search(store, "x", 1001), "limit"),
                            (lambda: ops.search(store, 42), "query"),
                            (lambda: ops.context(store, "x", 0), "token_budget"),
                            (lambda: ops.context(store, "x", 10, hops=9), "hops")):
            with pytest.raises(InvalidValue, match=field):
                call()
        with pytest.raises(ReadOnlyDatabase):
            ops.remember(store, "nope")


def test_supersede_and_link_go_through_the_store_rules(path: Path) -> None:
    with open_store(path) as store:
        assert ops.supersede(store, "m-old", "m-deploy").change.changed == {"m-old"}
        with pytest.raises(InvalidValue, match="cycle"):
            ops.supersede(store, "m-deploy", "m-old")
        assert ops.link(store, "m-tabs", "m-deploy").change.changed == {"m-tabs", "m-deploy"}
        assert not ops.link(store, "m-tabs", "m-deploy").change  # already linked
        assert ops.link(store, "m-tabs", "m-deploy", remove=True).change.changed == {"m-tabs", "m-deploy"}
        with pytest.raises(NotFound):
            ops.memory(store, "ghost")
