"""Small widget helpers shared by the Jobs and Backups panels."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtGui import QColor, QPalette
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
