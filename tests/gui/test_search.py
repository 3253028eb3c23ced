"""Search as you type, highlighting, facets, quick filters and search across all sites."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ora_desktop.gui.memories.delegates import match_spans
from ora_desktop.gui.search.backend import SEARCH_LIMIT

from .conftest import wait_idle


def shown(window):
    model = window.browser.model
    return [model.memory_at(r) for r in range(model.rowCount())]


def test_search_as_you_type_narrows_and_highlights(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    browser = window.browser
    assert browser.model.rowCount() == 30
    window.find_action.trigger()
    assert browser.search.field.hasFocus()
    qtbot.keyClicks(browser.search.field, "deploys")
    qtbot.waitUntil(lambda: browser.model.rowCount() == 10 and not browser.model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    assert all("deploys" in m.content for m in shown(window))
    assert browser.table.highlight.terms == ("deploys",)
    title = browser.model.data(browser.model.index(0, 0))
    assert match_spans(title, browser.table.highlight.terms)
    # the detail pane marks the words too
    browser.table.select_row(0)
    qtbot.waitUntil(lambda: browser.detail.memory is not None and "deploys" in browser.detail.memory.content)
    doc = browser.detail.editor.content.document()
    formats = doc.firstBlock().layout().formats()
    assert any(f.format.background().color().isValid() and f.length == len("deploys") for f in formats)
    browser.search.field.clear()
    qtbot.waitUntil(lambda: browser.model.rowCount() == 30 and not browser.model.is_loading(), timeout=10000)
    assert browser.table.highlight.terms == ()


def test_query_language_filters_and_bad_syntax_are_harmless(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    browser = window.browser
    browser.search.field.setText("deploys type:fact")
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() == 2, timeout=10000)
    wait_idle(qtbot, window)
    assert {m.type for m in shown(window)} == {"fact"}
    for text in ('"unbalanced NEAR( *', "'; DROP TABLE memories; --", "AND OR NOT"):
        browser.search.field.setText(text)
        qtbot.waitUntil(lambda: not browser.model.is_loading(), timeout=10000)
        qtbot.wait(250)
        qtbot.waitUntil(lambda: not browser.model.is_loading(), timeout=10000)
    assert browser.model.store.count() == 30  # nothing was harmed


def test_facets_show_counts_and_narrow_the_table(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    facets = window.browser.facets
    qtbot.waitUntil(lambda: facets.item_for("type", "fact") is not None, timeout=10000)
    fact = facets.item_for("type", "fact")
    assert fact.text(1) == "6"
    assert facets.item_for("sync", "pending").text(1) == "30"
    fact.setCheckState(0, Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 6 and not window.browser.model.is_loading(),
                    timeout=10000)
    wait_idle(qtbot, window)
    assert {m.type for m in shown(window)} == {"fact"}
    # counts follow what is shown; the checked value stays checked, and its group still offers
    # the other types (with their own counts) so more can be added
    qtbot.waitUntil(lambda: (i := facets.item_for("type", "fact")) is not None
                    and i.checkState(0) == Qt.CheckState.Checked and facets.item_for("sync", "pending").text(1) == "6"
                    and facets.item_for("type", "task") is not None, timeout=10000)
    assert facets.item_for("type", "task").text(1) == "6"
    facets.item_for("type", "task").setCheckState(0, Qt.CheckState.Checked)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 12 and not window.browser.model.is_loading(),
                    timeout=10000)


def test_quick_filters(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    browser = window.browser
    browser.search.quick["low_health"].click()
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() < 30, timeout=10000)
    wait_idle(qtbot, window)
    assert shown(window) and all(m.health_score <= 0.3 for m in shown(window))
    browser.search.quick["low_health"].click()
    browser.search.quick["at_risk"].click()
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() < 30, timeout=10000)
    wait_idle(qtbot, window)
    assert all(m.importance >= 7 and m.health_score <= 0.5 for m in shown(window))


def test_search_across_all_sites_says_where(make_window, filled_db, seed_db, qtbot):
    filled_db(10)
    seed_db([("w1", "the deploys of the writer agent", "fact", 5)], site="docs", agent="writer")
    window = make_window()
    browser = window.browser
    browser.search.scope.setCurrentIndex(1)
    browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: browser.everywhere.topLevelItemCount() == 5, timeout=10000)
    assert browser.center.currentWidget() is browser.everywhere
    where = {browser.everywhere.topLevelItem(i).text(1) for i in range(5)}
    assert where == {"anwe-sh/ora", "docs/writer"}
    item = next(browser.everywhere.topLevelItem(i) for i in range(5)
                if browser.everywhere.topLevelItem(i).text(1) == "docs/writer")
    browser.everywhere.itemActivated.emit(item, 0)
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "w1", timeout=10000)
    assert window.ctx.current_path().name == "writer.site.db"


def test_search_shows_a_first_screenful_then_appends_the_rest(make_window, filled_db, qtbot, monkeypatch):
    """The best few hits are listed at once; the rest follow below without losing the selection."""
    import threading

    from ora_desktop.gui.search import controller

    filled_db(60)  # 20 memories about deploys
    monkeypatch.setattr(controller, "FIRST_LIMIT", 5)
    rest = threading.Event()
    real = controller.file_keys

    def slow_rest(store, text, query, limit=SEARCH_LIMIT, **kw):
        if limit != 5:
            rest.wait(10)  # the full search waits until the test has looked at the first screenful
        return real(store, text, query, limit=limit, **kw)

    monkeypatch.setattr(controller, "file_keys", slow_rest)
    window = make_window()
    browser = window.browser
    model = browser.model
    window.browser.controller.set_text("deploys", immediate=True)
    qtbot.waitUntil(lambda: model.rowCount() == 5, timeout=10000)
    assert model.is_loading()  # the rest is still coming
    for row in range(5):
        model.data(model.index(row, 0))
    qtbot.waitUntil(lambda: all(model.memory_at(r) is not None for r in range(5)), timeout=10000)
    first = [model.memory_at(r).id for r in range(5)]
    assert all("deploys" in model.memory_at(r).content for r in range(5))
    browser.table.select_row(2)
    selected = model.memory_at(2).id
    rest.set()
    qtbot.waitUntil(lambda: model.rowCount() == 20 and not model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    assert [model.memory_at(r).id for r in range(5)] == first  # the rows already shown did not move
    assert all("deploys" in m.content for m in shown(window))
    assert {m.id for m in shown(window)} == {f"m{i:03d}" for i in range(0, 60, 3)}
    rows = browser.table.selectionModel().selectedRows()
    assert [r.row() for r in rows] == [2] and model.memory_at(2).id == selected
    assert browser.table.highlight.terms == ("deploys",)


def test_all_sites_hits_show_their_own_memory_and_the_sidebar_follows(make_window, filled_db, seed_db, qtbot):
    filled_db(10)
    writer = seed_db([("w1", "the deploys of the writer agent", "fact", 5)], site="docs", agent="writer")
    window = make_window()
    browser = window.browser
    from .test_curate import select_id
    select_id(qtbot, window, "m003")  # a memory of the first file is open in the detail pane
    browser.search.scope.setCurrentIndex(1)
    browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: browser.everywhere.topLevelItemCount() == 5, timeout=10000)
    # the previous file's memory is no longer editable there, and the facets do not pretend
    assert browser.detail.memory is None
    assert browser.facets.topLevelItemCount() == 1 and "one file" in browser.facets.topLevelItem(0).text(0)
    row = next(i for i in range(5) if browser.everywhere.topLevelItem(i).text(1) == "docs/writer")
    browser.everywhere.setCurrentItem(browser.everywhere.topLevelItem(row))  # a single click
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "w1", timeout=10000)
    assert browser.detail.store.path == writer  # shown (and saved) in its own file
    assert browser.everywhere.highlight.terms  # the searched words are marked in the list
    browser.everywhere.itemActivated.emit(browser.everywhere.topLevelItem(row), 0)  # a double click
    qtbot.waitUntil(lambda: window.ctx.current_path() == writer, timeout=10000)
    assert window.sidebar.currentItem() is window.sidebar.item_for(writer)  # the sidebar follows
    qtbot.waitUntil(lambda: browser.center.currentWidget() is browser.table
                    and browser.model.rowCount() == 1, timeout=10000)
