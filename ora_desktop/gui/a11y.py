"""Accessible names and descriptions: what a screen reader says for each control.

``describe(widget, name, description)`` sets both; a test walks the whole window and fails on any
control a screen reader would announce as nothing (``tests/gui/test_accessibility.py``).
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget


def describe(widget: QWidget, name: str, description: str) -> QWidget:
    """Give ``widget`` the ``name`` a screen reader announces and a one-sentence ``description``."""
    widget.setAccessibleName(name)
    widget.setAccessibleDescription(description)
    return widget
