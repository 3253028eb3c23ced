"""The first search by meaning of a file with no vectors shows a progress bar with Cancel
(the window stays responsive), then searches; a cancelled build keeps its work and says so."""

from __future__ import annotations

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.search import vectors
from ora_desktop.core.search.semantic import has_vectors

from .conftest import wait_idle

MEMORIES = 600


def _file(seed_db):
    path = seed_db()
    rows = [{"id": f"m{i}", "content": f"Note {i} about the weekly planning meeting and item {i % 37}"}
            for i in range(MEMORIES)]
    rows.append({"id": "deploy", "content": "Deploys run through git push production main", "importance": 9})
    with open_store(path) as store:
        store.add_many(rows)
    return path


def _shown_ids(window):
    model = window.browser.model
    return [getattr(model.memory_at(r), "id", None) for r in range(model.rowCount())]


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(vectors, "BATCH", 50)  # many progress steps on a small file


def test_first_meaning_search_shows_progress_then_results(make_window, seed_db, qtbot, small_batches):
    path = _file(seed_db)
    window = make_window()
    bar = window.browser.search
    strip = bar.vectors
    assert strip.isHidden()
    seen: list[tuple[int, int]] = []
    strip.bar.valueChanged.connect(lambda v: seen.append((v, strip.bar.maximum())))
    bar.field.setText("where do deploys go?")
    bar.mode.setCurrentIndex(1)  # meaning
    qtbot.waitUntil(lambda: strip.isVisible() and strip.bar.maximum() == MEMORIES + 1, timeout=15000)
    qtbot.waitUntil(lambda: strip.isHidden() and _shown_ids(window)[:1] == ["deploy"], timeout=60000)
    assert any(0 < v < MEMORIES + 1 for v, _ in seen)  # it moved in steps while the loop ran
    assert seen[-1] == (MEMORIES + 1, MEMORIES + 1)
    assert has_vectors(path)
    wait_idle(qtbot, window)


def test_cancel_stops_the_build_and_keeps_what_was_done(make_window, seed_db, qtbot, small_batches, monkeypatch):
    path = _file(seed_db)
    window = make_window()
    bar = window.browser.search
    strip = bar.vectors
    store_batch = vectors.VectorIndex._store
    batches: list[int] = []

    def store_then_wait(self, *args):  # the first batch waits for Cancel, so the test does not race the build
        store_batch(self, *args)
        batches.append(1)
        stop = strip._stop
        if len(batches) == 1 and stop is not None:
            stop.wait(20)
    monkeypatch.setattr(vectors.VectorIndex, "_store", store_then_wait)
    bar.mode.setCurrentIndex(2)  # words + meaning
    bar.field.setText("deploys")
    qtbot.waitUntil(lambda: strip.isVisible() and bool(batches), timeout=15000)
    # the typed word's debounced search must have run (a person's typing ends before they cancel),
    # or it would start a second build right after the Cancel
    qtbot.waitUntil(lambda: not bar.controller._debounce.isActive(), timeout=5000)
    assert strip.cancel_button.isEnabled()
    strip.cancel_button.click()
    qtbot.waitUntil(lambda: strip.building is None, timeout=30000)
    assert strip.isVisible() and "cancelled" in strip.label.text() and strip.cancel_button.isHidden()
    assert not has_vectors(path)
    with vectors.connect_sidecar(vectors.vector_path(path)) as conn:
        kept = conn.execute("SELECT count(*) FROM vecs").fetchone()[0]
    assert 0 < kept < MEMORIES + 1  # partial work kept for the next build
    bar.field.setText("deploys go")  # searching again carries on and finishes
    qtbot.waitUntil(lambda: strip.isHidden() and "deploy" in _shown_ids(window), timeout=60000)
    assert has_vectors(path)
    wait_idle(qtbot, window)
