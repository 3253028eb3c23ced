"""The agents' search and remember by meaning: a stable default mode named in every answer,
0-1 scores in every mode, nothing for a query nothing is about, notes kept, near duplicates named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.operations import agent_memory as ops
from ora_desktop.core.search.semantic import ensure_vectors
from tests.unit.search_support import make_file

ROWS = [
    {"id": "jwt", "content": "User prefers JWT auth stored in httpOnly cookies", "type": "preference",
     "importance": 8},
    {"id": "deploy", "content": "Deploys run through `git push production main`", "importance": 6},
    {"id": "coffee", "content": "The office coffee machine is on the third floor", "importance": 2},
    {"id": "tests", "content": "Tests are written with pytest and run in CI on every push", "importance": 7},
]
NONSENSE = ("qwertyzzz", "blorp fizzlewump", "xq7 vv9 kk")


@pytest.fixture
def db(ora_home: Path) -> Path:
    path = make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)
    with open_store(path) as store:
        ensure_vectors(store)
    return path


def test_the_default_mode_stays_lexical_when_vectors_exist_and_every_answer_names_its_mode(db: Path) -> None:
    with open_store(db) as store:
        found = ops.search(store, "where do deploys go?")
        assert found.mode == "lexical" and found.result.hits[0].memory.id == "deploy"
        assert any("partial" in note for note in found.notes)  # no memory holds every word
        for mode in ("semantic", "hybrid"):
            assert ops.search(store, "where do deploys go?", mode=mode).mode == mode


def test_scores_run_from_0_to_1_in_every_mode_and_hybrid_keeps_the_notes(db: Path) -> None:
    with open_store(db) as store:
        for mode in ops.SEARCH_MODES:
            hits = ops.search(store, "how should I store the auth token?", mode=mode).result.hits
            assert hits and all(0.0 <= h.score <= 1.0 for h in hits), mode
        exact = ops.search(store, "JWT auth stored in httpOnly cookies", mode="hybrid").result.hits[0]
        assert exact.memory.id == "jwt" and exact.score > 0.5  # first on both lists: near 1, not 0.016
        assert any("partial" in n for n in ops.search(store, "where do deploys go?", mode="hybrid").notes)


def test_a_query_nothing_is_about_returns_nothing_by_meaning_too(db: Path) -> None:
    with open_store(db) as store:
        for query in NONSENSE:
            for mode in ops.SEARCH_MODES:
                assert not ops.search(store, query, mode=mode).result.hits, (query, mode)


def test_a_near_duplicate_is_stored_and_names_its_closest_match(db: Path) -> None:
    with open_store(db) as store:
        done = ops.remember(store, "User prefers JWT authentication kept in httpOnly cookies", "preference", 8)
        assert not done.already and done.closest is not None and done.closest[0] == "jwt"
        assert store.find(done.memory.id) is not None
        other = ops.remember(store, "The invoices are sent on the first business day of the month")
        assert other.closest is None
