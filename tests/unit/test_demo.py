"""The demo data generator: counts, determinism, realistic spread, the ORA_HOME tree."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.core import OraError, OraHome, open_store
from ora_desktop.core.demo import DEMO_AGENTS, write_agent, write_demo_home
from ora_desktop.core.schema import INIT_SQL, MEMORY_TYPES, SEED_INDEXES

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def agent_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "ora.site.db"
    write_agent(path, 3000, seed=7, now=NOW)
    return path


def rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def scalar(path: Path, sql: str) -> object:
    return rows(path, sql)[0][0]


def digest(path: Path) -> str:
    dump = "\n".join(sqlite3.connect(path).iterdump())
    return hashlib.sha256(dump.encode()).hexdigest()


def test_count_is_returned_and_written(tmp_path: Path) -> None:
    assert write_agent(tmp_path / "a.site.db", 1234, now=NOW) == 1234
    assert scalar(tmp_path / "a.site.db", "SELECT count(*) FROM memories") == 1234
    assert write_agent(tmp_path / "empty.site.db", 0, now=NOW) == 0
    assert scalar(tmp_path / "empty.site.db", "SELECT count(*) FROM memories") == 0


def test_same_seed_same_file_other_seed_differs(tmp_path: Path) -> None:
    write_agent(tmp_path / "a.site.db", 500, seed=3, now=NOW)
    write_agent(tmp_path / "b.site.db", 500, seed=3, now=NOW)
    write_agent(tmp_path / "c.site.db", 500, seed=4, now=NOW)
    assert digest(tmp_path / "a.site.db") == digest(tmp_path / "b.site.db")
    assert digest(tmp_path / "a.site.db") != digest(tmp_path / "c.site.db")


_DUMP = (
    "import sys, sqlite3; from datetime import datetime, UTC; from ora_desktop.core.demo import write_demo_home; "
    "write_demo_home(sys.argv[1], memories=1200, seed=5, now=datetime(2026, 12, 31, 23, 30, tzinfo=UTC))"
)


def _home_rows(root: Path) -> dict[str, list[tuple]]:
    found = {}
    for path in sorted(root.rglob("*.site.db")):
        found[str(path.relative_to(root))] = rows(path, "SELECT * FROM memories ORDER BY id") + rows(
            path, "SELECT * FROM task_context ORDER BY id"
        )
    return found


def test_demo_is_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    """Two interpreters with different PYTHONHASHSEED write row-for-row identical demo homes."""
    written = {}
    for hash_seed in ("0", "3", "17"):
        root = tmp_path / f"home-{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(Path(__file__).parents[2])}
        subprocess.run([sys.executable, "-c", _DUMP, str(root)], env=env, check=True, timeout=120)
        written[hash_seed] = _home_rows(root)
    assert len(written["0"]) == len(DEMO_AGENTS)
    assert sum(len(r) for r in written["0"].values()) >= 1200
    assert written["0"] == written["3"] == written["17"]


def test_schema_is_the_seeds_verbatim(agent_file: Path, tmp_path: Path) -> None:
    reference = tmp_path / "ref.db"
    conn = sqlite3.connect(reference)
    conn.executescript(INIT_SQL)
    conn.close()
    schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
    assert rows(agent_file, schema) == rows(reference, schema)
    assert {name for (name,) in rows(agent_file, "SELECT name FROM sqlite_master WHERE type='index'")} >= set(
        SEED_INDEXES
    )
    assert scalar(agent_file, "PRAGMA journal_mode") == "wal"


def test_opens_with_no_warnings_and_passes_integrity(agent_file: Path) -> None:
    with open_store(agent_file, readonly=True) as store:
        assert store.warnings == ()
        assert store.count(superseded="show") == 3000
        memories = store.list(limit=None, superseded="show")
    assert not any(m.unparsed for m in memories), "every timestamp must parse"
    assert scalar(agent_file, "PRAGMA integrity_check") == "ok"


def test_every_type_and_importance_skewed_to_the_middle(agent_file: Path) -> None:
    with open_store(agent_file, readonly=True) as store:
        facets = store.facets(superseded="show")
    assert set(facets.types) == set(MEMORY_TYPES)
    assert set(facets.importance) == set(range(1, 11))
    middle = sum(facets.importance[i] for i in (4, 5, 6))
    edges = sum(facets.importance[i] for i in (1, 2, 9, 10))
    assert middle > 2 * edges
    assert set(facets.sync_statuses) == {"pending", "synced", "local_only"}


def test_health_has_a_low_cluster_and_access_has_never_accessed(agent_file: Path) -> None:
    low = scalar(agent_file, "SELECT count(*) FROM memories WHERE health_score < 0.3")
    assert 0.05 * 3000 < low < 0.3 * 3000
    assert scalar(agent_file, "SELECT min(health_score) >= 0 AND max(health_score) <= 1 FROM memories") == 1
    never = scalar(agent_file, "SELECT count(*) FROM memories WHERE last_accessed_at IS NULL AND access_count = 0")
    assert 0 < never < 3000
    assert scalar(agent_file, "SELECT max(access_count) FROM memories") > 10


def test_created_at_mixes_formats_and_spans_about_two_years(agent_file: Path) -> None:
    plain = scalar(agent_file, "SELECT count(*) FROM memories WHERE created_at GLOB "
                               "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:*'")
    zulu = scalar(agent_file, "SELECT count(*) FROM memories WHERE created_at LIKE '%T%.000Z'")
    offset = scalar(agent_file, "SELECT count(*) FROM memories WHERE created_at LIKE '%+02:00'")
    assert plain > zulu > offset > 0
    assert plain + zulu + offset == 3000
    span = scalar(agent_file, "SELECT max(julianday(created_at)) - min(julianday(created_at)) FROM memories")
    assert 600 < span <= 731
    assert scalar(agent_file, "SELECT count(*) FROM memories WHERE julianday(updated_at) < julianday(created_at)") == 0
    later = rows(agent_file, "SELECT count(*) FROM memories WHERE julianday(created_at) > julianday(?)",
                 (f"{NOW:%Y-%m-%d %H:%M:%S}",))
    assert later == [(0,)]


def test_expiry_sync_and_dirty_states(agent_file: Path) -> None:
    with open_store(agent_file, readonly=True) as store:
        all_rows = store.list(limit=None, superseded="show")
    expired = [m for m in all_rows if m.is_expired(NOW)]
    soon = [m for m in all_rows if m.expires_at and 0 < (m.expires_at - NOW).days + 1 <= 7]
    assert expired and soon
    assert any(m.expires_at is None for m in all_rows)
    dirty_synced = [m for m in all_rows if m.sync_status == "synced" and m.is_dirty]
    clean_synced = [m for m in all_rows if m.sync_status == "synced" and not m.is_dirty]
    assert dirty_synced and clean_synced
    assert all(m.synced_at is None for m in all_rows if m.sync_status == "local_only")


def test_related_to_links_dangling_and_malformed(agent_file: Path) -> None:
    with open_store(agent_file, readonly=True) as store:
        all_rows = store.list(limit=None, superseded="show")
        ids = {m.id for m in all_rows}
        linked = [m for m in all_rows if m.related_to]
        assert len(linked) > 300
        assert any(all(r in ids for r in m.related_to) for m in linked)
        dangling = [m for m in linked if any(r not in ids for r in m.related_to)]
        assert dangling
        assert store.neighbors(dangling[0].id).dangling
        assert 1 <= sum(m.related_malformed for m in all_rows) <= 20
        valid = [t for (t,) in rows(agent_file, "SELECT related_to FROM memories WHERE related_to IS NOT NULL")]
        assert all(isinstance(json.loads(t), list) for t in valid if not _malformed(t))


def _malformed(text: str) -> bool:
    try:
        return not isinstance(json.loads(text), list)
    except ValueError:
        return True


def test_superseded_chains_have_a_live_newest_member(agent_file: Path) -> None:
    with open_store(agent_file, readonly=True) as store:
        superseded = store.list(superseded="only", limit=None)
        assert len(superseded) >= 100
        heads = [m for m in superseded if "deleted" not in m.superseded_by]
        # Every chain, not the first one listed (which one that is must not decide the outcome).
        firsts = sorted({m.id for m in heads} - {m.superseded_by for m in heads})
        assert len(firsts) >= 50
        for first in firsts:
            chain = store.chain(first)
            assert chain.live is not None and chain.live.superseded_by is None and len(chain.members) == 3
            stamps = [m.created_at for m in chain.members]  # newest first
            assert stamps == sorted(stamps, reverse=True) and stamps[0] > stamps[-1], first
        broken = [m for m in superseded if "deleted" in m.superseded_by]
        assert broken and store.chain(broken[0].id).dangling


def test_content_is_varied_code_paths_errors_urls_and_non_latin(agent_file: Path) -> None:
    def has(pattern: str) -> int:
        return rows(agent_file, "SELECT count(*) FROM memories WHERE instr(content, ?) > 0", (pattern,))[0][0]

    for needle in ("```python", "```ts", "src/app.ts", "TypeError", "KeyError", "https://", "npm run build",
                   "()", "日本語", "Ελληνικά", "русский", "🎉", "\n"):
        assert has(needle) > 0, needle
    distinct = scalar(agent_file, "SELECT count(DISTINCT content) FROM memories")
    assert distinct > 1500
    # Searchable words recur (so searches find many hits).
    assert has("checkout") > 100


def test_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "x.site.db"
    path.write_bytes(b"keep me")
    with pytest.raises(OraError, match="already exists"):
        write_agent(path, 10)
    assert path.read_bytes() == b"keep me"


def test_an_unusable_place_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(OraError, match="not-a-folder"):
        write_agent(blocker / "x.site.db", 10)
    assert blocker.read_text() == "a file where a folder should be"


def test_demo_home_tree_with_task_agent(tmp_path: Path) -> None:
    root = tmp_path / "home"
    paths = write_demo_home(root, memories=1000, seed=2, now=NOW)
    assert len(paths) == len(DEMO_AGENTS)
    home = OraHome(root)
    assert {s.slug for s in home.sites()} == {"anwe-sh", "docs-portal", "shop-eu"}
    assert all(len(s.agents) >= 2 for s in home.sites())
    total = 0
    for path in paths:
        with open_store(path, readonly=True) as store:
            assert store.warnings == ()
            total += store.count(superseded="show")
    assert total == 1000
    task_agents = [a for a in home.agents() if a.is_task_agent]
    assert [a.agent for a in task_agents] == ["task-123"]
    with open_store(task_agents[0].path, readonly=True) as store:
        (task,) = store.tasks()
    assert task.status == "completed" and task.completed_at is not None
    assert isinstance(task.input_data, dict) and isinstance(task.output_data, dict)
    assert task.task_description
    assert home.parent_of(task_agents[0]).agent == "ora"
    for agent in home.agents():
        if not agent.is_task_agent:
            with open_store(agent.path, readonly=True) as store:
                assert store.tasks() == []


def test_demo_home_refuses_when_any_file_exists_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "home"
    existing = root / "sites" / "shop-eu" / "support.site.db"
    existing.parent.mkdir(parents=True)
    existing.write_bytes(b"")
    with pytest.raises(OraError, match="support.site.db"):
        write_demo_home(root, memories=100)
    assert sorted(p.name for p in (root / "sites").rglob("*") if p.is_file()) == ["support.site.db"]
