"""What a paint of the memory table costs in Python, and what the cheaper cells still show: the
narrow columns drawn by Qt's own delegate, the health bar as a cached pixmap, the selection read
from its ranges, the searched words' marks kept per text and width."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from ora_desktop.core.search import parse_query
from ora_desktop.gui.memories.columns import column_index
from ora_desktop.gui.memories.delegates import PaddedDelegate, highlight_color
from ora_desktop.gui.memories.health_bar import BAR_WIDTH, health_bar
from ora_desktop.gui.memories.model import MemoryTableModel
from ora_desktop.gui.memories.view import MemoryTable

from .python_calls import calls_of
from .test_memories import fetch_all_visible, loaded_model


def shown_table(ctx, qtbot, path, rows: int) -> tuple[MemoryTableModel, MemoryTable]:
    model = loaded_model(ctx, qtbot, path)
    table = MemoryTable(model)
    qtbot.addWidget(table)
    table.resize(1000, 500)
    table.show()
    qtbot.waitExposed(table)
    fetch_all_visible(model, qtbot, range(rows))
    return model, table


def test_only_the_content_column_is_painted_by_python(ctx, qtbot, filled_db):
    """Type, importance, health and sync are drawn by Qt's own delegate: a Python delegate cost a
    call into Python and a copy of the cell's options for every cell of every paint."""
    model, table = shown_table(ctx, qtbot, filled_db(30), 10)
    with calls_of(PaddedDelegate.paint, "index", lambda index: index.column()) as columns:
        table.viewport().repaint()
    assert columns, "the content cells are painted by their delegate"
    assert set(columns) == {column_index("content")}


def test_the_health_cell_shows_its_bar_and_value(ctx, qtbot, filled_db):
    model, table = shown_table(ctx, qtbot, filled_db(12), 12)
    health = column_index("health")
    for row in range(12):
        memory = model.memory_at(row)
        index = model.index(row, health)
        bar = model.data(index, Qt.ItemDataRole.DecorationRole)
        assert isinstance(bar, QPixmap) and not bar.isNull()
        assert bar.cacheKey() == health_bar(memory.health_score).cacheKey()  # drawn once, reused
        option = QStyleOptionViewItem()
        table.itemDelegateForIndex(index).initStyleOption(option, index)
        assert option.text == f"{memory.health_score:.2f}"  # the value beside its bar
        assert not option.icon.isNull()


def _fill_at(bar: QPixmap, fraction: float) -> QColor:
    image = bar.toImage()
    return QColor(image.pixel(round((image.width() - 1) * fraction), image.height() // 2))


def test_the_bar_fills_to_the_value_in_its_band_colour():
    green, amber, red = QColor("#2e9d57"), QColor("#e0a020"), QColor("#d0453a")
    full = health_bar(0.9)
    assert _fill_at(full, 0.5) == green and _fill_at(full, 0.8) == green
    assert _fill_at(full, 0.97) != green  # the track shows past 0.9
    assert _fill_at(health_bar(0.45), 0.3) == amber and _fill_at(health_bar(0.45), 0.6) != amber
    assert _fill_at(health_bar(0.2), 0.1) == red
    # A 0.304 is recalled (above the 0.30 threshold): amber, though it rounds to the 0.30 of a red bar.
    assert _fill_at(health_bar(0.304), 0.1) == amber and _fill_at(health_bar(0.30), 0.1) == red
    empty = health_bar(None)
    assert all(_fill_at(empty, f) not in (green, amber, red) for f in (0.1, 0.5, 0.9))
    assert health_bar(0.9).width() == round(BAR_WIDTH * health_bar(0.9).devicePixelRatio())


def test_the_bars_follow_a_change_of_scheme(qapp):
    from ora_desktop.gui.theme import apply_scheme

    light = _fill_at(health_bar(0.1), 0.9)
    apply_scheme(qapp, Qt.ColorScheme.Dark)
    try:
        dark = _fill_at(health_bar(0.1), 0.9)
        assert dark != light and dark == QApplication.palette().color(QApplication.palette().ColorRole.Mid)
    finally:
        apply_scheme(qapp, Qt.ColorScheme.Light)
    assert _fill_at(health_bar(0.1), 0.9) == light


def test_the_selection_is_counted_from_its_ranges(ctx, qtbot, filled_db):
    """Counting a selection of every row asks the model nothing (``selectedRows()`` asked for the
    column count, in Python, once per row: a million calls after Ctrl+A on a large file)."""
    model, table = shown_table(ctx, qtbot, filled_db(300), 5)
    table.selectAll()
    with calls_of(MemoryTableModel.columnCount, "self") as asked:
        assert table.selected_count() == 300
        assert table.selected_rows() == list(range(300))
    assert asked == []
    table.clearSelection()
    table.selectRow(7)
    for row in (2, 3, 4, 9):  # overlapping and separate ranges, picked out of order
        table.selectionModel().select(model.index(row, 0), table.selectionModel().SelectionFlag.Select
                                      | table.selectionModel().SelectionFlag.Rows)
    assert table.selected_rows() == [2, 3, 4, 7, 9] and table.selected_count() == 5


def _marked_columns(table: MemoryTable, index, width: int) -> list[int]:
    """The x positions painted in the marks' colour when ``index`` is drawn ``width`` pixels wide."""
    image = QImage(width, 24, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = image.rect()
    option.widget = table
    table.highlight.paint(painter, option, index)
    painter.end()
    mark = highlight_color()
    alpha = mark.alpha() / 255
    want = [round(c * alpha + 255 * (1 - alpha)) for c in (mark.red(), mark.green(), mark.blue())]
    return [x for x in range(width)
            if all(abs(a - b) < 25 for a, b in zip(QColor(image.pixel(x, 12)).getRgb()[:3], want, strict=True))]


def test_marks_follow_the_width_and_the_search(ctx, qtbot, seed_db):
    """The marks are kept per text and width: a narrower cell elides the match away, a wider one
    shows it again, and another search marks its own words."""
    path = seed_db([("a1", "a rather long opening phrase that ends with the word zebra", "fact", 5)])
    model, table = shown_table(ctx, qtbot, path, 1)
    index = model.index(0, column_index("content"))
    table.highlight.set_query(parse_query("zebra"))
    wide = _marked_columns(table, index, 600)
    assert wide, "the match is marked when it shows"
    assert _marked_columns(table, index, 160) == []  # elided: "zebra" is past the "…"
    assert _marked_columns(table, index, 600) == wide
    table.highlight.set_query(parse_query("opening"))
    other = _marked_columns(table, index, 600)
    assert other and max(other) < min(wide)  # "opening" comes before "zebra"
