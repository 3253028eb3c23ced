"""Context for agents: important, relevant (keyword + related_to neighbours) and recent memories,
each within its share of a token budget, never past it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ora_desktop.core import InvalidValue, open_store
from ora_desktop.core.context import build_context, estimate_tokens
from tests.unit.search_support import make_file

ROWS = [
    {"id": "imp", "content": "Critical: never deploy on Fridays", "type": "preference", "importance": 10},
    {"id": "key", "content": "The deploy key lives in the vault", "importance": 4, "health_score": 0.4,
     "related_to": json.dumps(["rot", "old"])},
    {"id": "rot", "content": "Vault tokens rotate monthly", "importance": 3, "health_score": 0.4},
    {"id": "old", "content": "Staging password is hunter2", "importance": 3, "health_score": 0.4,
     "superseded_by": "cur"},
    {"id": "cur", "content": "Staging password moved to the secret manager", "importance": 3,
     "health_score": 0.4},
    {"id": "gone", "content": "Deploy freeze until Monday", "importance": 4, "health_score": 0.4,
     "expires_at": "2020-01-01 00:00:00"},
    *[{"id": f"r{i}", "content": f"Routine note {i} " + "words " * 30, "type": "context", "importance": 2,
       "health_score": 0.4, "created_at": f"2025-03-{i + 1:02d} 10:00:00"} for i in range(20)],
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", ROWS)


def section_ids(bundle, name: str) -> list[str]:
    return [m.id for m in bundle.section(name).memories]


def test_sections_and_graph_expansion(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        bundle = store.context("deploy key", token_budget=2000)
    assert section_ids(bundle, "important") == ["imp"]
    relevant = section_ids(bundle, "relevant")
    assert relevant[0] == "key" and "rot" in relevant
    assert "cur" in relevant and "old" not in relevant  # superseded neighbour replaced by the live one
    assert "gone" not in bundle.text  # expired left out
    assert section_ids(bundle, "recent")[0] == "r19"
    assert len(set(bundle.memories)) == len(bundle.memories)
    assert bundle.tokens == estimate_tokens(bundle.text) <= 2000
    assert "## Important memories" in bundle.text and "## Relevant to: deploy key" in bundle.text


def test_no_hops_means_no_neighbours(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, "deploy key", hops=0)
    assert "rot" not in section_ids(bundle, "relevant")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=0, max_value=1500), query=st.sampled_from(["deploy", "vault key", "", "zzz"]),
       words=st.booleans())
def test_budget_is_never_exceeded(db: Path, budget: int, query: str, words: bool) -> None:
    tokenizer = (lambda text: len(text.split())) if words else None
    count = tokenizer or estimate_tokens
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, query, token_budget=budget, tokenizer=tokenizer)
    assert count(bundle.text) <= budget if bundle.text else True
    assert bundle.tokens <= budget
    for section in bundle.sections:
        assert section.tokens <= budget


def test_each_section_keeps_to_its_share(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, "deploy", token_budget=400,
                               shares={"important": 0.1, "relevant": 0.1, "recent": 0.8})
    important = bundle.section("important")
    assert important.tokens <= 40 + 1
    assert bundle.section("recent").tokens > bundle.section("relevant").tokens


def test_long_memories_are_truncated_to_fit(ora_home: Path) -> None:
    db = make_file(ora_home / "long.site.db", [{"id": "big", "content": "deploy " + "x" * 5000, "importance": 9}])
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, "deploy", token_budget=100)
    assert bundle.tokens <= 100
    item = bundle.section("important").items[0]
    assert item.truncated and item.text.endswith("…")


def test_touch_only_when_asked(db: Path) -> None:
    with open_store(db) as store:
        build_context(store, "deploy key")
        assert store.get("key").access_count == 0
        bundle = build_context(store, "deploy key", touch=True)
        assert store.get("key").access_count == 1
        assert all(store.get(m.id).access_count == 1 for m in bundle.memories)


def test_bad_shares_are_refused(db: Path) -> None:
    with open_store(db, readonly=True) as store, pytest.raises(InvalidValue):
        build_context(store, "x", shares={"nonsense": 1})


def test_fallback_context_has_a_note(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORA_DESKTOP_NO_FTS5", "1")
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, "deploy key")
    assert "key" in section_ids(bundle, "relevant")
    assert any("ranking is reduced" in note for note in bundle.notes)


def test_a_question_in_plain_language_finds_relevant_memories(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, "where does the deploy key live?")
        assert section_ids(bundle, "relevant")[0] == "key"
        # Filters of the query language still apply.
        assert section_ids(build_context(store, "which vault key type:preference", hops=0), "relevant") == []


def test_relevant_section_finds_paraphrases_by_meaning(ora_home: Path) -> None:
    path = make_file(ora_home / "sites" / "s" / "meaning.site.db", [
        {"id": "jwt", "content": "User prefers JWT auth stored in httpOnly cookies", "importance": 3,
         "type": "preference"},  # not a fact: the important section would take it first
        {"id": "coffee", "content": "The office coffee machine is on the third floor", "importance": 3,
         "type": "context"},
    ])
    with open_store(path, readonly=True) as store:
        bundle = store.context("where should I keep the login credentials?", token_budget=2000)
    relevant = bundle.section("relevant")
    assert [item.memory.id for item in relevant.items][:1] == ["jwt"]
    assert relevant.items[0].reason == "meaning"


def test_large_files_without_vectors_use_keywords_and_say_so(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ora_desktop.core import context as context_module
    from ora_desktop.core.search.vectors import vector_path

    monkeypatch.setattr(context_module, "BUILD_VECTORS_UP_TO", 5)
    with open_store(db, readonly=True) as store:
        bundle = store.context("deploy key", token_budget=2000)
    assert any("keyword only" in note for note in bundle.notes)
    assert not vector_path(db).exists()  # nothing was embedded behind the agent's back


def test_what_did_not_fit_the_budget_is_reported_with_its_cost(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        roomy = build_context(store, "deploy key", token_budget=5000)
        tight = build_context(store, "deploy key", token_budget=150)
    assert roomy.left_out == []
    left = {item.memory.id: item for item in tight.left_out}
    placed = {m.id for m in tight.memories}
    assert left and not (set(left) & placed)
    # Every memory the roomy context placed is, under the tight budget, either placed or left out.
    assert {m.id for m in roomy.memories} == placed | set(left)
    for section in tight.sections:
        for item in section.left_out:
            assert item.tokens == estimate_tokens(item.text) and item.text not in tight.text
            assert item.tokens > 0 and item.reason in ("important", "keyword", "neighbor", "recent")
    assert {i.memory.id for i in tight.section("recent").left_out} >= {"r0", "r1"}


def test_superseded_important_memories_do_not_use_up_the_important_limit(ora_home: Path) -> None:
    rows = [
        *[{"id": f"stale{i}", "content": f"Old rule {i}", "importance": 10, "superseded_by": f"live{i}"}
          for i in range(3)],
        *[{"id": f"live{i}", "content": f"Current rule {i}", "importance": 8} for i in range(3)],
    ]
    db = make_file(ora_home / "sites" / "s" / "ora.site.db", rows)
    with open_store(db, readonly=True) as store:
        bundle = build_context(store, "", important_limit=3)
        assert [m.id for m in store.important(3, superseded="hide")] == ["live2", "live1", "live0"]
        assert [m.id for m in store.important(3, current=False)] == ["stale2", "stale1", "stale0"], "the seed's query"
        assert [m.id for m in store.important(3)] == ["live2", "live1", "live0"], "current memories by default"
    assert section_ids(bundle, "important") == ["live2", "live1", "live0"]


@given(st.text(alphabet=st.sampled_from("ab \n\t\u00a0\u3000é"), max_size=300), st.integers(0, 120))
def test_a_prefix_normalised_is_the_prefix_of_the_text_normalised(text: str, room: int) -> None:
    from ora_desktop.core.context import flat

    whole = " ".join(text.split())
    assert flat(text, room) == whole[:room + 1]


def test_a_huge_memory_is_cut_as_if_its_whole_text_were_normalised(ora_home: Path) -> None:
    """Only the part of a large memory the budget can hold is normalised: the bundle is the one a
    whole-text normalisation gives (a tokenizer of one's own takes that path)."""
    big = ("deploy  pipeline\n\tTypeError   again " * 40000)
    path = make_file(ora_home / "sites" / "s" / "big.site.db",
                     [*ROWS, {"id": "big", "content": big, "importance": 9}])
    with open_store(path, readonly=True) as store:
        fast = store.context("deploy pipeline", 300)
        whole = store.context("deploy pipeline", 300, tokenizer=lambda text: (len(text) + 3) // 4)
    assert fast.text == whole.text and fast.tokens == whole.tokens <= 300
    assert any(item.memory.id == "big" and item.truncated for s in fast.sections for item in s.items)
