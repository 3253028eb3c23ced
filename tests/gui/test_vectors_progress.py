"""The first search by meaning of a file with no vectors shows a progress bar with Cancel
(the window stays responsive), then searches; a cancelled build keeps its work and says so,
and stays cancelled (words answer, with a note) until the person presses Build."""

from __future__ import annotations

import pytest

from ora_desktop.core import open_store
from ora_desktop.core.search import semantic, vectors  # the strip imports the build from semantic when it starts one
from ora_desktop.core.search.semantic import has_vectors
from ora_desktop.gui.search.controller import NOT_BUILT

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


def _batches_wait_for_cancel(monkeypatch, strip, first_only: bool) -> list[int]:
    """Make the meaning build's first batch (or every batch) wait for the strip's Cancel, so a test
    does not race the build; returns the list of batches stored so far."""
    store_batch = vectors.VectorIndex._store
    batches: list[int] = []

    def store_then_wait(self, *args):
        store_batch(self, *args)
        batches.append(1)
        stop = strip._stop
        if stop is not None and (len(batches) == 1 or not first_only):
            stop.wait(20)
    monkeypatch.setattr(vectors.VectorIndex, "_store", store_then_wait)
    return batches


def test_cancel_stops_the_build_and_keeps_what_was_done(make_window, seed_db, qtbot, small_batches, monkeypatch):
    path = _file(seed_db)
    window = make_window()
    bar = window.browser.search
    strip = bar.vectors
    batches = _batches_wait_for_cancel(monkeypatch, strip, first_only=True)
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
    assert strip.build_button.isVisible()
    qtbot.waitUntil(lambda: NOT_BUILT in bar.note.text(), timeout=15000)  # words answer meanwhile, and say so
    notes_when_built: list[str] = []
    strip.finished.connect(lambda ok: notes_when_built.append(bar.note.text()))  # after the bar's own slot
    strip.build_button.click()  # asking again carries on and finishes
    assert NOT_BUILT not in bar.note.text()  # untrue from the press on: it is building
    qtbot.waitUntil(lambda: strip.isHidden() and bool(notes_when_built), timeout=60000)
    assert has_vectors(path)
    assert NOT_BUILT not in notes_when_built[0]
    qtbot.waitUntil(lambda: "deploy" in _shown_ids(window), timeout=15000)
    wait_idle(qtbot, window)
    assert NOT_BUILT not in bar.note.text()


def _kept(path) -> int:
    with vectors.connect_sidecar(vectors.vector_path(path)) as conn:
        return conn.execute("SELECT count(*) FROM vecs").fetchone()[0]


def test_cancel_sticks_until_build_is_pressed(make_window, seed_db, qtbot, small_batches, monkeypatch):
    """A search queued before Cancel, a query typed after it, a quick filter or a mode switch do
    not start the build again: words answer with a note, the strip offers Build; its message goes
    in Words mode and comes back in Meaning mode."""
    path = _file(seed_db)
    window = make_window()
    bar = window.browser.search
    strip = bar.vectors
    store_batch = vectors.VectorIndex._store
    builds: list[object] = []
    build = semantic.ensure_vectors

    def counted_build(*args):
        if len(args) > 1 and args[1] is not None:  # a build with progress: the strip's (a search only loads)
            builds.append(args)
        return build(*args)
    monkeypatch.setattr(semantic, "ensure_vectors", counted_build)
    _batches_wait_for_cancel(monkeypatch, strip, first_only=False)
    answers: list[object] = []
    bar.controller.answered.connect(answers.append)
    bar.mode.setCurrentIndex(1)  # meaning
    bar.field.setText("deploys")
    qtbot.waitUntil(lambda: strip.isVisible() and strip.bar.maximum() > 0, timeout=15000)
    bar.field.setText("deploys go")  # typed just before Cancel: its debounced search is still to come
    strip.cancel_button.click()
    qtbot.waitUntil(lambda: strip.building is None, timeout=30000)
    kept = _kept(path)
    assert 0 < kept < MEMORIES + 1
    bar.field.setText("where do deploys go")  # a query typed after Cancel
    qtbot.waitUntil(lambda: any(a.request.text == "where do deploys go" for a in answers), timeout=15000)
    qtbot.waitUntil(lambda: NOT_BUILT in bar.note.text(), timeout=15000)
    qtbot.waitUntil(lambda: "deploy" in _shown_ids(window), timeout=15000)  # the words found it
    assert strip.isVisible() and strip.building is None and strip.build_button.isVisible()
    assert "cancelled" in strip.label.text()
    bar.quick["low_health"].click()
    bar.quick["low_health"].click()
    assert strip.building is None
    bar.mode.setCurrentIndex(0)  # words: the strip's message no longer applies
    qtbot.waitUntil(strip.isHidden, timeout=5000)
    bar.mode.setCurrentIndex(2)  # words + meaning: still cancelled, said again
    assert strip.isVisible() and strip.building is None and "cancelled" in strip.label.text()
    wait_idle(qtbot, window)
    assert len(builds) == 1 and _kept(path) == kept and not has_vectors(path)
    monkeypatch.setattr(vectors.VectorIndex, "_store", store_batch)
    strip.build_button.click()
    qtbot.waitUntil(lambda: strip.isHidden() and _shown_ids(window)[:1] == ["deploy"], timeout=60000)
    assert has_vectors(path) and len(builds) == 2
    qtbot.waitUntil(lambda: NOT_BUILT not in bar.note.text(), timeout=15000)
    wait_idle(qtbot, window)


def test_the_total_is_every_memory_and_cancel_says_what_was_done(make_window, seed_db, qtbot, small_batches,
                                                               monkeypatch):
    """The bar counts every memory of the file: a Cancel says how many were embedded of that total,
    and Build carries on from there with the same total (not the remainder counted from zero)."""
    path = _file(seed_db)
    window = make_window()
    bar = window.browser.search
    strip = bar.vectors
    batches = _batches_wait_for_cancel(monkeypatch, strip, first_only=True)
    seen: list[tuple[int, int]] = []
    strip.bar.valueChanged.connect(lambda v: seen.append((v, strip.bar.maximum())))
    bar.mode.setCurrentIndex(1)  # meaning
    bar.field.setText("deploys")
    qtbot.waitUntil(lambda: strip.isVisible() and bool(batches), timeout=15000)
    qtbot.waitUntil(lambda: not bar.controller._debounce.isActive(), timeout=5000)
    strip.cancel_button.click()
    qtbot.waitUntil(lambda: strip.building is None, timeout=30000)
    kept = _kept(path)
    assert kept == 50
    assert f"{kept} of {MEMORIES + 1} memories embedded; cancelled" in strip.label.text()
    seen.clear()
    strip.build_button.click()
    qtbot.waitUntil(lambda: strip.isHidden() and has_vectors(path), timeout=60000)
    assert seen and all(total == MEMORIES + 1 for _, total in seen)
    assert min(v for v, _ in seen) >= kept  # it starts at what the cancelled build kept
    wait_idle(qtbot, window)
