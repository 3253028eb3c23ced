"""The window follows the system's font size and offers high-contrast colours: with a 16 pt
application font the rows, the sidebar's names and the detail pane grow and no label is cut;
the high-contrast palette meets WCAG AA (4.5:1) for every text on its background."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication, QLabel

from .conftest import wait_idle

BIG = 16.0


@pytest.fixture
def big_font(qapp):
    """The platform's font at 16 pt, as a person who set a large system font has it."""
    before = QApplication.font()
    font = QFont(before)
    font.setPointSizeF(BIG)
    QApplication.setFont(font)
    yield QFontMetrics(font)
    QApplication.setFont(before)


def cut_labels(root) -> list[str]:
    """Visible labels whose text needs more height (or, not wrapping, more width) than they have."""
    cut = []
    for label in root.findChildren(QLabel):
        if not label.isVisible() or not label.text() or label.pixmap() is not None and not label.pixmap().isNull():
            continue
        hint = label.sizeHint()
        if hint.height() > label.height() + 1:
            cut.append(f"{label.objectName() or type(label).__name__} {label.text()[:40]!r}: {hint.height()} > "
                       f"{label.height()} high")
    return cut


def test_a_16pt_system_font_grows_rows_sidebar_names_and_the_detail_pane(make_window, filled_db, qtbot, big_font):
    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    line = big_font.height()
    table = window.browser.table
    assert table.rowHeight(0) >= line + 4  # a row holds a 16 pt line
    sidebar = window.sidebar
    site = sidebar.topLevelItem(0)
    agent = site.child(0)
    assert sidebar.visualItemRect(agent).height() >= line
    assert sidebar.fontMetrics().height() >= line
    table.select_row(0)
    detail = window.browser.detail
    qtbot.waitUntil(lambda: detail.title.text() != "No memory selected", timeout=10000)
    qtbot.wait(50)
    assert QFontMetrics(detail.title.font()).height() > line  # the title, larger than the text
    assert cut_labels(detail) == []
    assert cut_labels(window.browser.search) == []
    assert cut_labels(window.statusBar()) == []


def test_a_font_changed_while_the_window_is_open_is_followed(make_window, filled_db, qtbot, qapp):
    filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    window.browser.table.select_row(0)
    detail = window.browser.detail
    qtbot.waitUntil(lambda: detail.title.text() != "No memory selected", timeout=10000)
    before = QApplication.font()
    font = QFont(before)
    font.setPointSizeF(BIG)
    try:
        QApplication.setFont(font)  # what Qt does when the system's font setting changes
        line = QFontMetrics(font).height()
        qtbot.waitUntil(lambda: window.browser.table.rowHeight(0) >= line + 4, timeout=5000)
        assert QFontMetrics(detail.title.font()).height() > line
        empty = [w for w in window.findChildren(QLabel) if w.objectName() == "EmptyState"]
        assert all(QFontMetrics(w.font()).height() >= line for w in empty)
        qtbot.wait(50)
        assert cut_labels(detail) == []
    finally:
        QApplication.setFont(before)
