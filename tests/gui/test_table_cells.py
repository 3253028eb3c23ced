"""The table's cells: search marks (CJK included), the snippet column, and editing importance, type
and expiry in place."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter, QStandardItemModel
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QSpinBox, QStyleOptionViewItem, QTableView

from ora_desktop.gui.memories.columns import column_index
from ora_desktop.gui.memories.delegates import highlight_color

from .conftest import wait_idle


def painted(table, index, width: int = 400) -> QImage:
    """``index``'s cell as its delegate paints it on white, ``width`` pixels wide."""
    image = QImage(width, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = image.rect()
    option.widget = table
    table.itemDelegateForColumn(index.column()).paint(painter, option, index)
    painter.end()
    return image


def marked_pixels(table, index, width: int = 400) -> int:
    """How many sampled pixels of ``index``'s painted cell show the highlight."""
    image = painted(table, index, width)
    mark = highlight_color()  # painted with its alpha over the white background
    alpha = mark.alpha() / 255
    want = [round(c * alpha + 255 * (1 - alpha)) for c in (mark.red(), mark.green(), mark.blue())]
    return sum(1 for x in range(0, width, 2) for y in (8, 12, 16)
               if all(abs(a - b) < 25 for a, b in zip(QColor(image.pixel(x, y)).getRgb()[:3], want, strict=True)))


def dark_pixels(table, index, width: int = 400) -> int:
    """How many pixels of ``index``'s painted cell hold text."""
    image = painted(table, index, width)
    return sum(1 for x in range(width) for y in range(24) if QColor(image.pixel(x, y)).lightness() < 128)


def test_a_cjk_match_is_marked_in_the_content_cell(make_window, seed_db, qtbot):
    seed_db([("c1", "部署前先运行数据库迁移", "fact", 5), ("c2", "nothing to see", "fact", 5)])
    window = make_window()
    browser = window.browser
    browser.controller.set_text("数据库", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1 and browser.model.memory_at(0) is not None,
                    timeout=10000)
    wait_idle(qtbot, window)
    delegate = browser.table.highlight
    title = browser.model.data(browser.model.index(0, 0))
    assert [title[a:b] for a, b in delegate.cache.spans(title)] == ["数据库"]
    assert marked_pixels(browser.table, browser.model.index(0, column_index("content"))) > 10


def test_the_matched_column_shows_the_searched_words_in_context(make_window, seed_db, qtbot):
    seed_db([("s1", "Weekly notes\n" + "filler words here " * 20 + "then the database migration failed twice",
              "fact", 5),
             ("s2", "Another note without it", "fact", 5)])
    window = make_window()
    browser, table = window.browser, window.browser.table
    snippet = column_index("snippet")
    assert table.isColumnHidden(snippet)  # one right-click away, like the other extra columns
    menu = table.column_menu(table)
    action = next(a for a in menu.actions() if a.text() == "Matched")
    action.trigger()
    assert not table.isColumnHidden(snippet)
    header = table.horizontalHeader()
    assert header.visualIndex(snippet) == header.visualIndex(column_index("content")) + 1
    wait_idle(qtbot, window)
    row = next(r for r in range(browser.model.rowCount()) if browser.model.memory_at(r).id == "s1")
    assert dark_pixels(table, browser.model.index(row, snippet)) == 0  # empty without a search
    browser.controller.set_text("migration", immediate=True)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1 and browser.model.memory_at(0) is not None,
                    timeout=10000)
    wait_idle(qtbot, window)
    content, matched = browser.model.index(0, column_index("content")), browser.model.index(0, snippet)
    assert marked_pixels(table, content) == 0  # the first line does not hold the match
    assert marked_pixels(table, matched) > 10  # the Matched cell shows it, marked
    option = _option(table)
    text, spans = table.snippets.marked_text(option, option, matched, 300)
    assert text.startswith("…") and "migration" in text
    assert [text[a:b] for a, b in spans()] == ["migration"]


def _option(table):
    option = QStyleOptionViewItem()
    table.initViewItemOption(option)
    option.widget = table
    return option


def test_a_layout_saved_before_the_matched_column_keeps_it_hidden(ctx, qtbot):
    from ora_desktop.gui.memories.model import MemoryTableModel
    from ora_desktop.gui.memories.view import SETTINGS_KEY, MemoryTable

    old = QTableView()  # a layout of the twelve columns there were, Type moved first
    source = QStandardItemModel(1, 12)
    old.setModel(source)
    old.horizontalHeader().moveSection(1, 0)
    ctx.settings.setValue(SETTINGS_KEY, old.horizontalHeader().saveState())
    table = MemoryTable(MemoryTableModel(ctx), ctx.settings)
    qtbot.addWidget(table)
    header = table.horizontalHeader()
    assert header.visualIndex(column_index("type")) == 0  # the person's layout is kept
    assert table.isColumnHidden(column_index("snippet"))
    assert header.visualIndex(column_index("snippet")) == header.visualIndex(column_index("content")) + 1


# ----------------------------------------------------------------- editing in place
def _db(path, sql, params=()):
    import sqlite3

    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


def _to_table(window, qtbot):
    """Keyboard only: Ctrl+F, then Down to the first row."""
    wait_idle(qtbot, window)
    window.activateWindow()
    window.find_action.trigger()
    field = window.browser.search.field
    qtbot.waitUntil(lambda: QApplication.focusWidget() is field, timeout=5000)
    qtbot.keyClick(field, Qt.Key.Key_Down)
    table = window.browser.table
    assert QApplication.focusWidget() is table
    return table


def _status(window):
    return window.statusBar().currentMessage()


def _to_cell(window, qtbot, key: str):
    """Keyboard only: to the first row, then Right to column ``key``; (table, memory shown there)."""
    table = _to_table(window, qtbot)
    for _ in range(3):
        if table.currentIndex().column() == column_index(key):
            break
        qtbot.keyClick(table, Qt.Key.Key_Right)
    assert table.currentIndex().column() == column_index(key)
    return table, window.browser.model.memory_at(0)


def test_importance_is_edited_in_its_cell_from_the_keyboard_in_one_undo_step(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    table, memory = _to_cell(window, qtbot, "importance")  # Right, Right: Content → Type → Imp.
    new = 2 if memory.importance != 2 else 3
    qtbot.keyClick(table, Qt.Key.Key_F2)
    editor = table.cells.editor
    assert isinstance(editor, QSpinBox) and editor.value() == memory.importance
    assert QApplication.focusWidget() in (editor, editor.findChild(QLineEdit))
    qtbot.keyClicks(QApplication.focusWidget(), str(new))
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _db(path, "SELECT importance FROM memories WHERE id=?", (memory.id,)) == [(new,)],
                    timeout=10000)
    assert table.cells.editor is None and QApplication.focusWidget() is table  # back to the table
    undo = window.curator.undo_action
    qtbot.waitUntil(lambda: undo.isEnabled() and "importance" in undo.text(), timeout=10000)  # named
    undo.trigger()  # one step undoes it
    qtbot.waitUntil(lambda: _db(path, "SELECT importance FROM memories WHERE id=?", (memory.id,))
                    == [(memory.importance,)], timeout=10000)
    qtbot.waitUntil(lambda: not undo.isEnabled(), timeout=10000)  # and it was the only step


def test_escape_cancels_a_cell_edit_and_the_detail_pane_still_opens_on_enter(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    table, memory = _to_cell(window, qtbot, "type")
    before = _db(path, "SELECT type, importance, updated_at FROM memories WHERE id=?", (memory.id,))
    qtbot.keyClick(table, Qt.Key.Key_F2)
    combo = table.cells.editor
    assert isinstance(combo, QComboBox) and combo.currentText() == memory.type
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # another type is chosen...
    assert combo.currentText() != memory.type
    qtbot.keyClick(combo, Qt.Key.Key_Escape)  # ...and dropped
    assert table.cells.editor is None and QApplication.focusWidget() is table
    assert "cancelled" in _status(window)
    qtbot.wait(300)
    assert _db(path, "SELECT type, importance, updated_at FROM memories WHERE id=?", (memory.id,)) == before
    qtbot.keyClick(table, Qt.Key.Key_Return)  # Enter still edits the memory in the detail pane
    assert QApplication.focusWidget() is window.browser.detail.editor.content


def test_type_is_chosen_from_the_seeds_types(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    table, memory = _to_cell(window, qtbot, "type")
    qtbot.keyClick(table, Qt.Key.Key_F2)
    combo = table.cells.editor
    assert [combo.itemText(i) for i in range(combo.count())] == ["fact", "preference", "context", "task",
                                                                  "conversation"]
    qtbot.keyClick(combo, Qt.Key.Key_Down if combo.currentIndex() < combo.count() - 1 else Qt.Key.Key_Up)
    chosen = combo.currentText()
    qtbot.keyClick(combo, Qt.Key.Key_Enter)
    qtbot.waitUntil(lambda: _db(path, "SELECT type FROM memories WHERE id=?", (memory.id,)) == [(chosen,)],
                    timeout=10000)


def test_expiry_takes_what_the_command_line_takes_and_a_bad_value_changes_nothing(make_window, filled_db, qtbot):
    from datetime import UTC, datetime, timedelta

    path = filled_db(12)
    window = make_window()
    table = window.browser.table
    table.set_column_visible(column_index("expires"), True)
    wait_idle(qtbot, window)
    memory = window.browser.model.memory_at(0)
    cell = window.browser.model.index(0, column_index("expires"))
    table.scrollTo(cell)
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(cell).center())
    line = table.cells.editor
    assert isinstance(line, QLineEdit) and line.text() == ""  # no expiry yet
    qtbot.keyClicks(line, "7d")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _db(path, "SELECT expires_at FROM memories WHERE id=?", (memory.id,))[0][0] is not None,
                    timeout=10000)
    stored = _db(path, "SELECT expires_at, updated_at FROM memories WHERE id=?", (memory.id,))[0]
    expires = datetime.fromisoformat(stored[0]).replace(tzinfo=UTC)
    assert abs(expires - (datetime.now(UTC) + timedelta(days=7))) < timedelta(minutes=5)
    qtbot.waitUntil(lambda: window.browser.model.memory_at(0).expires_at is not None, timeout=10000)
    table.setFocus()
    table.setCurrentIndex(cell)
    qtbot.keyClick(table, Qt.Key.Key_F2)
    line = table.cells.editor
    assert line.text() == stored[0]
    line.selectAll()
    qtbot.keyClicks(line, "soonish")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    message = _status(window)
    assert "Not saved" in message and "'soonish' is not a timestamp" in message and "\n" not in message
    qtbot.wait(300)
    assert _db(path, "SELECT expires_at, updated_at FROM memories WHERE id=?", (memory.id,))[0] == stored


def test_a_cell_edit_after_another_programs_write_is_refused(make_window, filled_db, qtbot):
    import subprocess
    import sys

    path = filled_db(12)
    window = make_window()
    table, memory = _to_cell(window, qtbot, "importance")
    theirs = 1 if memory.importance != 1 else 10
    qtbot.keyClick(table, Qt.Key.Key_F2)
    editor = table.cells.editor
    code = ("import ora_desktop, sys; s = ora_desktop.open_store(sys.argv[1]); "
            f"s.update(sys.argv[2], importance={theirs})")
    subprocess.run([sys.executable, "-c", code, str(path), memory.id], check=True)
    qtbot.waitUntil(lambda: window.browser.model.memory_at(0) is not None
                    and window.browser.model.memory_at(0).importance == theirs, timeout=10000)
    assert table.cells.editor is editor  # the row was repainted under the open editor
    editor.setValue(5 if theirs != 5 else 6)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Not saved" in _status(window), timeout=10000)
    assert "changed by another program" in _status(window)
    assert _db(path, "SELECT importance FROM memories WHERE id=?", (memory.id,)) == [(theirs,)]


def test_leaving_the_cell_saves_and_a_new_search_closes_the_editor_unsaved(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    table, memory = _to_cell(window, qtbot, "importance")
    new = 2 if memory.importance != 2 else 3
    qtbot.keyClick(table, Qt.Key.Key_F2)
    qtbot.keyClicks(QApplication.focusWidget(), str(new))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(window.browser.model.index(3, 0)).center())  # another row
    qtbot.waitUntil(lambda: _db(path, "SELECT importance FROM memories WHERE id=?", (memory.id,)) == [(new,)],
                    timeout=10000)
    assert table.cells.editor is None
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.browser.model.memory_at(0).importance == new, timeout=10000)  # repainted
    table.setFocus()
    table.setCurrentIndex(window.browser.model.index(0, column_index("importance")))
    memory = window.browser.model.memory_at(0)
    qtbot.keyClick(table, Qt.Key.Key_F2)
    qtbot.keyClicks(QApplication.focusWidget(), "7" if memory.importance != 7 else "8")
    window.browser.controller.set_text("deploys", immediate=True)  # the list is read again
    qtbot.waitUntil(lambda: table.cells.editor is None, timeout=10000)
    assert "closed unsaved" in _status(window)
    qtbot.wait(300)
    assert _db(path, "SELECT importance FROM memories WHERE id=?", (memory.id,)) == [(memory.importance,)]


def test_an_agents_insert_into_the_searched_list_keeps_the_open_cell_editor(make_window, filled_db, qtbot):
    """A search is read again when another program writes a memory it matches (an agent working
    beside the person, once a second). The open cell editor stays on its memory, with what was
    typed, and Enter saves it: it used to close unsaved at every such write."""
    import subprocess
    import sys

    path = filled_db(12)
    window = make_window()
    window.browser.controller.set_text("deploys", immediate=True)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 4 and window.browser.model.memory_at(0) is not None,
                    timeout=10000)
    table, memory = _to_cell(window, qtbot, "importance")
    new = 2 if memory.importance != 2 else 3
    qtbot.keyClick(table, Qt.Key.Key_F2)
    qtbot.keyClicks(QApplication.focusWidget(), str(new))
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO memories (id, content, "
            "type, importance, created_at, updated_at) VALUES ('agent-1', 'An agent note about deploys', 'fact', 5, "
            "datetime('now'), datetime('now'))\"); c.commit()")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 5, timeout=10000)  # the search read again
    wait_idle(qtbot, window)
    editor = table.cells.editor
    assert editor is not None and editor.value() == new and "closed unsaved" not in _status(window)
    assert window.browser.model.memory_at(table.cells._index.row()).id == memory.id
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _db(path, "SELECT importance FROM memories WHERE id=?", (memory.id,)) == [(new,)],
                    timeout=10000)
    subprocess.run([sys.executable, "-c", code.replace("agent-1", "agent-2"), str(path)], check=True)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 6, timeout=10000)
    wait_idle(qtbot, window)
    # The keyboard's cell is kept too: F2 on the next row edits its importance, not the content.
    assert table.currentIndex().column() == column_index("importance")
    qtbot.keyClick(table, Qt.Key.Key_Down)
    qtbot.keyClick(table, Qt.Key.Key_F2)
    assert isinstance(table.cells.editor, QSpinBox)
