"""Search by meaning: semantic and hybrid modes with filters, the vector sidecar kept up to date
as another process writes, a model change re-embedding, cancel, and forgetting ids."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from ora_desktop.core import OraError, open_store
from ora_desktop.core.embeddings import WordLlamaProvider
from ora_desktop.core.search import semantic, vectors
from ora_desktop.core.search.index import get_index
from ora_desktop.core.search.semantic import ensure_vectors, has_vectors, search_by_meaning
from ora_desktop.core.search.vectors import forget, get_vectors, vector_path
from tests.unit.search_support import ids, make_file

ROWS = [
    {"id": "jwt", "content": "User prefers JWT auth stored in httpOnly cookies", "type": "preference",
     "importance": 8},
    {"id": "deploy", "content": "Deploys run through `git push production main`", "importance": 6},
    {"id": "coffee", "content": "The office coffee machine is on the third floor", "importance": 2},
    {"id": "tests", "content": "Tests are written with pytest and run in CI on every push", "importance": 7},
    {"id": "old-jwt", "content": "User keeps auth tokens in localStorage", "type": "preference",
     "superseded_by": "jwt"},
    {"id": "cookie-recipe", "content": "Grandma's cookie recipe uses brown butter", "type": "fact", "importance": 3},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


def test_paraphrases_found_by_meaning_not_by_words(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        # by words, no memory holds every word: only partial (any-word) matches come back
        assert store.search("how should I store the auth token?", mode="lexical").partial
        assert ids(store.search("how should I store the auth token?", 3, mode="semantic"))[0] == "jwt"
        assert ids(store.search("how should I store the auth token?", 3, mode="hybrid"))[0] == "jwt"
        assert ids(store.search("where do deploys go?", 3, mode="hybrid"))[0] == "deploy"
    get_index(db).close()  # the process's last connection to the file: nothing of ours stays beside it
    assert vector_path(db).exists() and not Path(f"{db}-wal").exists()  # the agent's file untouched


def test_default_mode_is_hybrid_once_vectors_exist(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        assert not has_vectors(store)
        before = store.search("where do deploys go?")  # lexical until vectors exist: any-word matches
        assert before.partial and "partial" in before.note
        ensure_vectors(store)
        assert has_vectors(store)
        after = store.search("where do deploys go?")
        assert ids(after)[0] == "deploy" and not after.partial


def test_filters_apply_in_every_mode(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        for mode in ("lexical", "semantic", "hybrid"):
            assert "jwt" not in ids(store.search("auth cookies type:fact", mode=mode)), mode
            found = ids(store.search("auth cookies importance:>=5", mode=mode))
            assert found and "jwt" in found and all(i in ("jwt", "deploy", "tests") for i in found), mode
            assert "old-jwt" not in ids(store.search("auth tokens", mode=mode)), mode  # superseded hidden
            assert "old-jwt" in ids(store.search("auth tokens is:superseded", mode=mode)), mode
            assert "jwt" not in ids(store.search("auth cookies -httpOnly", mode=mode)), mode


def test_exact_lexical_match_stays_first_in_hybrid(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        for query in ("coffee machine", "cookie recipe", "pytest"):
            lexical = ids(store.search(query, mode="lexical"))
            hybrid = store.search(query, mode="hybrid")
            assert ids(hybrid)[0] == lexical[0], query
            assert hybrid.hits[0].source == "keyword"


def test_fuse_formula_weights_ranks_by_alpha() -> None:
    from ora_desktop.core.search import parse_query

    fused = semantic.fuse([], [("a", 0.9), ("b", 0.8)], parse_query("x"), alpha=0.5)
    assert [i for i, _, _ in fused] == ["a", "b"]
    assert fused[0][1] == pytest.approx(0.5 / 61) and fused[1][1] == pytest.approx(0.5 / 62)


def test_bad_mode_is_refused(db: Path) -> None:
    with open_store(db, readonly=True) as store, pytest.raises(OraError, match="'fuzzy' is not one of"):
        store.search("x", mode="fuzzy")


def _write_from_another_process(db: Path, script: str) -> None:
    code = textwrap.dedent(f"""
        import sqlite3
        conn = sqlite3.connect({str(db)!r})
        {script}
        conn.commit()
        conn.close()
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_incremental_refresh_follows_another_process(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        ensure_vectors(store)
        before = get_vectors(db).vector_of("coffee")
        _write_from_another_process(db, """
        conn.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES "
                     "('k8s', 'Production runs on a Kubernetes cluster in Frankfurt', "
                     "datetime('now'), datetime('now'))")
        conn.execute("UPDATE memories SET content = 'The espresso maker sits in the kitchen', "
                     "updated_at = datetime('now') WHERE id = 'coffee'")
        conn.execute("DELETE FROM memories WHERE id = 'cookie-recipe'")
        """)
        counted: list[tuple[int, int]] = []
        ensure_vectors(store, progress=lambda done, total: counted.append((done, total)))
        whole = counted[-1][1]  # every memory the index holds, the embedded ones first
        assert counted[0] == (whole - 2, whole) and counted[-1] == (whole, whole)  # 2 embedded: new, edited
        index = get_vectors(db)
        assert index.vector_of("cookie-recipe") is None
        assert not np.array_equal(index.vector_of("coffee"), before)
        assert ids(store.search("where is the container cluster hosted?", 2, mode="semantic"))[0] == "k8s"
        assert ids(store.search("where can I make espresso", 2, mode="hybrid"))[0] == "coffee"
        counted.clear()
        ensure_vectors(store, progress=lambda done, total: counted.append((done, total)))
        assert counted == []  # nothing changed: nothing compared, nothing embedded


def test_vectors_survive_a_new_process_and_deleting_them_loses_nothing(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        ensure_vectors(store)
    vectors._registry.clear()  # as a new process would start
    counted: list[tuple[int, int]] = []
    ensure_vectors(db, progress=lambda done, total: counted.append((done, total)))
    assert counted == [] and get_vectors(db).vector_of("jwt") is not None
    vectors.drop_vectors(db)
    assert ids(search_by_meaning(db, "how should I store the auth token?", 1, mode="semantic")) == ["jwt"]


def test_model_change_reembeds_everything(db: Path) -> None:
    ensure_vectors(db)
    small = WordLlamaProvider(dimensions=64)
    counted: list[tuple[int, int]] = []
    index = ensure_vectors(db, progress=lambda done, total: counted.append((done, total)), provider=small)
    assert counted[-1] == (len(ROWS), len(ROWS))
    assert index.vector_of("jwt").shape == (64,)
    conn = sqlite3.connect(vector_path(db))
    assert conn.execute("SELECT DISTINCT length(v) FROM vecs").fetchall() == [(64,)]  # int8: one byte a dimension
    assert "@64" in conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()[0]
    conn.close()
    assert not has_vectors(db)  # the default model's vectors are gone
    counted.clear()
    ensure_vectors(db, progress=lambda done, total: counted.append((done, total)))
    assert counted[-1] == (len(ROWS), len(ROWS))


def test_cancel_keeps_what_was_embedded_and_resumes(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "BATCH", 2)
    stop = threading.Event()

    def progress(done: int, total: int) -> None:
        if done >= 2:
            stop.set()

    with pytest.raises(OraError, match="cancelled"):
        ensure_vectors(db, progress=progress, cancel=stop)
    assert sqlite3.connect(vector_path(db)).execute("SELECT count(*) FROM vecs").fetchone()[0] == 2
    assert not has_vectors(db)
    counted: list[tuple[int, int]] = []
    ensure_vectors(db, progress=lambda done, total: counted.append((done, total)))
    assert counted[0] == (2, len(ROWS)) and counted[-1] == (len(ROWS), len(ROWS))  # same total, resumed at 2
    assert has_vectors(db)


def test_forget_removes_vectors_from_memory_and_disk(db: Path) -> None:
    index = ensure_vectors(db)
    secret = index.matrix[index.row_of["jwt"]].tobytes()
    assert secret in vector_path(db).read_bytes()
    assert forget(db, ["jwt", "no-such-id"]) == 1
    assert index.vector_of("jwt") is None
    assert secret not in vector_path(db).read_bytes()  # overwritten, not merely unlinked
    vectors._registry.clear()
    assert forget(db, ["deploy"]) == 1  # also without a loaded index
    assert forget(Path(str(db) + ".other"), ["x"]) == 0


def test_int8_vectors_keep_the_cosines() -> None:
    rng = np.random.default_rng(7)
    floats = rng.standard_normal((200, 256)).astype(np.float32)
    floats /= np.linalg.norm(floats, axis=1, keepdims=True)
    codes = vectors.quantize(np.vstack([floats, np.zeros((1, 256), np.float32)]))
    assert codes.dtype == np.int8 and np.abs(codes[:-1]).max(axis=1).min() == 127
    assert not codes[-1].any()  # a zero vector stays zero
    assert np.abs(vectors.unit(codes[:-1]) @ vectors.unit(codes[:-1]).T - floats @ floats.T).max() < 0.02


def test_nearest_is_exact_search_over_the_vectors(db: Path) -> None:
    """The scan answers what brute-force numpy answers over the same vectors (recall 1.0)."""
    texts = [f"note {i}: {w} {v}" for i, (w, v) in enumerate(
        (a, b) for a in ("deploy", "coffee", "invoice", "backup", "token", "review", "flaky", "pricing")
        for b in ("today", "on friday", "in staging", "for the team", "again", "at night", "quickly"))]
    provider = WordLlamaProvider()
    codes = vectors.quantize(provider.embed(texts))
    floats = vectors.unit(codes)
    for query in ("where do deploys go?", "coffee at night", "the price page", "tests that fail sometimes"):
        q = provider.embed([query])[0]
        rows, cosines = vectors.nearest(codes, q, 5)
        exact = np.argsort(-(floats @ vectors.unit(vectors.quantize(q[None]))[0]), kind="stable")[:5]
        assert set(rows.tolist()) == set(exact.tolist())
        assert np.all(np.diff(cosines) <= 1e-6)  # best first
    assert len(vectors.nearest(codes, q, 10_000)[0]) == len(texts)  # k past the end: every row
    assert len(vectors.nearest(codes[:0], q, 5)[0]) == 0


def test_filters_reach_past_the_first_pool(ora_home: Path) -> None:
    """A filter that only a memory far down the ranking passes still finds it (the pool grows)."""
    rows = [{"id": f"d{i}", "content": f"Deploys to production run at step {i} of the pipeline", "type": "fact"}
            for i in range(semantic.POOL_MIN * 40)]
    rows.append({"id": "far", "content": "The release of the app is shipped through a pipeline",
                 "type": "task"})
    path = make_file(ora_home / "sites" / "s" / "far.site.db", rows)
    found = search_by_meaning(path, "deploys to production type:task", 5, mode="semantic")
    assert ids(found) == ["far"]
    assert len(search_by_meaning(path, "deploys to production", 5, mode="semantic").hits) == 5


def _brute_cosines(index: vectors.VectorIndex, query: np.ndarray) -> dict[str, float]:
    """Every held memory's cosine with ``query``, from its int8 code (numpy, no kept lengths)."""
    codes, mids = index.snapshot()
    q = vectors.unit(vectors.quantize(query[None]))[0]
    scores = vectors.unit(codes) @ q
    return {mid: float(scores[row]) for row, mid in enumerate(mids) if mid is not None}


def test_scan_scores_stay_exact_after_edits_deletes_and_reloads(db: Path) -> None:
    """Each row's kept length follows its vector: after an edit, a delete (its row reused by a new
    memory) and a reload, the scan's cosines are numpy's over the same codes."""
    provider = WordLlamaProvider()
    query = provider.embed(["where can I make espresso"])[0]
    with open_store(db, readonly=True) as store:
        ensure_vectors(store)
        _write_from_another_process(db, """
        conn.execute("DELETE FROM memories WHERE id = 'cookie-recipe'")
        conn.execute("UPDATE memories SET content = 'The espresso maker sits in the kitchen', "
                     "updated_at = datetime('now') WHERE id = 'coffee'")
        """)
        ensure_vectors(store)
        _write_from_another_process(db, """
        conn.execute("INSERT INTO memories (id, content, created_at, updated_at) VALUES "
                     "('k8s', 'Production runs on a Kubernetes cluster in Frankfurt and it is very large', "
                     "datetime('now'), datetime('now'))")
        """)
        index = ensure_vectors(store)
        for scanned in (index, None):
            if scanned is None:  # as a new process would load it
                vectors._registry.clear()
                scanned = ensure_vectors(db)
            want = _brute_cosines(scanned, query)
            rows, cosines = scanned.nearest(query, 10)
            got = {scanned.mids[r]: float(c) for r, c in zip(rows.tolist(), cosines.tolist(), strict=True)}
            assert set(got) == set(want) and "cookie-recipe" not in got
            assert all(abs(got[m] - want[m]) < 1e-5 for m in got)
            assert next(iter(got)) == "coffee"
            for threads in (1, 2):
                assert scanned.nearest(query, 3, threads=threads)[0].tolist() == rows[:3].tolist()


def test_hybrid_hits_highlight_the_words_they_matched(db: Path) -> None:
    """Hybrid hits carry the spans of the words found, also when no memory holds every word (the
    any-word matches), and meaning-only hits carry none."""
    with open_store(db, readonly=True) as store:
        ensure_vectors(store)
        found = store.search("where do deploys go?", 5, mode="hybrid")
        deploy = next(h for h in found.hits if h.memory.id == "deploy")
        assert [deploy.memory.content[s:e].lower() for s, e in deploy.spans] == ["deploys"]
        assert "deploys" in deploy.snippet.lower()
        found = store.search("coffee machine", 5, mode="hybrid")
        assert [found.hits[0].memory.content[s:e] for s, e in found.hits[0].spans] == ["coffee", "machine"]
        assert all(not h.spans for h in found.hits if h.source == "semantic")


def test_hybrid_at_a_large_limit_keeps_the_total_and_the_exact_match_first(ora_home: Path) -> None:
    """With more matches than the limit, a hybrid answer lists the limit, says how many match
    (every one), and keeps the memory holding the query as written first."""
    from ora_desktop.core.operations.search import SearchRequest, search_memories

    rows = [{"id": f"d{i:03d}", "content": f"Deploy number {i} went to the {('blue', 'green')[i % 2]} servers",
             "importance": 1 + i % 9} for i in range(300)]
    rows.append({"id": "exact", "content": "Rollback the deploy window tonight", "importance": 1})
    path = make_file(ora_home / "sites" / "s" / "many.site.db", rows)
    ensure_vectors(path)
    assert semantic.hybrid_pool(250) < 4 * 250  # fewer candidates than the old 4x pool
    with open_store(path, readonly=True) as store:
        answer = search_memories(store, SearchRequest(text="deploy window", mode="hybrid", limit=250))
        assert answer.ids[0] == "exact"
        answer = search_memories(store, SearchRequest(text="deploy", mode="hybrid", limit=250))
        assert len(answer.keys) == 250 and answer.total == 301
        assert any("250 of 301" in note for note in answer.notes)


def test_hybrid_marks_cjk_words_found_as_substrings(ora_home: Path) -> None:
    path = make_file(ora_home / "sites" / "s" / "cjk.site.db", [
        {"id": "cjk", "content": "部署在周五进行 (deploys happen on friday)"},
        {"id": "other", "content": "The coffee machine is on the third floor"},
    ])
    found = search_by_meaning(path, "部署", 5, mode="hybrid")
    hit = next(h for h in found.hits if h.memory.id == "cjk")
    assert [hit.memory.content[s:e] for s, e in hit.spans] == ["部署"]


FILTERED = ("auth type:preference", "auth -type:fact", "auth importance:>=5", "auth importance:<3 health:>0.4",
            "auth is:expired", "auth -is:expired", "auth is:superseded", "auth is:any", "auth type:task")


def test_filters_tested_beside_the_vectors_answer_as_sql_does(ora_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept filter columns (type, importance, health, expiry, superseded) pass exactly the
    memories the SQL filters pass, NULLs and unreadable dates included."""
    rows = [*ROWS,
            {"id": "gone", "content": "auth tokens expired last year", "expires_at": "2020-01-01 00:00:00"},
            {"id": "later", "content": "auth tokens expire in 2999", "expires_at": "2999-01-01T00:00:00Z"},
            {"id": "odd", "content": "auth tokens with a strange expiry", "expires_at": "next tuesday"},
            {"id": "sick", "content": "auth token rotation is weekly", "importance": 2, "health_score": 0.2}]
    path = make_file(ora_home / "sites" / "s" / "f.site.db", rows)
    from ora_desktop.core.search import vecfilters

    kept = {q: ids(search_by_meaning(path, q, 20, mode="semantic")) for q in FILTERED}
    monkeypatch.setattr(vecfilters, "supported", lambda parsed: False)
    by_sql = {q: ids(search_by_meaning(path, q, 20, mode="semantic")) for q in FILTERED}
    assert kept == by_sql
    assert "gone" in kept["auth is:expired"] and "odd" not in kept["auth -is:expired"]


def test_a_type_changed_by_an_agent_without_updated_at_is_seen_by_a_filtered_meaning_search(db: Path) -> None:
    assert "jwt" in ids(search_by_meaning(db, "auth cookies type:preference", 5, mode="semantic"))
    agent = sqlite3.connect(db, isolation_level=None)
    agent.execute("UPDATE memories SET type = 'fact' WHERE id = 'jwt'")  # updated_at left alone
    agent.close()
    assert "jwt" not in ids(search_by_meaning(db, "auth cookies type:preference", 5, mode="semantic"))
    assert "jwt" in ids(search_by_meaning(db, "auth cookies type:fact", 5, mode="semantic"))


def test_when_no_memory_holds_every_word_hybrid_keeps_the_meaning_order(
        ora_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A question in other words: the words' side only has memories holding some word of it,
    which follow the meaning's candidates instead of outvoting their order (RRF's ranks are
    flat: a memory second by meaning and first by one shared word would come first)."""
    path = make_file(ora_home / "sites" / "s" / "w.site.db", [
        {"id": "a", "content": "User prefers JWT auth stored in httpOnly cookies"},
        {"id": "b", "content": "the quick brown fox"}, {"id": "c", "content": "a quick note"}])
    monkeypatch.setattr(semantic, "_semantic_ids", lambda *args: [("a", 0.9), ("b", 0.8)])
    hybrid = ids(search_by_meaning(path, "quick zebra", 10, mode="hybrid"))  # no memory holds both
    assert hybrid[:2] == ["a", "b"] and "c" in hybrid
    assert ids(search_by_meaning(path, "quick fox", 10, mode="hybrid"))[0] == "b"  # every word: as before


def test_memories_the_caller_holds_are_used_as_they_are(db: Path) -> None:
    """``known``: a caller that has read some memories already (context(), with a 10 MB one among
    them) gets those very records back, not a second read of each."""
    with open_store(db, readonly=True) as store:
        held = store.get("jwt")
        result = search_by_meaning(db, "where are login tokens kept", 5, mode="semantic", known={"jwt": held})
    assert any(h.memory is held for h in result.hits)
    assert all(h.memory is not held for h in result.hits if h.memory.id != "jwt")


def test_filter_columns_follow_the_feed_without_reading_every_row(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the window (or the MCP server) holds the file open, a write changes only the filter
    columns of the memories it named: an agent's raw type change, a new memory, our own edit,
    each seen by the next filtered meaning search without reading every row's columns again."""
    from ora_desktop.core.search.vecfilters import FilterColumns

    whole: list[int] = []
    real_read = FilterColumns._read
    monkeypatch.setattr(FilterColumns, "_read", lambda self, *a: whole.append(1) or real_read(self, *a))
    query = "office coffee type:preference"
    with open_store(db) as store:
        ensure_vectors(store)
        assert "coffee" not in ids(store.search(query, 5, mode="semantic"))
        assert whole == [1]
        _write_from_another_process(db, """
        conn.execute("UPDATE memories SET type = 'preference' WHERE id = 'coffee'")  # updated_at alone
        conn.execute("INSERT INTO memories (id, content, type, created_at, updated_at) VALUES "
                     "('tea', 'The office tea kettle is by the coffee machine', 'preference', "
                     "datetime('now'), datetime('now'))")
        """)
        found = ids(store.search(query, 5, mode="semantic"))
        assert "coffee" in found and "tea" in found
        store.update("tea", type="fact")
        found = ids(store.search(query, 5, mode="semantic"))
        assert "coffee" in found and "tea" not in found
        assert whole == [1]  # the first search read them all; the writes read only their rows
