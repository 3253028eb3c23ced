"""The window on a 1366×768 laptop screen: it fits, nothing is clipped, long notes do not widen it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ora_desktop.gui.memories.columns import COLUMNS, column_index

from .test_curate import select_id

LONG_NOTE = ("ranking is reduced: no full-text index (the sidecar is being rebuilt), so words were matched as "
             "plain text and ordered by importance; ") * 3


def test_fits_a_laptop_screen_with_every_tab(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366 and window.height() == 768, timeout=5000)
    panels = {"Jobs", "Backups", "Charts"}
    qtbot.waitUntil(lambda: panels <= {window.tabs.tabText(i) for i in range(window.tabs.count())}, timeout=10000)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        hint = window.minimumSizeHint()
        assert hint.width() <= 1024 and hint.height() <= 700, (window.tabs.tabText(index), hint)
    window.tabs.setCurrentIndex(0)
    window.resize(1024, 700)  # smaller still: the window follows
    qtbot.waitUntil(lambda: window.width() == 1024 and window.height() == 700, timeout=5000)


def test_a_long_note_or_status_does_not_widen_the_window(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    window.resize(1366, 768)
    window.browser.search.note.setText(LONG_NOTE)
    window.index_label.setText("Index: " + LONG_NOTE)
    window.show_status(LONG_NOTE)
    qtbot.wait(50)
    assert window.width() == 1366
    assert window.minimumSizeHint().width() <= 1024
    assert window.browser.search.note.toolTip() == LONG_NOTE  # the whole text is one hover away


def test_detail_pane_is_never_clipped_and_the_title_is_short(make_window, filled_db, qtbot):
    path = filled_db(30)
    import sqlite3
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET content = ? WHERE id = 'm004'", ("word " * 400,))
    window = make_window()
    window.resize(1024, 700)
    select_id(qtbot, window, "m004")
    detail = window.browser.detail
    qtbot.waitUntil(lambda: detail.width() > 0, timeout=5000)
    body = detail.widget()
    assert detail.viewport().width() >= body.minimumSizeHint().width()
    assert body.width() <= detail.viewport().width()  # Save, the type box and "Remove link" are on screen
    assert len(detail.title.text()) <= 91


def test_importance_health_and_sync_show_together_at_the_default_size(make_window, filled_db, qtbot):
    filled_db(30)
    window = make_window()
    window.resize(1366, 768)
    qtbot.wait(50)
    table = window.browser.table
    shown = [c.key for i, c in enumerate(COLUMNS) if not table.isColumnHidden(i)]
    assert {"content", "importance", "health", "sync"} <= set(shown)
    visible_width = sum(table.columnWidth(i) for i in range(len(COLUMNS)) if not table.isColumnHidden(i))
    assert visible_width <= table.viewport().width() + 1  # no sideways scrolling needed
    assert table.columnWidth(column_index("content")) >= 150


def test_the_sidebar_keeps_names_readable_and_grows_back(make_window, filled_db, qtbot):
    """A small window squeezes the sidebar no narrower than its names need; a person's narrower
    drag is kept; a squeezed sidebar widens again with the window."""
    filled_db(30)
    window = make_window()
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366, timeout=5000)
    readable = window.sidebar.fontMetrics().horizontalAdvance("m" * 12)
    window.resizeDocks([window.dock], [300], Qt.Orientation.Horizontal)  # a person widens it
    qtbot.waitUntil(lambda: window.dock.width() >= 298, timeout=5000)
    window.resize(640, 600)
    qtbot.waitUntil(lambda: window.width() <= 700, timeout=5000)
    qtbot.wait(50)
    assert window.sidebar.width() >= readable
    assert window.dock.width() < 298  # squeezed
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.dock.width() >= 298, timeout=5000)
    window.resizeDocks([window.dock], [20], Qt.Orientation.Horizontal)  # dragged as narrow as it goes
    qtbot.wait(50)
    assert window.sidebar.width() >= readable


def test_a_long_status_message_can_be_read_whole(make_window, filled_db, qtbot):
    """Cut to the bar's width, it is whole on hover, and kept in View > Recent messages."""
    filled_db(5)
    window = make_window()
    window.resize(1024, 700)
    window.show_status(LONG_NOTE)
    window.show_status("second message")
    assert window.statusBar().toolTip() == "second message"
    window.show_status(LONG_NOTE)
    assert window.statusBar().toolTip() == LONG_NOTE
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    [recent] = [a for a in view_menu.actions() if a.text() == "Recent &messages…"]
    recent.trigger()
    dialog = window.messages.dialog
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    from PySide6.QtWidgets import QListWidget

    listing = dialog.findChild(QListWidget)
    assert listing.count() == 3 and listing.item(0).text().endswith(LONG_NOTE)
    assert listing.item(1).text().endswith("second message")
    dialog.close()


def test_extra_columns_scroll_sideways_rather_than_squeeze_the_content(make_window, filled_db, qtbot):
    """At 1366×768 with three more columns shown, content keeps a readable width; hiding them again
    gives it the width back."""
    from ora_desktop.gui.memories.view import CONTENT_MIN

    filled_db(30)
    window = make_window()
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.width() == 1366, timeout=5000)
    table = window.browser.table
    content = column_index("content")
    wide = table.columnWidth(content)
    extra = [i for i, c in enumerate(COLUMNS) if not c.default][:3]
    for i in extra:
        table.set_column_visible(i, True)
    qtbot.wait(50)
    assert table.columnWidth(content) >= CONTENT_MIN
    for i in extra:
        table.set_column_visible(i, False)
    qtbot.wait(50)
    assert table.columnWidth(content) >= wide - 2


def test_a_first_start_fits_the_screen(ora_home, settings, aloop, qtbot):
    """With no size remembered, the window is no larger than the screen it opens on."""
    from PySide6.QtGui import QGuiApplication

    from ora_desktop.core import OraHome
    from ora_desktop.gui.context import AppContext
    from ora_desktop.gui.main_window import MainWindow

    ctx = AppContext(OraHome(ora_home), settings)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    area = QGuiApplication.primaryScreen().availableGeometry()
    assert window.width() <= area.width() and window.height() <= area.height()
    window.close()
    ctx.close()
