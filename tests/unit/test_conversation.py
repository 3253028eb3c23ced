"""ConversationMemory: prune to 75% of the window, keep at least 6, archive, recall ephemerally."""

from __future__ import annotations

from pathlib import Path

import pytest

from ora_desktop.core import InvalidValue, open_store
from ora_desktop.core.conversation import ConversationMemory
from tests.unit.search_support import make_file

FILLER = [
    "The weather looks mild this afternoon with light wind",
    "Traffic on the ring road was slow again this morning",
    "Lunch options nearby include noodles and salads",
    "The meeting moved to the small room upstairs",
]


@pytest.fixture
def db(ora_home: Path) -> Path:
    return make_file(ora_home / "sites" / "s" / "ora.site.db", [])


def chatter(memory: ConversationMemory, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        memory.add("user" if i % 2 == 0 else "assistant", f"{FILLER[i % len(FILLER)]} (message {i})")


def test_prunes_to_75_percent_and_archives(db: Path) -> None:
    with open_store(db) as store:
        memory = ConversationMemory(store, context_window=400)
        chatter(memory, 40)
        assert memory.tokens() <= 400
        memory.messages.append({"role": "user", "content": "x" * 400})  # past the window
        result = memory.prune()
        assert result and result.tokens_before > 400
        assert result.tokens_after <= 0.75 * 400
        assert memory.tokens() == result.tokens_after
        archived = [store.get(i) for i in result.memory_ids]
        assert all(m.type == "conversation" for m in archived)
        assert archived[0].content == f"{result.archived[0]['role']}: {result.archived[0]['content']}"


def test_target_is_configurable_and_nothing_happens_below_the_window(db: Path) -> None:
    with open_store(db) as store:
        memory = ConversationMemory(store, context_window=1000, prune_target=0.5)
        chatter(memory, 10)
        assert not memory.prune() and memory.last_prune.archived == ()
        prunes = []
        for i in range(10, 90):
            result = memory.add("user", f"{FILLER[i % len(FILLER)]} (message {i})")
            if result:
                prunes.append(result)
        assert prunes and all(p.tokens_before > 1000 >= 500 >= p.tokens_after for p in prunes)


def test_keeps_at_least_six_and_never_system_messages(db: Path) -> None:
    with open_store(db) as store:
        memory = ConversationMemory(store, context_window=50)
        memory.messages.append({"role": "system", "content": "You are a helpful agent."})
        for i in range(10):
            memory.add("user", "a long message that is far too big for such a tiny window " * 2 + str(i))
        assert memory.messages[0]["role"] == "system"
        assert len(memory.messages) >= 7  # the system message and the last six
        assert [m["content"][-1] for m in memory.messages[-6:]] == list("456789")
        assert memory.tokens() > 50  # over the window, but six are always kept


def test_failed_archive_keeps_the_messages(db: Path) -> None:
    with open_store(db, readonly=True) as store:
        memory = ConversationMemory(store, context_window=100)
        for i in range(20):
            memory.add("user", f"{FILLER[i % 4]} {i}")
        assert len(memory.messages) == 20
        assert memory.last_prune.error and "kept in history" in memory.last_prune.error
    with open_store(db) as store:
        assert store.count() == 0


def test_recall_a_fact_said_500_messages_earlier(db: Path) -> None:
    with open_store(db) as store:
        memory = ConversationMemory(store, context_window=600)
        memory.add("user", "My cat is called Zorblax and she loves tuna.")
        memory.add("assistant", "Noted: your cat Zorblax loves tuna.")
        chatter(memory, 500)
        assert all("Zorblax" not in m["content"] for m in memory.messages)
        history = list(memory.messages)
        recall = memory.on_user_message("What is my cat called again?")
        assert recall and recall.block["role"] == "system"
        assert "Zorblax" in recall.block["content"]
        assert memory.messages[-1] == {"role": "user", "content": "What is my cat called again?"}
        assert len(memory.messages) >= len(history) * 0.5
        assert all(m["role"] != "system" for m in memory.messages)  # the block is not in history
        prompt = memory.prompt(recall)
        assert prompt[-2] == recall.block and prompt[-1]["content"] == "What is my cat called again?"
        assert len(prompt) == len(memory.messages) + 1


def test_no_recall_for_unrelated_or_empty_messages(db: Path) -> None:
    with open_store(db) as store:
        memory = ConversationMemory(store, context_window=200)
        chatter(memory, 60)
        assert not memory.on_user_message("Quantum chromodynamics?")
        assert not memory.recall("the and of")


def test_bad_settings_are_refused(db: Path) -> None:
    with open_store(db) as store:
        for kwargs in ({"context_window": 0}, {"context_window": 10, "prune_target": 1.5},
                       {"context_window": 10, "min_keep": -1}):
            with pytest.raises(InvalidValue):
                ConversationMemory(store, **kwargs)


def test_a_question_is_pruned_with_its_answer(db: Path) -> None:
    with open_store(db) as store:
        memory = ConversationMemory(store, context_window=300, prune_target=0.8)
        for i in range(20):
            memory.messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 48})
        # 20 messages of 16 tokens = 320; 240 (80%) is reached after 5 messages, the 5th a question.
        result = memory.prune()
        assert [m["role"] for m in result.archived] == ["user", "assistant"] * 3
        assert memory.messages[0]["role"] == "user" and result.tokens_after == 224
