"""Search as you type, highlighting, facets, quick filters and search across all sites."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt

from ora_desktop.gui.memories.delegates import match_spans

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
    low_health = browser.model.query
    browser.search.quick["low_health"].click()
    browser.search.quick["at_risk"].click()
    qtbot.waitUntil(lambda: browser.model.query != low_health and not browser.model.is_loading()
                    and browser.model.rowCount() < 30, timeout=10000)
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
    assert window.count_label.text() == "5 hits across all sites"  # not the hidden table's rows
    item = next(browser.everywhere.topLevelItem(i) for i in range(5)
                if browser.everywhere.topLevelItem(i).text(1) == "docs/writer")
    browser.everywhere.itemActivated.emit(item, 0)
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "w1", timeout=10000)
    assert window.ctx.current_path().name == "writer.site.db"


class CountingEngine:
    """The real engine's ``search``, counting calls (and optionally holding one query back)."""

    def __init__(self, monkeypatch, hold: str | None = None) -> None:
        import threading

        from ora_desktop.core.search import engine

        self.real = engine.search
        self.calls: list[str] = []
        self.hold = hold
        self.release = threading.Event()
        monkeypatch.setattr(engine, "search", self)

    def __call__(self, target, query, *args, **kw):
        self.calls.append(query.text if hasattr(query, "text") else str(query))
        if self.hold is not None and self.calls[-1] == self.hold:
            self.release.wait(10)
        return self.real(target, query, *args, **kw)


def test_a_keystroke_runs_the_engine_once(make_window, filled_db, qtbot, monkeypatch):
    from ora_desktop.core.search import ensure_index

    ensure_index(filled_db(60))  # 20 memories about deploys; indexed (else the index build searches again)
    window = make_window()
    browser = window.browser
    engine = CountingEngine(monkeypatch)
    answers = []
    browser.controller.answered.connect(answers.append)
    browser.controller.set_text("deploys", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 20 and bool(answers), timeout=10000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: browser.facets.item_for("type", "fact") is not None, timeout=10000)
    assert engine.calls == ["deploys"]
    assert all("deploys" in m.content for m in shown(window))
    assert answers[-1].total == 20


def test_a_keystroke_does_not_repaint_the_old_hits_with_the_new_words(make_window, filled_db, qtbot):
    """The previous hits are not painted again with the new words' marks just before the new
    hits replace them (a full table paint for nothing on every keystroke); the new hits are
    painted with the marks right."""
    from PySide6.QtCore import QEvent, QObject

    class Paints(QObject):
        count = 0

        def eventFilter(self, watched, event):  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                self.count += 1
            return False

    filled_db(60)
    window = make_window()
    browser = window.browser
    browser.controller.set_text("deploy", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 20 and not browser.model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    qtbot.wait(300)
    paints = Paints()
    browser.table.viewport().installEventFilter(paints)
    painted_before_reset: list[int] = []
    browser.model.modelReset.connect(lambda: painted_before_reset.append(paints.count))
    browser.controller.set_text("deploys", immediate=True)
    qtbot.waitUntil(lambda: browser.controller.terms == ("deploys",) and not browser.model.is_loading(),
                    timeout=10000)
    qtbot.wait(300)
    assert painted_before_reset[:1] == [0] and paints.count >= 1
    assert browser.table.highlight.terms == ("deploys",)
    wait_idle(qtbot, window)  # every row fetched (a loaded machine paints later)
    assert all("deploys" in m.content for m in shown(window))


def test_a_superseded_keystroke_is_not_applied(make_window, filled_db, qtbot, monkeypatch):
    from ora_desktop.core.search import ensure_index

    ensure_index(filled_db(60))  # indexed: else the index build, ending after "deploys", searches again
    window = make_window()
    browser = window.browser
    engine = CountingEngine(monkeypatch, hold="dep")
    answers = []
    browser.controller.answered.connect(answers.append)
    browser.controller.set_text("dep", immediate=True)  # held inside the engine on its worker
    qtbot.waitUntil(lambda: engine.calls == ["dep"], timeout=10000)
    browser.controller.set_text("deploys", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 20 and bool(answers), timeout=10000)
    engine.release.set()  # the obsolete keystroke's engine call returns now
    qtbot.wait(300)
    wait_idle(qtbot, window)
    assert [a.query for a in answers] == ["deploys"]  # the old answer was never applied
    assert browser.model.rowCount() == 20 and all("deploys" in m.content for m in shown(window))


def test_a_stemmed_match_is_painted_highlighted(make_window, seed_db, qtbot):
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QStyleOptionViewItem

    from ora_desktop.gui.memories.delegates import highlight_color

    seed_db([("r1", "runs every night", "fact", 5), ("r2", "nothing to see", "fact", 5)])
    window = make_window()
    browser = window.browser
    browser.controller.set_text("running", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1 and browser.model.memory_at(0) is not None,
                    timeout=10000)
    delegate = browser.table.highlight
    title = browser.model.data(browser.model.index(0, 0))
    assert [title[a:b] for a, b in delegate.cache.spans(title)] == ["runs"]
    image = QImage(400, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = image.rect()
    option.widget = browser.table
    delegate.paint(painter, option, browser.model.index(0, 0))
    painter.end()
    mark = highlight_color()  # painted with its alpha over the white background
    alpha = mark.alpha() / 255
    want = [round(c * alpha + 255 * (1 - alpha)) for c in (mark.red(), mark.green(), mark.blue())]
    marked = sum(1 for x in range(0, 400, 2) for y in (8, 12, 16)
                 if all(abs(a - b) < 25 for a, b in zip(QColor(image.pixel(x, y)).getRgb()[:3], want, strict=True)))
    assert marked > 10  # the stem match "runs" is painted on the highlight colour
    browser.table.select_row(0)
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == "r1")
    formats = browser.detail.editor.content.document().firstBlock().layout().formats()
    assert any(f.start == 0 and f.length == len("runs") for f in formats)


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


def test_a_new_search_shows_its_top_hit_selected(make_window, filled_db, qtbot):
    """A row picked far down the list must not stay selected (and scrolled to) under a new query:
    the best hit is selected, in view, and the detail pane shows it."""
    filled_db(120)
    window = make_window()
    browser = window.browser
    wait_idle(qtbot, window)
    browser.table.select_row(119)  # a far row that the search below finds too
    qtbot.waitUntil(lambda: browser.model.memory_at(119) is not None)
    browser.table.select_row(max(r for r in range(60, 120) if "deploys" in browser.model.memory_at(r).content))
    qtbot.waitUntil(lambda: browser.detail.memory is not None and "deploys" in browser.detail.memory.content)
    assert browser.table.verticalScrollBar().value() > 0
    browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() == 40, timeout=10000)
    wait_idle(qtbot, window)
    top = browser.model.memory_at(0)
    assert browser.table.currentIndex().row() == 0
    assert browser.table.selected_rows() == [0]
    assert browser.table.verticalScrollBar().value() == 0
    qtbot.waitUntil(lambda: browser.detail.memory is not None and browser.detail.memory.id == top.id)


def test_a_refresh_keeps_the_selected_row(make_window, filled_db, qtbot):
    """Only a new question moves the selection: another program's write keeps it where it was."""
    path = filled_db(60)
    window = make_window()
    browser = window.browser
    wait_idle(qtbot, window)
    browser.table.select_row(40)
    qtbot.waitUntil(lambda: browser.table.current_memory_now() is not None)
    chosen = browser.table.current_memory_now().id
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET importance = 3 WHERE id = 'm001'")
    qtbot.wait(1500)
    wait_idle(qtbot, window)
    assert browser.table.current_memory_now().id == chosen


def test_the_count_follows_back_to_the_table(make_window, filled_db, seed_db, qtbot):
    filled_db(10)
    window = make_window()
    browser = window.browser
    browser.search.scope.setCurrentIndex(1)
    browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: window.count_label.text() == "4 hits across all sites", timeout=10000)
    browser.search.scope.setCurrentIndex(0)
    qtbot.waitUntil(lambda: window.count_label.text().startswith("4 memories"), timeout=10000)
