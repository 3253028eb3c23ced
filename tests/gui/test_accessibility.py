"""Every control of the window tells a screen reader what it is: a name and a description."""

from __future__ import annotations

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

CONTROLS = (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox, QAbstractItemView, QPlainTextEdit, QTextEdit)


def _qt_internal(widget: QWidget) -> bool:
    """Parts Qt builds inside its own widgets (headers, a combo's popup list, a field's clear
    button, a tab bar's scroll arrows, corner buttons): named by Qt, not by us."""
    parent = widget.parent()
    return (isinstance(widget, QHeaderView) or widget.objectName().startswith("qt_")
            or isinstance(parent, (QLineEdit, QTabBar))
            or (parent is not None and isinstance(parent.parent(), QComboBox)))


def _unnamed(window) -> list[str]:
    found = []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or _qt_internal(widget):
            continue
        face = QAccessible.queryAccessibleInterface(widget)
        name = face.text(QAccessible.Text.Name).strip() if face else ""
        description = face.text(QAccessible.Text.Description).strip() if face else ""
        if not name or not description:
            found.append(f"{type(widget).__name__} {widget.objectName()!r} in {type(widget.parent()).__name__}: "
                         f"name {name!r}, description {description!r}")
    return found


def test_every_control_has_an_accessible_name_and_description(make_window, filled_db, qtbot):
    filled_db(12)
    window = make_window()
    from ora_desktop.gui.panels import panel_classes

    every = {title for title, _cls in panel_classes()}
    qtbot.waitUntil(lambda: every <= set(window.panels), timeout=30000)  # every tab built
    missing = _unnamed(window)
    assert not missing, "\n".join(missing)
