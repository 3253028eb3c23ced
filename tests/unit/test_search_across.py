"""One search over every agent of a site, or every site, merged by reciprocal rank fusion."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import OraHome
from ora_desktop.core.search import rrf, search_many
from ora_desktop.core.search.ranking import fused_order
from tests.unit.search_support import make_file


@pytest.fixture
def home(ora_home: Path) -> OraHome:
    sites = ora_home / "sites"
    make_file(sites / "anwe-sh" / "ora.site.db", [
        {"id": "a1", "content": "deploy runs on fridays", "importance": 9},
        {"id": "a2", "content": "deploy key in vault"},
    ])
    make_file(sites / "anwe-sh" / "writer.site.db", [{"id": "w1", "content": "blog deploy checklist"}])
    make_file(sites / "shop-eu" / "ora.site.db", [
        {"id": "s1", "content": "shop deploy freeze in december", "importance": 7},
        {"id": "s2", "content": "unrelated coupon rules"},
    ])
    return OraHome(ora_home)


def where(result) -> set[tuple[str, str, str]]:
    return {(h.site, h.agent, h.memory.id) for h in result.hits}


def test_every_site_merged_and_located(home: OraHome) -> None:
    result = search_many(home, "deploy")
    assert where(result) == {("anwe-sh", "ora", "a1"), ("anwe-sh", "ora", "a2"), ("anwe-sh", "writer", "w1"),
                             ("shop-eu", "ora", "s1")}
    for hit in result.hits:
        assert hit.path == home.path_for(hit.site, hit.agent)
        assert hit.file_score is not None and hit.location == f"{hit.site}/{hit.agent}"
    # Each file's best hit ranks 1 in its own list, so the three file winners lead the fused list.
    assert {h.memory.id for h in result.hits[:3]} == {"a1", "w1", "s1"}
    assert result.hits[0].score == pytest.approx(1 / 61)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_one_site_and_one_agent(home: OraHome) -> None:
    assert {h.site for h in search_many(home, "deploy", site="shop-eu").hits} == {"shop-eu"}
    assert {h.site for h in search_many(home, "deploy site:anwe-sh").hits} == {"anwe-sh"}
    assert {(h.site, h.agent) for h in search_many(home, "deploy agent:writer").hits} == {("anwe-sh", "writer")}
    assert {h.agent for h in search_many(home, "deploy", agent="ora").hits} == {"ora"}


def test_paths_and_limit(home: OraHome) -> None:
    files = [a.path for a in home.agents()]
    assert len(search_many(files, "deploy", limit=2).hits) == 2


def test_a_broken_file_is_reported_and_the_rest_searched(home: OraHome) -> None:
    broken = home.sites_dir / "shop-eu" / "support.site.db"
    broken.write_bytes(b"this is not sqlite at all" * 10)
    result = search_many(home, "deploy")
    assert len(result.hits) == 4
    assert any("support.site.db" in w for w in result.warnings)


def test_fallback_note_is_carried(home: OraHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORA_DESKTOP_NO_FTS5", "1")
    result = search_many(home, "deploy")
    assert result.fallback and "ranking is reduced" in result.note and len(result.hits) == 4


def test_rrf_formula() -> None:
    scores = rrf([["a", "b"], ["b", "c"]], k=60)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert [key for key, _ in fused_order([["a", "b"], ["b", "c"]])] == ["b", "a", "c"]


def _foreign_sqlite(path: Path) -> Path:
    """Another application's valid SQLite file in the home: no ``memories`` table."""
    import sqlite3
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE pages (url TEXT, body TEXT)")
        conn.execute("INSERT INTO pages VALUES ('https://x', 'shipping rates')")
    conn.close()
    return path


def test_another_applications_sqlite_file_is_skipped_with_a_warning_naming_it(home: OraHome) -> None:
    foreign = _foreign_sqlite(home.sites_dir / "x" / "foo.site.db")
    result = search_many(home, "deploy")
    assert len(result.hits) == 4
    assert any(str(foreign) in w and "no 'memories' table" in w for w in result.warnings), result.warnings


def test_cli_search_all_skips_another_applications_sqlite_file(home: OraHome, capsys) -> None:
    import json

    from tests.unit.test_cli_helpers import cli
    foreign = _foreign_sqlite(home.sites_dir / "x" / "foo.site.db")
    result = cli(capsys, "search", "deploy", "--all", "--json")
    assert result.code == 0, result.err
    assert len(json.loads(result.out)["hits"]) == 4
    assert f"warning: {foreign}: no 'memories' table" in result.err
