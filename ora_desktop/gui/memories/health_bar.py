"""The health bar: a small pixmap per value (to the hundredth) and palette, shown by the item
views' own C++ delegate as the cell's decoration beside the value.

Painting the bar in a Python delegate cost a call into Python and a dozen calls back into Qt per
cell on every paint; a cached pixmap costs one dictionary lookup in the model's ``multiData``.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPixmap

from ...core.schema import RECALL_THRESHOLD

#: The bar's size in device-independent pixels (the Health column's default width leaves it room
#: beside "0.00").
BAR_WIDTH, BAR_HEIGHT = 26, 8
#: No value, at or below the recall threshold, below 0.6, and above.
_BAND_COLORS = ("#8a8f98", "#d0453a", "#e0a020", "#2e9d57")
_bars: dict[tuple[int | None, int], QPixmap] = {}  # by (percent, band), for the current palette


def _band(value: float | None) -> int:
    if value is None:
        return 0
    if value <= RECALL_THRESHOLD:
        return 1
    return 2 if value < 0.6 else 3


def health_color(value: float | None) -> QColor:
    """Red at or below the recall threshold, amber below 0.6, green above (grey: no value)."""
    return QColor(_BAND_COLORS[_band(value)])


def forget_bars() -> None:
    """Draw the bars again from now on (the palette or the screen's scale changed)."""
    _bars.clear()


def health_bar(value: float | None) -> QPixmap:
    """The bar for ``value`` (0 to 1; ``None``: an empty track), drawn once per value, then
    reused until :func:`forget_bars`. Its colour is the exact value's (a 0.304 is recalled, so it
    is amber though it shows as 0.30)."""
    percent = None if value is None else round(max(0.0, min(1.0, float(value))) * 100)
    key = (percent, _band(value))
    bar = _bars.get(key)
    if bar is None:
        screen = QGuiApplication.primaryScreen()
        track = QGuiApplication.palette().color(QPalette.ColorRole.Mid)
        bar = _bars[key] = _draw(percent, QColor(_BAND_COLORS[key[1]]), track,
                                 screen.devicePixelRatio() if screen else 1.0)
    return bar


def _draw(percent: int | None, fill: QColor, track: QColor, scale: float) -> QPixmap:
    bar = QPixmap(round(BAR_WIDTH * scale), round(BAR_HEIGHT * scale))
    bar.setDevicePixelRatio(scale)
    bar.fill(Qt.GlobalColor.transparent)
    painter = QPainter(bar)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(track)
    painter.drawRoundedRect(QRectF(0, 0, BAR_WIDTH, BAR_HEIGHT), 3, 3)
    if percent is not None:
        painter.setBrush(fill)
        painter.drawRoundedRect(QRectF(0, 0, max(2.0, BAR_WIDTH * percent / 100), BAR_HEIGHT), 3, 3)
    painter.end()
    return bar
