"""The table's cells: search marks (CJK included), the snippet column, and editing importance, type
and expiry in place."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage, QPainter, QStandardItemModel
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView

from ora_desktop.gui.memories.columns import column_index
from ora_desktop.gui.memories.delegates import highlight_color

from .conftest import wait_idle


def marked_pixels(table, index, width: int = 400) -> int:
    """How many sampled pixels of ``index``'s cell, painted by its delegate, show the highlight."""
    image = QImage(width, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = image.rect()
    option.widget = table
    table.itemDelegateForColumn(index.column()).paint(painter, option, index)
    painter.end()
    mark = highlight_color()  # painted with its alpha over the white background
    alpha = mark.alpha() / 255
    want = [round(c * alpha + 255 * (1 - alpha)) for c in (mark.red(), mark.green(), mark.blue())]
    return sum(1 for x in range(0, width, 2) for y in (8, 12, 16)
               if all(abs(a - b) < 25 for a, b in zip(QColor(image.pixel(x, y)).getRgb()[:3], want, strict=True)))


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


def dark_pixels(table, index, width: int = 400) -> int:
    """How many pixels of ``index``'s cell, painted by its delegate on white, hold text."""
    image = QImage(width, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = image.rect()
    option.widget = table
    table.itemDelegateForColumn(index.column()).paint(painter, option, index)
    painter.end()
    return sum(1 for x in range(width) for y in range(24) if QColor(image.pixel(x, y)).lightness() < 128)


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
