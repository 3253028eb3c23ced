"""``ElidedLabel``: a one-line label that never asks for more width than it gets.

A plain ``QLabel`` asks for the width of its whole text, so a long status or search note used to
widen the window past the screen. This one draws as much as fits, ends with "…", and keeps the
whole text in its tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """A label whose text is cut with "…" to the width it is given (the tooltip has all of it)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, max_width: int = 0) -> None:
        super().__init__(text, parent)
        self._max_width = max_width
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setToolTip(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self.setToolTip(text if text else "")

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802
        hint = super().sizeHint()
        if self._max_width:
            hint.setWidth(min(hint.width(), self._max_width))
        return hint

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), text)
