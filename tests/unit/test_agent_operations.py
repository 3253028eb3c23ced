"""The agent operations (what the MCP tools call): their rules, on seed-made files, no Qt, no SDK."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ora_desktop.core import Conflict, InvalidValue, NotFound, ReadOnlyDatabase, open_store
from ora_desktop.core.operations import agent_memory as ops
from ora_desktop.core.operations import journal
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
                              ({"expires_at": "soon"}, "expires_at"), ({"related": ["bad\x00id"]}, "related"),
                              ({"importance": "7"}, "importance"), ({"importance": True}, "importance")):
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
        assert ops.search(store, "release pipeline").result.hits[0].memory.id == "m-deploy"
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


def test_remember_refuses_related_ids_that_do_not_exist(path: Path) -> None:
    before = dump(path)
    with open_store(path) as store:
        with pytest.raises(NotFound, match="related: no memory with id 'ghost'"):
            ops.remember(store, "Linked to nothing", related=["m-deploy", "ghost"])
    assert dump(path) == before


def test_remember_returns_the_identical_memory_instead_of_a_second_copy(path: Path) -> None:
    with open_store(path) as store:
        again = ops.remember(store, "  the user PREFERS tabs ", "preference", 6)
        assert again.already and again.memory.id == "m-tabs" and not again.change
        assert store.count() == 3
        tagged = ops.remember(store, "Tabs are set to width 4", tags=["style"])
        assert ops.remember(store, "tabs are set to  width 4").memory.id == tagged.memory.id  # tags aside
        assert store.count() == 4
        copy = ops.remember(store, "The user prefers tabs", "preference", 6, copy=True)
        assert not copy.already and copy.memory.id != "m-tabs" and store.count() == 5


def test_tags_are_written_as_the_line_the_tag_extractor_reads(path: Path) -> None:
    with open_store(path) as store:
        done = ops.remember(store, "Login fails without the cookie", tags=["jwt", "error=ENOENT"])
        assert done.memory.content == "Login fails without the cookie\nTags: jwt, error=ENOENT"
        assert [h.memory.id for h in ops.search(store, "tag:jwt").result.hits] == [done.memory.id]
        assert [h.memory.id for h in ops.search(store, "tag:error=ENOENT").result.hits] == [done.memory.id]
        changed = ops.update(store, done.memory.id, tags=["cookies"]).memory
        assert changed.content == "Login fails without the cookie\nTags: cookies"
        assert not ops.search(store, "tag:jwt").result.hits
        with pytest.raises(InvalidValue, match="tags"):
            ops.update(store, done.memory.id, tags=["a,b"])


def test_supersede_of_an_already_superseded_memory_names_its_current_successor(path: Path) -> None:
    with open_store(path) as store:
        n1 = ops.remember(store, "The API key rotates weekly").memory.id
        n2 = ops.remember(store, "The API key rotates daily").memory.id
        ops.supersede(store, "m-old", n1)
        with pytest.raises(Conflict, match=f"already superseded by '{n1}'"):
            ops.supersede(store, "m-old", n2)
        assert store.get("m-old").superseded_by == n1
        ops.supersede(store, "m-old", n1)  # the same successor again: nothing to refuse


def test_agent_writes_are_journalled_with_who_made_them_and_undoable(path: Path) -> None:
    from ora_desktop.core.operations.undo import undo

    with open_store(path) as store:
        added = ops.remember(store, "Staging needs a smoke test", actor="mcp:claude-code").memory.id
        ops.update(store, "m-tabs", importance=9, actor="mcp:claude-code")
        ops.forget(store, ["m-old"])
        rows = journal.entries(store)
        assert [(e.label.split()[0], e.who) for e in rows] == [
            ("delete", "library"), ("edit", "mcp:claude-code"), ("add", "mcp:claude-code")]
        undo(store)  # a person takes back the forget, then the edit
        undo(store)
        assert store.get("m-old").content and store.get("m-tabs").importance == 6
        assert store.get(added).content == "Staging needs a smoke test"


def test_update_refuses_a_stale_version_and_unknown_related_ids(path: Path) -> None:
    with open_store(path) as store:
        read = ops.memory(store, "m-tabs")
    conn = sqlite3.connect(path)  # another program changes the memory after the agent read it
    conn.execute("UPDATE memories SET content = 'The user prefers tabs, width 4', updated_at = '2020-01-01 00:00:00' "
                 "WHERE id = 'm-tabs'")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        with pytest.raises(Conflict):
            ops.update(store, "m-tabs", importance=2, version=read.version)
        with pytest.raises(NotFound, match="related"):
            ops.update(store, "m-tabs", related=["ghost"])
        with pytest.raises(InvalidValue, match="nothing to change"):
            ops.update(store, "m-tabs")
        assert store.get("m-tabs").importance == 6
        assert ops.update(store, "m-tabs", expires_at="2031-01-01 00:00:00").memory.expires_at.year == 2031
        assert ops.update(store, "m-tabs", expires_at="").memory.expires_at is None


def test_list_pages_newest_first_with_a_cursor_and_undelete_brings_forgotten_back(path: Path) -> None:
    with open_store(path) as store:
        everything = [m.id for m in store.list(limit=None)]
        first = ops.list_memories(store, limit=2)
        second = ops.list_memories(store, limit=2, cursor=first.cursor)
        assert [m.id for m in first.memories + second.memories] == everything and second.cursor is None
        with pytest.raises(InvalidValue, match="cursor"):
            ops.list_memories(store, limit=2, cursor=first.cursor, sort="importance")
        assert [m.id for m in ops.list_memories(store, types=["fact"], sort="importance").memories] == [
            "m-deploy", "m-old"]
        ops.forget(store, ["m-tabs"])
        assert [m.id for m in ops.undelete(store, ["m-tabs"]).restored] == ["m-tabs"]
        assert store.get("m-tabs").importance == 6


def test_a_journal_made_before_authors_were_recorded_stays_readable_and_gains_them(path: Path) -> None:
    conn = sqlite3.connect(path)  # the table as earlier versions created it, with one entry
    conn.execute("CREATE TABLE ora_desktop_journal (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, "
                 "kind TEXT NOT NULL, initiator TEXT NOT NULL, label TEXT NOT NULL, undo TEXT NOT NULL, "
                 "after TEXT NOT NULL)")
    conn.execute("INSERT INTO ora_desktop_journal (at, kind, initiator, label, undo, after) VALUES "
                 "('2026-01-01 00:00:00', 'edited', 'user', 'edit importance of m-tabs', '{}', '{}')")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        (old,) = journal.entries(store)
        assert old.actor is None and old.who == "person"
        ops.update(store, "m-tabs", importance=2, actor="mcp:cursor")
        assert [e.who for e in journal.entries(store)] == ["mcp:cursor", "person"]


def test_update_pins_with_its_edit_in_one_step_and_refuses_a_stale_version(path: Path) -> None:
    with open_store(path) as store:
        stale = store.get("m-tabs").version
        done = ops.update(store, "m-tabs", importance=9, pin=True, actor="mcp:test")
        assert done.memory.importance == 9 and done.pinned is True and ops.pinned(store) == {"m-tabs"}
        before = dump(path)
        with pytest.raises(Conflict, match="changed since"):
            ops.update(store, "m-tabs", pin=False, version=stale)
        with pytest.raises(InvalidValue, match="nothing to change"):
            ops.update(store, "m-tabs")
        assert dump(path) == before and ops.pinned(store) == {"m-tabs"}
        assert ops.update(store, "m-tabs", pin=False).pinned is False and ops.pinned(store) == frozenset()
        assert [e.who for e in journal.entries(store)] == ["mcp:test"]  # the edit; a pin is its own undo


def test_memory_fields_give_timestamps_as_sqlite_utc_text_whatever_the_file_holds(path: Path) -> None:
    from ora_desktop.mcp.shapes import memory_out

    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET created_at = '2026-01-01T10:00:00+02:00', "
                 "updated_at = '2026-01-02 03:04:05', expires_at = NULL WHERE id = 'm-tabs'")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        out = memory_out(store.get("m-tabs"), frozenset({"m-tabs"}))
    assert (out["created_at"], out["updated_at"], out["expires_at"]) == ("2026-01-01 08:00:00", "2026-01-02 03:04:05",
                                                                         None)
    assert out["pinned"] is True
