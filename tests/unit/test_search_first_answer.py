"""An agent's first ``store.search`` of a never-indexed file answers while the index builds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.search import background, build, index_state
from tests.unit.search_support import ids, make_file


@pytest.fixture
def db(ora_home: Path) -> Path:
    rows = [{"id": f"m{i}", "content": f"filler memory number {i} about gardening"} for i in range(300)]
    rows.append({"id": "needle", "content": "the quick brown fox", "importance": 8})
    return make_file(ora_home / "sites" / "s" / "ora.site.db", rows)


@pytest.fixture
def slow_build(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The build's words part waits for the returned event (set by the test, or after 30 s):
    an index build that takes as long as the test needs."""
    gate = threading.Event()
    real = build._build_into

    def gated(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "_build_into", gated)
    monkeypatch.setattr(background, "FIRST_ANSWER_SECONDS", 0.3)
    monkeypatch.setattr(background, "SMALL_FILE_BYTES", 0)  # (a small file is built first, as before)
    yield gate
    gate.set()


def _wait_built(db: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = index_state(db)
        if state.built and not state.building:
            return
        time.sleep(0.05)
    raise AssertionError("the background build did not finish")


def test_first_search_answers_while_the_index_builds_in_the_background(db: Path, slow_build: threading.Event) -> None:
    heard: list[tuple[int, int]] = []
    with open_store(db) as store:
        started = time.monotonic()
        first = store.search("fox", progress=lambda done, total: heard.append((done, total)))
        assert time.monotonic() - started < 10  # (the build is held for 30 s: this did not wait for it)
        assert ids(first) == ["needle"] and first.fallback
        assert "being built in the background" in first.note
        state = index_state(db)
        assert state.building and not state.built  # the build goes on after the answer
        assert heard  # the caller heard the build while it waited
        again = store.search("fox")  # a second caller joins the same build, not a new one
        assert again.fallback and "being built" in again.note
        slow_build.set()
        _wait_built(db)
        later = store.search("fox")
        assert ids(later) == ["needle"] and not later.fallback and not later.note


def test_a_small_file_is_built_before_its_first_answer(db: Path) -> None:
    with open_store(db) as store:
        result = store.search("fox")
    assert ids(result) == ["needle"] and not result.fallback and not result.note
    assert not index_state(db).building


def test_a_search_that_asks_to_wait_still_waits_for_the_whole_build(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "SMALL_FILE_BYTES", 0)
    with open_store(db) as store:
        result = store.search("fox", wait=True)
    assert ids(result) == ["needle"] and not result.fallback
    state = index_state(db)
    assert state.built and not state.tags_pending


def test_once_built_a_search_waits_for_the_tags_as_before(db: Path) -> None:
    with open_store(db) as store:
        store.search("fox", wait=True)
        result = store.search("tag:function=x fox")
    assert not result.fallback and not result.warnings


def test_the_plain_scan_meanwhile_stops_at_its_time_bound_and_says_so(
        ora_home: Path, slow_build: threading.Event, monkeypatch: pytest.MonkeyPatch) -> None:
    from ora_desktop.core.search import engine

    rows = [{"id": f"m{i}", "content": f"filler memory number {i} about gardening"} for i in range(5000)]
    path = make_file(ora_home / "sites" / "s" / "big.site.db", rows)
    monkeypatch.setattr(engine, "SCAN_SECONDS", 0.0)
    with open_store(path) as store:
        result = store.search("gardening")
    assert result.fallback and "being built" in result.note
    assert any("plain scan stopped after 0 s" in w for w in result.warnings)
