"""Painting cells: the health bar, and text with the searched words highlighted."""

from __future__ import annotations

import re
from collections.abc import Iterable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ...core.schema import RECALL_THRESHOLD
from ..theme import is_dark
from .model import HEALTH_ROLE

Index = QModelIndex | QPersistentModelIndex


def health_color(value: float | None) -> QColor:
    """Red below the recall threshold, amber below 0.6, green above."""
    if value is None:
        return QColor("#8a8f98")
    if value <= RECALL_THRESHOLD:
        return QColor("#d0453a")
    if value < 0.6:
        return QColor("#e0a020")
    return QColor("#2e9d57")


def match_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Sorted, merged ``(start, end)`` spans where any term occurs (case-insensitive)."""
    words = [t for t in {t.strip() for t in terms} if t]
    if not words or not text:
        return []
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    spans: list[tuple[int, int]] = []
    for m in pattern.finditer(text):
        if spans and m.start() <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], m.end()))
        else:
            spans.append((m.start(), m.end()))
    return spans


def highlight_color() -> QColor:
    return QColor(150, 110, 0, 200) if is_dark() else QColor(255, 214, 64, 200)


class HealthDelegate(QStyledItemDelegate):
    """A small bar (width = health) with the value beside it."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        value = index.data(HEALTH_ROLE)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        if not text:
            return
        painter.save()
        rect = opt.rect.adjusted(6, 0, -6, 0)
        text_width = opt.fontMetrics.horizontalAdvance("0.00") + 6
        bar = QRect(rect.left(), rect.center().y() - 4, max(10, rect.width() - text_width), 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(opt.palette.color(QPalette.ColorRole.Mid))
        painter.drawRoundedRect(bar, 3, 3)
        if value is not None:
            filled = QRect(bar)
            filled.setWidth(max(2, int(bar.width() * max(0.0, min(1.0, float(value))))))
            painter.setBrush(health_color(value))
            painter.drawRoundedRect(filled, 3, 3)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        painter.setPen(opt.palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text))
        painter.drawText(QRect(bar.right() + 6, rect.top(), text_width, rect.height()),
                         int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text)
        painter.restore()


class HighlightDelegate(QStyledItemDelegate):
    """Elided text with the current search terms painted on a highlight."""

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.terms: tuple[str, ...] = ()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if not self.terms:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget).adjusted(3, 0, -3, 0)
        metrics = opt.fontMetrics
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setFont(opt.font)
        pen = opt.palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        if opt.index.data(Qt.ItemDataRole.ForegroundRole) is not None and not selected:
            pen = opt.index.data(Qt.ItemDataRole.ForegroundRole)
        x = rect.left()
        position = 0
        flags = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)
        for start, end in [*match_spans(shown, self.terms), (len(shown), len(shown))]:
            for piece, marked in ((shown[position:start], False), (shown[start:end], True)):
                if not piece:
                    continue
                width = metrics.horizontalAdvance(piece)
                box = QRect(x, rect.top(), width, rect.height())
                if marked:
                    painter.fillRect(box.adjusted(0, 2, 0, -2), highlight_color())
                painter.setPen(pen)
                painter.drawText(box, flags, piece)
                x += width
            position = end
        painter.restore()
