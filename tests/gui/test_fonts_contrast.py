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
        need = label.heightForWidth(label.width()) if label.wordWrap() else label.sizeHint().height()
        if need > label.height() + 1:
            cut.append(f"{label.objectName() or type(label).__name__} {label.text()[:40]!r}: {need} > "
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
    from ora_desktop.gui.memories.columns import column_index

    sync = column_index("sync")
    sync_width = window.browser.table.columnWidth(sync)
    before = QApplication.font()
    font = QFont(before)
    font.setPointSizeF(BIG)
    try:
        QApplication.setFont(font)  # what Qt does when the system's font setting changes
        line = QFontMetrics(font).height()
        qtbot.waitUntil(lambda: window.browser.table.rowHeight(0) >= line + 4, timeout=5000)
        assert QFontMetrics(detail.title.font()).height() > line
        grown = line / QFontMetrics(before).height()
        assert window.browser.table.columnWidth(sync) >= int(sync_width * grown) - 1  # "Synced" is not cut
        empty = [w for w in window.findChildren(QLabel) if w.objectName() == "EmptyState"]
        assert all(QFontMetrics(w.font()).height() >= line for w in empty)
        qtbot.waitUntil(lambda: detail.widget().width() <= detail.viewport().width(), timeout=5000)  # none cut right
        qtbot.waitUntil(lambda: cut_labels(detail) == [], timeout=5000)
        sidebar = window.sidebar
        assert sidebar.minimumWidth() >= sidebar.fontMetrics().horizontalAdvance("m" * 12)
        chip = window.browser.search.quick["low_health"]
        assert chip.sizeHint().width() >= QFontMetrics(font).horizontalAdvance(chip.text())
    finally:
        QApplication.setFont(before)


def luminance(colour) -> float:
    """WCAG 2 relative luminance of a QColor."""
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(colour.red()) + 0.7152 * channel(colour.green()) + 0.0722 * channel(colour.blue())


def ratio(a, b) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_pairs(palette):
    from PySide6.QtGui import QPalette

    R, G = QPalette.ColorRole, QPalette.ColorGroup
    pairs = [(R.Text, R.Base), (R.Text, R.AlternateBase), (R.WindowText, R.Window), (R.ButtonText, R.Button),
             (R.HighlightedText, R.Highlight), (R.ToolTipText, R.ToolTipBase), (R.PlaceholderText, R.Base),
             (R.Link, R.Base), (R.BrightText, R.Base), (R.BrightText, R.Window)]
    out = {f"{fg.name}/{bg.name}": ratio(palette.color(fg), palette.color(bg)) for fg, bg in pairs}
    for fg, bg in ((R.Text, R.Base), (R.WindowText, R.Window), (R.ButtonText, R.Button)):
        out[f"disabled {fg.name}/{bg.name}"] = ratio(palette.color(G.Disabled, fg), palette.color(G.Disabled, bg))
    return out


def test_view_high_contrast_meets_wcag_aa_is_kept_and_restyles_messages(make_window, filled_db, qtbot, qapp,
                                                                        settings):
    from ora_desktop.gui.contrast import SETTING, high_contrast_palette

    for dark in (False, True):  # both palettes: every text at least 4.5:1 on its background
        weak = {pair: round(r, 2) for pair, r in text_pairs(high_contrast_palette(dark)).items() if r < 4.5}
        assert weak == {}, (dark, weak)
    filled_db(5)
    window = make_window()
    ordinary = text_pairs(qapp.palette())
    assert not window.contrast.action.isChecked()
    window.contrast.action.trigger()  # View > High contrast
    assert settings.value(SETTING) in (True, "true")
    strong = text_pairs(qapp.palette())
    assert min(strong.values()) >= 4.5, strong
    messages = [w for w in window.findChildren(QLabel) if w.objectName() == "ValidationMessage"]
    assert messages and all("palette(bright-text)" in w.styleSheet() for w in messages)
    window.close()
    again = make_window(wait_for_rows=False)  # the choice is kept
    assert again.contrast.action.isChecked() and min(text_pairs(qapp.palette()).values()) >= 4.5
    again.contrast.action.trigger()
    assert text_pairs(qapp.palette()) == ordinary
    assert all("#c0392b" in w.styleSheet() for w in again.findChildren(QLabel) if w.objectName() == "ValidationMessage")
