"""Fonts relative to the system's: a title 15 % larger than the text stays 15 % larger when the
person changes the system font size while the window is open.

A widget given a font of its own (``setFont`` with a point size) stops following the
application's font; :func:`relative_font` gives it one again at every ``fontChanged`` of the
application (what Qt emits when the platform's font changes).
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QObject
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QWidget

W = TypeVar("W", bound=QWidget)


class _Follower(QObject):
    """Sets its widget's font from the application's, scaled, now and at each change."""

    def __init__(self, widget: QWidget, factor: float, weight: QFont.Weight | None) -> None:
        super().__init__(widget)
        self.widget, self.factor, self.weight = widget, factor, weight
        QApplication.instance().fontChanged.connect(self.apply)
        self.apply()

    def apply(self, *_font: object) -> None:
        font = QFont(QApplication.font(self.widget))
        if self.factor != 1.0:
            font.setPointSizeF(font.pointSizeF() * self.factor)
        if self.weight is not None:
            font.setWeight(self.weight)
        self.widget.setFont(font)


def relative_font(widget: W, factor: float = 1.0, weight: QFont.Weight | None = None) -> W:
    """Give ``widget`` the application's font times ``factor`` (and ``weight``), kept so."""
    _Follower(widget, factor, weight)
    return widget
