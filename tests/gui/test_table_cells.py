"""The table's cells: search marks (CJK included), the snippet column, and editing importance, type
and expiry in place."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem

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
