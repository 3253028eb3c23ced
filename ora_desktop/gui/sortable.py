"""Items of read-only tables that sort by what a cell means, not by its text: a relative time
("3 h ago") by the moment, a step number as a number. A cell given a key (:func:`keyed`) sorts
by it; cells without one sort by their text."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem, QTreeWidget, QTreeWidgetItem

SORT_ROLE = Qt.ItemDataRole.UserRole + 90
T = TypeVar("T", QTableWidget, QTreeWidget)


def _less(mine: Any, theirs: Any, mine_text: str, their_text: str) -> bool:
    # PySide6 routes super().__lt__ back to this override (endless recursion): text is compared here
    if mine is not None and theirs is not None:
        try:
            return mine < theirs
        except TypeError:  # keys of different kinds: the text decides
            pass
    return mine_text.casefold() < their_text.casefold()


class KeyedItem(QTableWidgetItem):
    """A table cell sorted by its :data:`SORT_ROLE` key when it and the other cell have one."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return _less(self.data(SORT_ROLE), other.data(SORT_ROLE), self.text(), other.text())


class KeyedTreeItem(QTreeWidgetItem):
    """A tree row sorted, in the sorted column, by that cell's :data:`SORT_ROLE` key."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        tree = self.treeWidget()
        column = tree.sortColumn() if tree is not None else 0
        return _less(self.data(column, SORT_ROLE), other.data(column, SORT_ROLE), self.text(column),
                     other.text(column))


def moment(when: datetime | None) -> float | None:
    """A time as a sort key (seconds since the epoch; None sorts by the text)."""
    return when.timestamp() if when is not None else None


def keyed(text: str, key: Any, tip: str = "") -> KeyedItem:
    """A table cell showing ``text`` and sorting by ``key``."""
    item = KeyedItem(text)
    item.setData(SORT_ROLE, key)
    if tip:
        item.setToolTip(tip)
    return item


def sortable(view: T, column: int, order: Qt.SortOrder = Qt.SortOrder.DescendingOrder) -> T:
    """Let a person sort ``view`` by clicking a column header, sorted at first by ``column``
    (fill it inside :func:`filling`, so rows stay where they are put while it fills)."""
    header = view.header() if isinstance(view, QTreeWidget) else view.horizontalHeader()
    header.setSortIndicator(column, order)
    view.setSortingEnabled(True)
    return view


class filling:  # noqa: N801 (used as a context manager, like a function)
    """``with filling(view):`` fill a sortable view (rows stay where they are put), then sort it
    again by the column and order the person chose."""

    def __init__(self, view: QTableWidget | QTreeWidget) -> None:
        self.view = view

    def __enter__(self) -> None:
        self.view.setSortingEnabled(False)

    def __exit__(self, *_exc: object) -> None:
        self.view.setSortingEnabled(True)
