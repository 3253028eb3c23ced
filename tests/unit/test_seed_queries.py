"""important() and recall() answer like the seed's queries, and read the seed's indexes the way
the seed's own SQL does (the query plans say so; speed itself is measured in bench_seed)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core import store as store_module
from ora_desktop.core.demo import write_agent
from ora_desktop.core.schema import MEMORY_TYPES

NOW = datetime(2026, 6, 1, tzinfo=UTC)
REFERENCE_RECALL = ("SELECT id FROM memories WHERE type = ? AND health_score > 0.3 "
                    "ORDER BY importance DESC, julianday(created_at) DESC, rowid DESC LIMIT ?")
#: What an agent recalls by default: the seed's query without superseded or expired memories.
CURRENT = ("(superseded_by IS NULL OR superseded_by = '') "
           "AND (expires_at IS NULL OR julianday(expires_at) >= julianday('now'))")
CURRENT_RECALL = REFERENCE_RECALL.replace("health_score > 0.3 ", f"health_score > 0.3 AND {CURRENT} ")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seedq") / "ora.site.db"
    write_agent(path, 4000, seed=5, now=NOW)
    return path


def plan(path: Path, sql: str, params: tuple = ()) -> str:
    conn = sqlite3.connect(path)
    try:
        return " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    finally:
        conn.close()


def test_important_walks_the_importance_index_and_stops(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    statements: list[str] = []
    with open_store(demo, readonly=True) as store:
        read = store._read

        def spy(sql, params, build):
            statements.append(sql)
            return read(sql, params, build)

        monkeypatch.setattr(store, "_read", spy)
        important = store.important(current=False)
    (sql,) = statements
    steps = plan(demo, sql)
    assert "USING INDEX idx_memories_importance" in steps and "TEMP B-TREE" not in steps, steps
    conn = sqlite3.connect(demo)
    seed = conn.execute("SELECT id, importance FROM memories WHERE importance >= 7 OR (type = 'fact' AND "
                        "health_score >= 0.5) ORDER BY importance DESC, rowid DESC LIMIT 50").fetchall()
    conn.close()
    assert [(m.id, m.importance) for m in important] == seed
    assert len(important) == 50 and important[0].importance == 10


@pytest.mark.parametrize("common", [20000, 1])  # the type index (rare type), the importance walk
def test_recall_is_the_same_along_either_index(demo: Path, monkeypatch: pytest.MonkeyPatch, common: int) -> None:
    monkeypatch.setattr(store_module, "COMMON_TYPE", common)
    conn = sqlite3.connect(demo)
    with open_store(demo, readonly=True) as store:
        for kind in MEMORY_TYPES:
            for limit in (1, 20, 300):
                expected = [r[0] for r in conn.execute(REFERENCE_RECALL, (kind, limit))]
                assert [m.id for m in store.recall(kind, limit=limit, current=False)] == expected, (kind, limit)
                current = [r[0] for r in conn.execute(CURRENT_RECALL, (kind, limit))]
                assert [m.id for m in store.recall(kind, limit=limit)] == current, (kind, limit)
    conn.close()


def test_recall_and_important_leave_out_superseded_and_expired_memories(demo: Path) -> None:
    """What an agent corrected (superseded) or what stopped being true (expired) is not recalled;
    ``current=False`` gives the seed's literal query."""
    conn = sqlite3.connect(demo)
    stale = {r[0] for r in conn.execute(f"SELECT id FROM memories WHERE NOT ({CURRENT})")}
    seed_important = [r[0] for r in conn.execute(
        "SELECT id FROM memories WHERE importance >= 7 OR (type = 'fact' AND health_score >= 0.5) "
        "ORDER BY importance DESC, rowid DESC LIMIT 400")]
    seed_facts = [r[0] for r in conn.execute(REFERENCE_RECALL, ("fact", 400))]
    current_important = [r[0] for r in conn.execute(
        f"SELECT id FROM memories WHERE (importance >= 7 OR (type = 'fact' AND health_score >= 0.5)) AND {CURRENT} "
        "ORDER BY importance DESC, rowid DESC LIMIT 400")]
    conn.close()
    assert stale & set(seed_important) and stale & set(seed_facts), "the demo holds stale important facts"
    with open_store(demo, readonly=True) as store:
        important = [m.id for m in store.important(400)]
        facts = [m.id for m in store.recall("fact", 400)]
        assert [m.id for m in store.important(400, current=False)] == seed_important
        assert [m.id for m in store.recall("fact", 400, current=False)] == seed_facts
    assert not stale & set(important) and not stale & set(facts)
    assert important == current_important, "left out before the limit, not after"


def test_recall_of_a_common_type_reads_the_importance_index(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "COMMON_TYPE", 100)
    statements: list[str] = []
    with open_store(demo, readonly=True) as store:
        read = store._read
        monkeypatch.setattr(store, "_read", lambda sql, params, build: statements.append(sql) or read(sql, params,
                                                                                                          build))
        store.recall("fact")
    steps = plan(demo, statements[-1], ("fact", 0.3))
    assert "idx_memories_importance" in steps and "RIGHT PART OF ORDER BY" in steps, steps


def test_recall_without_the_seeds_indexes_still_answers(tmp_path: Path) -> None:
    path = tmp_path / "bare.site.db"
    write_agent(path, 300, seed=2, now=NOW)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX idx_memories_importance")
    conn.commit()
    expected = [r[0] for r in conn.execute(REFERENCE_RECALL, ("task", 20))]
    conn.close()
    with open_store(path, readonly=True) as store:
        assert [m.id for m in store.recall("task", current=False)] == expected
        assert len(store.important()) == 50


def test_important_builds_only_the_records_a_caller_reads(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ora_desktop.core import records

    built: list[object] = []
    real = records.row_to_memory
    monkeypatch.setattr(records, "row_to_memory", lambda row: built.append(row) or real(row))
    with open_store(demo, readonly=True) as store:
        found = store.important()
        assert len(found) == 50 and not built  # nothing built yet
        first = found[0]
        assert len(built) == 1 and found[0] is first  # built once, kept
        everything = list(found)
        assert len(built) == 50 and everything == found and found[:2] == everything[:2]
        assert [m.importance for m in everything] == sorted((m.importance for m in everything), reverse=True)
