"""Duplicates: exact and near groups, the threshold, add(on_duplicate=), merge and its undo."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ora_desktop.core import Duplicate, InvalidValue, open_store
from ora_desktop.core.operations import duplicates as dup
from ora_desktop.core.operations.duplicates import find_duplicates, similar_pairs
from ora_desktop.core.operations.merge import merge_duplicates, unmerge
from tests.unit.search_support import make_file

ROWS = [
    {"id": "a1", "content": "User prefers JWT auth stored in httpOnly cookies", "importance": 6},
    {"id": "a2", "content": "User prefers JWT authentication kept in httpOnly cookies", "importance": 8,
     "related_to": json.dumps(["ci"])},
    {"id": "c1", "content": "The office coffee machine is on the third floor", "importance": 3},
    {"id": "c2", "content": "  the office COFFEE machine is on the   third floor ", "importance": 4},
    {"id": "ci", "content": "Tests run in CI on every push", "importance": 5},
    {"id": "deploy", "content": "Deploys run through git push production main", "importance": 5},
    {"id": "old", "content": "Tests run in CI on every push", "superseded_by": "ci"},
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


def test_exact_and_near_groups(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        result = store.duplicates()
    groups = {(g.kind, frozenset(g.ids)) for g in result.groups}
    assert ("exact", frozenset({"c1", "c2"})) in groups  # case and spacing aside
    assert ("near", frozenset({"a1", "a2"})) in groups
    assert len(result.groups) == 2  # a superseded copy and unrelated memories are not grouped
    first = result.groups[0]
    assert first.kind == "near" and first.ids == ("a2", "a1")  # most important group and member first
    assert dup.DEFAULT_THRESHOLD <= first.similarity < 1.0
    assert result.as_json()["groups"][1] == {"kind": "exact", "similarity": 1.0, "ids": ["c2", "c1"]}


def test_threshold_decides_near_groups(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        assert all(g.kind == "exact" for g in store.duplicates(threshold=0.999).groups)
        loose = store.duplicates(threshold=0.3).groups
        assert sum(len(g.ids) for g in loose if g.kind == "near") > 2
        only_exact = find_duplicates(store, near=False)
        assert [g.kind for g in only_exact.groups] == ["exact"]
        for bad in (0, 1.5, "x"):
            with pytest.raises(InvalidValue, match="threshold"):
                store.duplicates(threshold=bad)


def test_cell_search_finds_what_every_pair_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    base = rng.normal(size=(300, 32)).astype(np.float32)
    noisy = base + rng.normal(scale=0.05, size=base.shape).astype(np.float32)
    matrix = np.vstack([base, noisy])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    exact = {(i, j) for i, j, _ in similar_pairs(matrix, 0.95)}
    assert {(i, i + 300) for i in range(300)} <= exact
    monkeypatch.setattr(dup, "EXACT_PAIRS_LIMIT", 10)
    cells = {(i, j) for i, j, _ in similar_pairs(matrix, 0.95)}
    assert cells <= exact and len(cells) >= 0.95 * len(exact)  # never invents a pair, misses few


def test_add_on_duplicate(db: Path) -> None:
    with open_store(db) as store:
        with pytest.raises(Duplicate) as caught:
            store.add("the office coffee machine is ON the third floor", on_duplicate="error")
        assert caught.value.existing_id == "c1" and "c1" in str(caught.value)
        assert store.add("The office coffee machine is on the third floor.", on_duplicate="error").id
        assert store.add("tests run in ci on every push", on_duplicate="skip").id == "ci"
        count = store.count()
        assert store.add("Deploys run through git push production main").id != "deploy"  # default: add
        assert store.count() == count + 1
        with pytest.raises(InvalidValue, match="on_duplicate"):
            store.add("x", on_duplicate="merge")


def test_merge_keeps_best_carries_links_and_undoes_in_one_step(db: Path) -> None:
    with open_store(db) as store:
        before = {m.id: m for m in store.get_many(["a1", "a2"]).values()}
        merged = merge_duplicates(store, ["a1", "a2"], text="User prefers JWT auth in httpOnly cookies")
        assert merged.kept.id == "a2" and merged.superseded == ("a1",)
        assert merged.kept.content == "User prefers JWT auth in httpOnly cookies"
        assert merged.kept.importance == 8 and merged.kept.related_to == ("ci",)
        assert store.get("a1").superseded_by == "a2"
        assert merged.change.changed == {"a1", "a2"}
        unmerge(store, merged)
        for memory_id, old in before.items():
            now = store.get(memory_id)
            assert (now.content, now.importance, now.related_to, now.superseded_by) == (
                old.content, old.importance, old.related_to, old.superseded_by)


def test_merge_with_a_chosen_keeper_takes_the_highest_importance(db: Path) -> None:
    with open_store(db) as store:
        merged = merge_duplicates(store, ["a1", "a2"], keep="a1")
        assert merged.kept.id == "a1" and merged.kept.importance == 8 and merged.kept.related_to == ("ci",)
        with pytest.raises(InvalidValue, match="keep"):
            merge_duplicates(store, ["c1", "c2"], keep="deploy")
        with pytest.raises(InvalidValue, match="at least two"):
            merge_duplicates(store, ["c1"])
        assert store.get("c2").superseded_by is None  # refused merges change nothing


def test_groups_never_chain_unlike_memories() -> None:
    # a is like b, b is like c, but a is not like c: a chain must not put a and c together.
    pairs = [(0, 1, 0.9), (1, 2, 0.85)]
    groups = dup._components(pairs, 3, rank=[0, 1, 2])
    assert groups == [([0, 1], 0.9)]
    assert dup._components(pairs, 3, rank=[1, 0, 2]) == [([1, 0, 2], 0.85)]  # b's group: both are like b


def test_a_large_family_of_alike_memories_stays_bounded() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=32).astype(np.float32)
    family = base + rng.normal(scale=0.01, size=(40, 32)).astype(np.float32)  # 40 near-identical texts
    family /= np.linalg.norm(family, axis=1, keepdims=True)
    pairs = similar_pairs(family, 0.9)
    assert len(pairs) <= 40 * dup.NEIGHBOURS  # each keeps its nearest few, not all 780 pairs
    groups = dup._components(pairs, 40)
    assert all(len(members) <= dup.NEIGHBOURS + 1 for members, _ in groups)
    assert sum(len(members) for members, _ in groups) >= 30  # yet most of the family is grouped


def test_random_text_of_one_vocabulary_is_never_grouped_and_restatements_still_are(ora_home: Path) -> None:
    """Texts drawn from one small vocabulary all look alike to a bag-of-words model (the threshold
    alone grouped 70 of 2,000 such texts); a restatement stands out from its background."""
    import random

    from tests.benchmarks.meaning_data import LABELLED

    rnd = random.Random(5)
    vocab = ("deploy", "server", "user", "token", "cache", "database", "config", "error", "release", "branch",
             "staging", "payment", "invoice", "email", "queue", "worker", "timeout", "retry", "schedule",
             "backup", "restore", "index", "search", "report", "metric", "alert", "latency", "build", "test",
             "review", "merge", "commit", "ticket", "customer", "order", "cart", "checkout", "price",
             "discount", "session", "cookie", "login", "password", "admin", "role", "permission", "audit",
             "log", "trace", "request", "response", "header", "webhook", "api")
    rows = [{"id": f"r{i:04d}", "content": " ".join(rnd.choice(vocab) for _ in range(rnd.randint(10, 30)))}
            for i in range(600)]
    rows += [{"id": f"L{i:02d}", "content": fact} for i, (fact, *_rest) in enumerate(LABELLED[:12])]
    rows += [{"id": f"R{i:02d}", "content": restated} for i, (*_x, restated) in enumerate(LABELLED[:12])]
    path = make_file(ora_home / "sites" / "s" / "noise.site.db", rows)
    with open_store(path, readonly=True) as store:
        groups = [g for g in store.duplicates().groups if g.kind == "near"]
    assert not [g for g in groups if any(i.startswith("r") for i in g.ids)], "random text was grouped"
    pairs = {frozenset(g.ids) for g in groups}
    restated = sum(frozenset({f"L{i:02d}", f"R{i:02d}"}) in pairs for i in range(12))
    threshold_only = 0
    from ora_desktop.core.embeddings import default_provider

    provider = default_provider()
    for fact, *_x, again in LABELLED[:12]:
        a, b = provider.embed([fact, again])
        threshold_only += float(a @ b) >= dup.DEFAULT_THRESHOLD
    assert restated == threshold_only  # every restatement the threshold groups is still grouped
