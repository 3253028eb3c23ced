"""The filter panel's Session facet: an imported conversation's session, ticked, lists that
conversation only (the facet comes from core's tag counts, as every facet does)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ora_desktop.core import open_store
from ora_desktop.core.exchange import ImportOptions
from ora_desktop.gui.search.widgets import VALUE_ROLE
from tests.unit.exchange_support import context_memory_db

from .conftest import wait_idle
from .test_facets_follow_edits import shown_counts
from .test_memories import pages_settled


def test_session_facet_lists_one_conversation(make_window, seed_db, tmp_path, qtbot) -> None:
    path = seed_db()
    with open_store(path) as store:
        store.import_from(context_memory_db(tmp_path / "context.db"), options=ImportOptions(messages=True))
        total = store.count()
    window = make_window()
    wait_idle(qtbot, window)
    facets = window.browser.facets
    qtbot.waitUntil(lambda: shown_counts(window, "tag:session") == {"sess-auth-01": "4", "sess-cors-02": "1"},
                    timeout=30000)
    group = next(facets.topLevelItem(i) for i in range(facets.topLevelItemCount())
                 if facets.topLevelItem(i).data(0, VALUE_ROLE) == "tag:session")
    assert group.text(0) == "Session" and group.isExpanded()
    facets.item_for("tag:session", "sess-auth-01").setCheckState(0, Qt.CheckState.Checked)
    model = window.browser.model
    qtbot.waitUntil(lambda: model.rowCount() == 4 and not model.is_loading(), timeout=20000)
    wait_idle(qtbot, window)
    pages_settled(model, qtbot)
    assert all("session=sess-auth-01" in model.memory_at(r).content for r in range(4))
    assert model.rowCount() < total


def test_tag_facets_appear_once_the_index_built_at_open_is_done(make_window, seed_db, tmp_path, qtbot,
                                                                   monkeypatch) -> None:
    """The facets are counted while the window builds the file's index (tag counts need it, so
    there are none yet); once the build is done, they are counted again, tags included."""
    import threading

    from ora_desktop.core.search import build
    from ora_desktop.gui.search import controller as controller_module

    path = seed_db()
    with open_store(path) as store:
        store.import_from(context_memory_db(tmp_path / "context.db"), options=ImportOptions(messages=True))
    building, release = threading.Event(), threading.Event()
    real_report, real_count = build.BuildTask._report, controller_module.count_answer_facets

    def held(self, done: int, total: int) -> None:  # the build waits, mid-way, until released
        building.set()
        release.wait(30)
        real_report(self, done, total)

    def counted_while_building(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        building.wait(30)
        return real_count(*args, **kwargs)

    monkeypatch.setattr(build.BuildTask, "_report", held)
    monkeypatch.setattr(controller_module, "count_answer_facets", counted_while_building)
    window = make_window()
    controller = window.browser.controller
    qtbot.waitUntil(lambda: controller.state.holds(window.browser.store), timeout=20000)
    assert shown_counts(window, "type") and not shown_counts(window, "tag:session")
    release.set()
    qtbot.waitUntil(lambda: shown_counts(window, "tag:session") == {"sess-auth-01": "4", "sess-cors-02": "1"},
                    timeout=20000)
