"""Links kept whole on every delete path, and put back byte for byte by an undelete."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.maintenance import run_job
from ora_desktop.core.maintenance.check import _DANGLING_RELATED, _DANGLING_SUPERSEDED
from ora_desktop.core.rawsql import run_sql
from tests.conftest import raw_seed_db


def _links(path: Path) -> dict[str, tuple]:
    conn = sqlite3.connect(path)
    try:
        return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, related_to, superseded_by FROM memories")}
    finally:
        conn.close()


def _raw_linked(path: Path) -> Path:
    """A file written by raw SQL: a → b → c supersession, and related_to in odd spacing."""
    raw_seed_db(path, [(i, f"memory {i}", "fact", 5) for i in ("a", "b", "c", "d", "e")])
    conn = sqlite3.connect(path)
    conn.executescript("""
        UPDATE memories SET superseded_by = 'b' WHERE id = 'a';
        UPDATE memories SET superseded_by = 'c' WHERE id = 'b';
        UPDATE memories SET related_to = '["b","c",  "e"]' WHERE id = 'd';
        UPDATE memories SET related_to = '[ "b" ]' WHERE id = 'e';
    """)
    conn.commit()
    conn.close()
    return path


def test_delete_drops_ids_from_related_to_and_repoints_superseded_by(tmp_path: Path) -> None:
    path = _raw_linked(tmp_path / "x.site.db")
    with open_store(path) as store:
        store.delete(["b"])
    links = _links(path)
    assert links["a"][1] == "c"  # re-pointed to the live end of b's chain
    assert links["d"][0] == '["c", "e"]'
    assert links["e"][0] is None  # nothing left: cleared, as unlinking the last id does


def test_superseded_by_cleared_when_the_whole_newer_chain_goes(tmp_path: Path) -> None:
    path = _raw_linked(tmp_path / "x.site.db")
    with open_store(path) as store:
        store.delete(["b", "c"])
    assert _links(path)["a"][1] is None


def test_undelete_restores_every_link_byte_for_byte(tmp_path: Path) -> None:
    path = _raw_linked(tmp_path / "x.site.db")
    before = _links(path)
    with open_store(path) as store:
        store.delete(["b"])
        store.delete(["c"])
        assert _links(path) != before
        store.restore_deleted([d.trash_id for d in store.trash()])
        assert run_sql(store, "SELECT count(*) FROM ora_desktop_trash_links").fetchone()[0] == 0
    assert _links(path) == before


def test_partial_undelete_brings_back_only_the_restored_ids_in_their_old_place(tmp_path: Path) -> None:
    path = _raw_linked(tmp_path / "x.site.db")
    before = _links(path)
    with open_store(path) as store:
        store.delete(["b", "c"])
        only_c = [d.trash_id for d in store.trash() if d.memory.id == "c"]
        store.restore_deleted(only_c)
        assert _links(path)["d"][0] == '["c", "e"]'
        store.restore_deleted([d.trash_id for d in store.trash()])
    assert _links(path) == before


def test_a_link_edited_after_the_delete_is_merged_not_overwritten(tmp_path: Path) -> None:
    path = _raw_linked(tmp_path / "x.site.db")
    with open_store(path) as store:
        store.delete(["b"])
        store.link("d", "a", mutual=False)
        store.restore_deleted([d.trash_id for d in store.trash()])
        assert store.get("d").related_to == ("b", "c", "e", "a")


def test_delete_in_a_file_without_link_columns_still_works(tmp_path: Path) -> None:
    path = tmp_path / "bare.site.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at TEXT, updated_at TEXT)")
    conn.execute("INSERT INTO memories VALUES ('a', 'x', '2025-01-01 00:00:00', '2025-01-01 00:00:00')")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        assert [m.id for m in store.delete(["a"])] == ["a"]
        store.restore_deleted([d.trash_id for d in store.trash()])
        assert store.count() == 1


def _dangling(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        related = conn.execute(f"SELECT count(*) FROM memories WHERE {_DANGLING_RELATED}").fetchone()[0]
        superseded = conn.execute(f"SELECT count(*) FROM memories WHERE {_DANGLING_SUPERSEDED}").fetchone()[0]
        return related, superseded
    finally:
        conn.close()


@pytest.mark.parametrize("job", ["cleanup", "retention"])
def test_cleanup_and_retention_leave_no_new_dangling_links_on_the_demo_file(tmp_path: Path, job: str) -> None:
    path = tmp_path / "site" / "demo.site.db"
    path.parent.mkdir()
    write_agent(path, 3000, seed=7, now=datetime(2029, 6, 1, tzinfo=UTC))
    before = _dangling(path)
    config_dir = tmp_path / "cfg"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text("[retention]\nmax_memories = 1500\n")
    from ora_desktop.core.config import Config

    report = run_job(job, path, config=Config.load(config_dir / "config.toml"),
                     now=datetime(2030, 1, 1, tzinfo=UTC))
    assert report.ok, report.message
    assert sum(report.counts.values()) > 0
    after = _dangling(path)
    assert after[0] <= before[0] and after[1] <= before[1]
    check = run_job("check", path)
    assert check.counts.get("dangling_related_to", 0) == after[0]


def test_cleanup_on_a_raw_sql_file_leaves_no_dangling_links(tmp_path: Path) -> None:
    path = _raw_linked(tmp_path / "site" / "raw.site.db")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memories SET expires_at = '2020-01-01T00:00:00.000Z' WHERE id IN ('b', 'c')")
    conn.commit()
    conn.close()
    assert run_job("cleanup", path).counts["expired"] == 2
    check = run_job("check", path)
    assert check.counts.get("dangling_related_to", 0) == 0
    assert check.counts.get("dangling_superseded_by", 0) == 0


def test_an_id_inside_another_id_is_left_alone(tmp_path: Path) -> None:
    path = raw_seed_db(tmp_path / "x.site.db", [(i, f"memory {i}", "fact", 5) for i in ("a", "ab", "m")])
    conn = sqlite3.connect(path)
    conn.execute("""UPDATE memories SET related_to = '["ab"]', superseded_by = 'ab' WHERE id = 'm'""")
    conn.commit()
    conn.close()
    with open_store(path) as store:
        change = store.delete(["a"]) and store.get("m")
    assert change.related_to == ("ab",) and _links(path)["m"] == ('["ab"]', "ab")
    with open_store(path) as store:
        assert run_sql(store, "SELECT count(*) FROM ora_desktop_trash_links").fetchone()[0] == 0
