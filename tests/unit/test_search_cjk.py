"""Chinese, Japanese (kana and kanji) and Korean words inside a sentence are found as substrings."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.search import index_state, search, sidecar_path, tag_facets
from ora_desktop.core.search.sidecar import INDEX_VERSION
from tests.unit.search_support import ids, make_file

ROWS = [
    {"id": "zh", "content": "部署前先运行数据库迁移", "importance": 7},
    {"id": "zh2", "content": "中文页面需要重新审核。数据库 backups run nightly (src/backup.py)", "importance": 3},
    {"id": "ja", "content": "ユーザーは短い返事を好む。日本語の翻訳はまだ途中です。", "importance": 5},
    {"id": "ko", "content": "한국어 지원 요청이 들어왔다.", "importance": 5},
    {"id": "en", "content": "Running the database migrations before each deploy", "importance": 5},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "anwe-sh" / "ora.site.db", ROWS)


@pytest.mark.parametrize(("query", "expected"), [
    ("数据库", ["zh", "zh2"]),  # Chinese, three characters: trigram match
    ("迁移", ["zh"]),  # two characters: substring of the few CJK memories
    ("审核", ["zh2"]),
    ("ユーザー", ["ja"]),  # katakana
    ("返事", ["ja"]),  # kanji
    ("まだ途中", ["ja"]),  # hiragana and kanji
    ("日本語", ["ja"]),
    ("지원", ["ko"]),  # Korean
    ("요청이", ["ko"]),
    ("数据库 backups", ["zh2"]),  # every word: a CJK substring and a stemmed English word
    ("数据库 -迁移", ["zh2"]),
    ("迁移 OR 翻訳", ["zh", "ja"]),
    ('"数据库迁移"', ["zh"]),
])
def test_cjk_substrings_are_found(db: Path, query: str, expected: list[str]) -> None:
    result = search(db, query)
    assert sorted(ids(result)) == sorted(expected)
    assert not result.partial and not result.fallback


def test_latin_words_keep_porter_stemming(db: Path) -> None:
    assert ids(search(db, "migration")) == ["en"]
    assert ids(search(db, "deploys")) == ["en"]  # stemmed; the CJK memories stay out


def test_cjk_matches_are_highlighted_and_filtered(db: Path) -> None:
    (hit,) = search(db, "返事").hits
    assert hit.memory.content[slice(*hit.spans[0])] == "返事"
    assert "[返事]" in hit.snippet
    assert ids(search(db, "数据库 importance:>=5")) == ["zh"]
    assert tag_facets(db, "数据库") == {"file": {"src/backup.py": 1}}
    assert tag_facets(db, "迁移") == {}


def test_cjk_in_the_text_fallback(db: Path) -> None:
    result = search(db, "数据库", fallback=True)
    assert result.fallback and sorted(ids(result)) == ["zh", "zh2"]


def test_new_and_edited_memories_are_found_after_a_refresh(db: Path) -> None:
    assert ids(search(db, "翻訳")) == ["ja"]
    with open_store(db) as store:  # written as an agent writes: updated_at now
        store.add("設定ファイルの翻訳を更新した", id="ja2")
        store.update("ja", content="ユーザーは長い返事を好む。")
        store.delete("zh")
    assert ids(search(db, "翻訳")) == ["ja2"]
    assert ids(search(db, "長い返事")) == ["ja"]
    assert ids(search(db, "迁移")) == []


def test_an_old_sidecar_without_the_cjk_table_is_rebuilt(db: Path) -> None:
    search(db, "deploy")
    with sqlite3.connect(sidecar_path(db)) as conn:  # what version 2 built: no cjk table
        conn.execute("DROP TABLE cjk")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", (json.dumps(2),))
    state = index_state(db)
    assert not state.built and "version 2" in state.reason
    assert ids(search(db, "迁移")) == ["zh"]
    assert index_state(db).version == INDEX_VERSION >= 3



def test_every_cjk_range_reaches_the_trigram_table_and_nothing_else_does(ora_home: Path) -> None:
    """The build picks the texts of the trigram table after the words, with the tags:
    every CJK range is there, accents, dashes, quotes and emoji are not."""
    from ora_desktop.core.search.cjk import _RANGES

    ends = {c for i in range(0, len(_RANGES), 3) for c in (_RANGES[i], _RANGES[i + 2])}
    rows = [{"id": f"cjk{ord(c):x}", "content": f"note {c} end"} for c in sorted(ends)]
    rows += [{"id": "latin", "content": "café — “naïve” résumé 🙂 ☃"}, {"id": "ascii", "content": "plain text"}]
    path = make_file(ora_home / "sites" / "s" / "a.site.db", rows)
    assert search(path, "plain").hits
    conn = sqlite3.connect(sidecar_path(path))
    found = {r[0] for r in conn.execute("SELECT d.mid FROM cjk JOIN docs d ON d.fid = cjk.rowid")}
    conn.close()
    assert found == {r["id"] for r in rows if r["id"].startswith("cjk")}


def test_a_cjk_word_searched_before_the_trigrams_are_in_says_still_indexing(db: Path) -> None:
    """The words are searchable first; CJK text is picked with the tags, after. A CJK query in
    between says so (without waiting) or waits for that part (by default)."""
    from ora_desktop.core.search import ensure_index

    state = ensure_index(db, cancel=lambda: index_state(db).built)  # stop once the words are in place
    assert state.built and state.tags_pending
    early = search(db, "数据库", wait=False)
    assert any(w.startswith("still indexing") for w in early.warnings)
    assert "still indexing" not in " ".join(search(db, "backups", wait=False).warnings)  # words: no note
    later = search(db, "数据库")
    assert sorted(ids(later)) == ["zh", "zh2"] and not later.warnings
    assert not index_state(db).tags_pending
