"""Small widget helpers shared by the Jobs, Backups, Charts and Task panels."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QHideEvent, QPalette, QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem

from ..formatting import relative


def readonly_table(headers: list[str]) -> QTableWidget:
    """A read-only, single-row-selection table whose last column stretches."""
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def cell(text: str, tip: str = "", colour: str | None = None) -> QTableWidgetItem:
    """A table item with an optional tooltip and text colour."""
    item = QTableWidgetItem(text)
    if tip:
        item.setToolTip(tip)
    if colour:
        item.setForeground(QColor(colour))
    return item


def muted(label: QLabel) -> QLabel:
    """Secondary text: the palette's placeholder colour (follows light and dark themes)."""
    palette = label.palette()
    palette.setColor(QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.PlaceholderText))
    label.setPalette(palette)
    return label


def local_time(moment: datetime) -> str:
    """``Nov 22 15:33 (just now)`` in local time: lists of runs and backups read best with real times."""
    return f"{moment.astimezone():%b %d %H:%M} ({relative(moment)})"


class LazyRefresh:
    """Mixin for a panel ``QWidget`` with a ``refresh()``: work only for what a person can see.

    ``request_refresh()`` refreshes shortly (bursts of changes coalesce into one refresh) when the
    panel is visible, and otherwise marks it stale so it refreshes when next shown — a hidden
    Charts tab does not rescan a million rows each time an agent writes.
    """

    def init_lazy(self, delay_ms: int = 250) -> None:
        self._stale = True
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(delay_ms)
        self._debounce.timeout.connect(self._refresh_now)

    def request_refresh(self, *_args: object) -> None:
        if self.isVisible():
            self._debounce.start()
        else:
            self._stale = True

    def _refresh_now(self) -> None:
        self._stale = False
        self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802
        """A refresh due while the panel hides (or closes) waits until it is shown again."""
        if self._debounce.isActive():
            self._debounce.stop()
            self._stale = True
        super().hideEvent(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if self._stale:
            self._refresh_now()
