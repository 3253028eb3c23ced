"""Keyboard only: search, Down to the hits, Enter/F2 to edit, Escape back, F6 between panes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from .conftest import wait_idle
from .python_calls import calls_of


def focused():
    return QApplication.focusWidget()


def test_down_enter_escape_and_f2(make_window, filled_db, qtbot):
    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    window.activateWindow()
    field = window.browser.search.field
    table = window.browser.table
    editor = window.browser.detail.editor.content
    window.find_action.trigger()
    qtbot.waitUntil(lambda: focused() is field, timeout=5000)
    qtbot.keyClick(field, Qt.Key.Key_Down)
    assert focused() is table and table.currentIndex().row() == 0
    first = window.browser.model.memory_at(0).id
    qtbot.waitUntil(lambda: window.browser.detail.memory is not None
                    and window.browser.detail.memory.id == first, timeout=5000)
    qtbot.keyClick(table, Qt.Key.Key_Return)
    assert focused() is editor
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert focused() is table
    qtbot.keyClick(table, Qt.Key.Key_Down)
    qtbot.keyClick(table, Qt.Key.Key_F2)
    assert focused() is editor
    second = window.browser.model.memory_at(1).id
    qtbot.waitUntil(lambda: window.browser.detail.memory.id == second, timeout=5000)


def test_tab_leaves_the_table_and_f6_cycles_the_panes(make_window, filled_db, qtbot):
    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    window.activateWindow()
    table = window.browser.table
    table.setFocus()
    table.selectRow(0)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert focused() is not table  # Tab does not walk the cells
    order = [window.sidebar, window.browser.search.field, table, window.browser.detail.editor.content]
    window.sidebar.setFocus()
    seen = []
    for _ in range(4):
        window.next_pane_action.trigger()
        seen.append(focused())
    assert seen == [*order[1:], order[0]]
    window.previous_pane_action.trigger()
    assert focused() is order[3]
    assert window.next_pane_action.shortcut().toString() == "F6"
    assert window.previous_pane_action.shortcut().toString() == "Shift+F6"


def test_escape_from_any_field_of_the_detail_pane_and_its_lists(make_window, filled_db, qtbot):
    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    window.activateWindow()
    table, detail = window.browser.table, window.browser.detail
    table.setFocus()
    table.selectRow(2)
    qtbot.waitUntil(lambda: detail.memory is not None, timeout=5000)
    detail.editor.importance.setFocus()
    qtbot.keyClick(detail.editor.importance, Qt.Key.Key_Escape)
    assert focused() is table
    combo = detail.editor.type
    combo.setFocus()
    combo.showPopup()
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5000)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=5000)
    assert focused() is combo  # the list closed; the person is still on the field
    qtbot.keyClick(combo, Qt.Key.Key_Escape)
    assert focused() is table


def test_showing_a_memory_sends_none_of_the_panes_events_through_python(make_window, filled_db, qtbot):
    from ora_desktop.gui.keyboard import KeyboardPaths

    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    detail, model = window.browser.detail, window.browser.model
    with calls_of(KeyboardPaths.eventFilter, "watched") as seen:
        window.browser.table.selectRow(3)
        qtbot.waitUntil(lambda: detail.memory is not None and detail.memory.id == model.memory_at(3).id, timeout=5000)
        qtbot.wait(200)  # laid out and painted
    assert [w for w in seen if w is detail or detail.isAncestorOf(w)] == []


def test_escape_cancels_an_edit_and_nothing_is_saved(make_window, filled_db, qtbot):
    """Enter, type, Escape, Down: the typed text is dropped, not saved on leaving the row."""
    from .conftest import db_rows

    path = filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    window.activateWindow()
    table = window.browser.table
    detail = window.browser.detail
    editor = detail.editor.content
    table.setFocus()
    table.select_row(0)
    first = window.browser.model.memory_at(0)
    qtbot.waitUntil(lambda: detail.memory is not None and detail.memory.id == first.id, timeout=5000)
    qtbot.keyClick(table, Qt.Key.Key_Return)
    assert focused() is editor
    qtbot.keyClicks(editor, "typed by accident ")
    assert detail.editor.is_modified()
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert focused() is table
    assert not detail.editor.is_modified()
    assert editor.toPlainText() == first.content
    qtbot.keyClick(table, Qt.Key.Key_Down)
    second = window.browser.model.memory_at(1).id
    qtbot.waitUntil(lambda: detail.memory.id == second, timeout=5000)
    qtbot.wait(300)
    assert db_rows(path, "SELECT content FROM memories WHERE id = ?", (first.id,)) == [(first.content,)]
    assert not window.curator.undo_action.isEnabled()
