"""The review desk (core): what is new or changed since a person last reviewed, what needs attention,
marks and flags kept in the file's own ``ora_desktop_review`` table (created only by a mark)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.core import InvalidValue, NotFound, ReadOnlyDatabase, open_store
from ora_desktop.core.operations import review as rv
from tests.unit.test_cli_helpers import sql as raw

NOW = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)
OLD = "2026-01-05 09:00:00"


def put(path: Path, memory_id: str, content: str = "plain", *, at: str = OLD, updated: str | None = None,
        **columns: object) -> None:
    """A row written by another program (an agent), with the timestamps it chose."""
    values = {"id": memory_id, "content": content, "created_at": at, "updated_at": updated or at, **columns}
    names = ", ".join(values)
    raw(path, f"INSERT INTO memories ({names}) VALUES ({', '.join('?' * len(values))})", tuple(values.values()))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ids(result: rv.ReviewResult, reason: str | None = None) -> set[str]:
    return {i.memory.id for i in result.items if reason is None or reason in i.reasons}


@pytest.fixture
def agent(seed_db) -> Path:
    path = seed_db()
    for n in range(5):
        put(path, f"m{n}", f"old memory {n}")
    return path


def test_first_review_lists_everything_as_new_and_writes_nothing(agent: Path) -> None:
    before = digest(agent)
    with open_store(agent) as store:
        result = rv.review(store, "alice", now=NOW)
    assert ids(result, "new") == {f"m{n}" for n in range(5)}
    assert result.since is None and result.counts["new"] == 5
    assert digest(agent) == before
    assert raw(agent, "SELECT name FROM sqlite_master WHERE name = 'ora_desktop_review'") == []


def test_after_mark_all_only_what_others_added_or_changed_is_listed(agent: Path) -> None:
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
        assert ids(rv.review(store, "alice", now=NOW)) == set()
        put(agent, "fresh", "added by the agent", at="2026-03-02T08:00:00.000Z")  # the other timestamp format
        raw(agent, "UPDATE memories SET content = 'edited', updated_at = '2026-03-03 10:00:00' WHERE id = 'm2'")
        result = rv.review(store, "alice", now=NOW)
    assert ids(result, "new") == {"fresh"}
    assert ids(result, "changed") == {"m2"}
    assert ids(result) == {"fresh", "m2"}
    assert result.since == datetime(2026, 3, 1, tzinfo=UTC)
    assert [i.memory.id for i in result.items] == ["m2", "fresh"], "newest change first"


def test_marking_one_reviewed_hides_it_until_it_changes_again(agent: Path) -> None:
    with open_store(agent) as store:
        write = rv.mark_reviewed(store, ["m1", "m3"], "alice")
        assert write.change.changed == {"m1", "m3"} and write.action == "reviewed"
        assert ids(rv.review(store, "alice", now=NOW)) == {"m0", "m2", "m4"}
        assert ids(rv.review(store, "bob", now=NOW)) == {f"m{n}" for n in range(5)}, "marks are per reviewer"
        raw(agent, "UPDATE memories SET content = 'agent rewrote it', updated_at = '2026-03-09 10:00:00' "
                   "WHERE id = 'm3'")
        assert "m3" in ids(rv.review(store, "alice", now=NOW))


def test_a_journalled_mark_is_undone_and_redone_from_the_file_s_history(agent: Path) -> None:
    from ora_desktop.core.operations.undo import redo, undo

    with open_store(agent) as store:
        rv.mark_reviewed(store, ["m0"], "alice")
        rv.journalled(store, "alice", "mark m1 reviewed", lambda s: rv.mark_reviewed(s, ["m1"], "alice"))
        assert ids(rv.review(store, "alice", now=NOW)) == {"m2", "m3", "m4"}
        raw(agent, "UPDATE memories SET importance = 9 WHERE id = 'm1'")  # an edit of the memory is no conflict
        assert undo(store).entry.label == "mark m1 reviewed"
        assert "m1" in ids(rv.review(store, "alice", now=NOW)) and "m0" not in ids(rv.review(store, "alice", now=NOW))
        redo(store)
        assert ids(rv.review(store, "alice", now=NOW)) == {"m2", "m3", "m4"}


def test_memories_written_in_the_second_of_a_mark_all_are_neither_lost_nor_repeated(agent: Path) -> None:
    put(agent, "same-second-before", at="2026-03-01 10:00:00")
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC))
        assert ids(rv.review(store, "alice", now=NOW)) == set()
        put(agent, "same-second-after", at="2026-03-01 10:00:00")  # the agent wrote again in that second
        assert ids(rv.review(store, "alice", now=NOW)) == {"same-second-after"}


def test_what_needs_attention_is_listed_whatever_its_age(agent: Path) -> None:
    put(agent, "weak", "important but fading", importance=9, health_score=0.2)
    put(agent, "weak-but-replaced", importance=9, health_score=0.1, superseded_by="m0")
    put(agent, "soon", expires_at="2026-03-14 00:00:00")
    put(agent, "later", expires_at="2026-03-20 00:00:00")
    put(agent, "gone", expires_at="2026-03-01 00:00:00")
    put(agent, "dangles", related_to='["m0", "nowhere"]')
    put(agent, "broken-json", related_to="[m0")
    put(agent, "lost-chain", superseded_by="deleted-long-ago")
    put(agent, "loop-a", superseded_by="loop-b")
    put(agent, "loop-b", superseded_by="loop-a")
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
        result = rv.review(store, "alice", now=NOW)
    assert ids(result, "important_low_health") == {"weak"}
    assert ids(result, "expiring") == {"soon"}
    assert ids(result, "dangling_related_to") == {"dangles"}
    assert ids(result, "malformed_related_to") == {"broken-json"}
    assert ids(result, "dangling_superseded_by") == {"lost-chain"}
    assert ids(result, "supersession_cycle") == {"loop-a", "loop-b"}
    loop = next(i for i in result.items if i.memory.id == "loop-a")
    assert "loop-a → loop-b → loop-a" in loop.describe() or "loop-b → loop-a → loop-b" in loop.describe()
    assert not ids(result, "new") and not ids(result, "changed")
    assert all(item.needs_attention for item in result.items)


def test_attention_item_marked_reviewed_stays_away_until_it_changes(agent: Path) -> None:
    put(agent, "soon", expires_at="2026-03-14 00:00:00")
    put(agent, "loop-a", superseded_by="loop-b")
    put(agent, "loop-b", superseded_by="loop-a")
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
        rv.mark_reviewed(store, ["soon", "loop-a"], "alice")
        result = rv.review(store, "alice", now=NOW)
        assert ids(result) == {"loop-b"}
        raw(agent, "UPDATE memories SET expires_at = '2026-03-12 00:00:00', updated_at = '2026-03-09 00:00:00' "
                   "WHERE id = 'soon'")
        assert "soon" in ids(rv.review(store, "alice", now=NOW), "expiring")


def test_a_flag_carries_a_note_comes_first_and_is_cleared_by_a_review(agent: Path) -> None:
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
        rv.flag(store, "m4", "  contradicts   the deploy policy ", "alice")
        put(agent, "fresh", at="2026-03-05 00:00:00")
        result = rv.review(store, "alice", now=NOW)
        assert [i.memory.id for i in result.items] == ["m4", "fresh"]
        assert result.items[0].note == "contradicts the deploy policy"
        assert "flagged: contradicts the deploy policy" in result.items[0].describe()
        rv.unflag(store, "m4", "alice")
        assert ids(rv.review(store, "alice", now=NOW)) == {"fresh"}
        rv.flag(store, "m4", "look again", "alice")
        rv.mark_reviewed(store, ["m4"], "alice")
        assert "m4" not in ids(rv.review(store, "alice", now=NOW))


@pytest.mark.parametrize(("call", "error"), [
    (lambda s: rv.flag(s, "m1", "   ", "alice"), InvalidValue),
    (lambda s: rv.flag(s, "m1", "x" * 201, "alice"), InvalidValue),
    (lambda s: rv.flag(s, "nope", "why", "alice"), NotFound),
    (lambda s: rv.mark_reviewed(s, ["m1", "nope"], "alice"), NotFound),
    (lambda s: rv.mark_reviewed(s, [], "alice"), InvalidValue),
    (lambda s: rv.unflag(s, "m1", "alice"), NotFound),
])
def test_bad_marks_say_what_is_wrong_and_change_nothing(agent: Path, call, error) -> None:
    before = digest(agent)
    with open_store(agent) as store:
        with pytest.raises(error) as caught:
            call(store)
    assert str(caught.value)
    assert digest(agent) == before
    assert raw(agent, "SELECT name FROM sqlite_master WHERE name = 'ora_desktop_review'") == []


def test_read_only_file_can_be_reviewed_but_not_marked(agent: Path) -> None:
    before = digest(agent)
    with open_store(agent, readonly=True) as store:
        assert len(rv.review(store, "alice", now=NOW).items) == 5
        with pytest.raises(ReadOnlyDatabase, match=str(agent.name)):
            rv.mark_reviewed(store, ["m1"], "alice")
        with pytest.raises(ReadOnlyDatabase):
            rv.mark_all_reviewed(store, "alice")
    assert digest(agent) == before


def test_limit_keeps_true_counts_and_says_what_was_cut(agent: Path) -> None:
    for n in range(12):
        put(agent, f"x{n:02d}", f"new memory {n}", at=f"2026-02-{n + 1:02d} 00:00:00")
    with open_store(agent) as store:
        result = rv.review(store, "alice", limit=4, now=NOW)
    assert result.counts["new"] == 17 and result.truncated == ("new",)
    assert len(result.items) == 4


def test_marks_travel_with_the_file_in_a_plain_table(agent: Path, tmp_path: Path) -> None:
    with open_store(agent) as store:
        rv.flag(store, "m0", "check this", "alice")
    copy = tmp_path / "copied.site.db"
    copy.write_bytes(agent.read_bytes())
    sql = raw(copy, "SELECT sql FROM sqlite_master WHERE name = 'ora_desktop_review'")[0][0]
    assert "CREATE TABLE" in sql and "VIRTUAL" not in sql.upper()
    assert raw(copy, "SELECT type, name FROM sqlite_master WHERE type = 'trigger'") == []
    with open_store(copy) as store:
        assert rv.review(store, "alice", now=NOW).items[0].note == "check this"


def test_a_registered_rule_is_listed_with_its_detail(agent: Path) -> None:
    rule = rv.AttentionRule("duplicate", "near-duplicate", finder=lambda store, limit: [("m2", "near-duplicate of m3")])
    rv.add_attention_rule(rule)
    try:
        with open_store(agent) as store:
            rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
            result = rv.review(store, "alice", now=NOW)
    finally:
        rv.ATTENTION_RULES.remove(rule)
    assert ids(result) == {"m2"} and "near-duplicate of m3" in result.items[0].describe()


def test_a_mark_all_in_the_second_an_attention_memory_was_written_keeps_it_on_the_desk(agent: Path) -> None:
    put(agent, "fading-now", importance=9, health_score=0.1, at="2026-03-01 10:00:00")
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC))
        result = rv.review(store, "alice", now=NOW)
    assert ids(result) == {"fading-now"}
    assert result.items[0].reasons == ("important_low_health",)


def test_a_snapshot_puts_marks_and_flags_back_as_they_were(agent: Path) -> None:
    with open_store(agent) as store:
        rv.flag(store, "m1", "keep an eye on it", "alice")
        rv.mark_reviewed(store, ["m2"], "bob")
        saved = rv.snapshot(store, "alice")
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
        rv.mark_reviewed(store, ["m1", "m3"], "alice")
        assert ids(rv.review(store, "alice", now=NOW)) == set()
        undone = rv.restore(store, "alice", saved)
        result = rv.review(store, "alice", now=NOW)
        assert undone.ids == ("m1", "m3")
        assert ids(result, "new") == {f"m{n}" for n in range(5)} and result.since is None
        assert result.items[0].note == "keep an eye on it"
        assert "m2" not in ids(rv.review(store, "bob", now=NOW)), "another reviewer's marks are left alone"


def test_exact_duplicates_are_listed_beside_the_memory_to_keep(agent: Path) -> None:
    put(agent, "keep", "Deploys go out from main", importance=8)
    put(agent, "copy", "deploys go out  from MAIN", importance=3)  # the same text, case and spaces aside
    with open_store(agent) as store:
        rv.mark_all_reviewed(store, "alice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
        result = rv.review(store, "alice", now=NOW)
    assert ids(result, "duplicate") == {"copy"}  # the most important member is the one to keep
    item = next(i for i in result.items if i.memory.id == "copy")
    assert "exact duplicate of keep" in item.describe()
