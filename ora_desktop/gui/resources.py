"""Files from the repository's ``resources/`` folder: SVG icons, the style sheet, the .desktop file."""

from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtGui import QIcon

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
ICONS = RESOURCES / "icons"


@functools.cache
def icon(name: str) -> QIcon:
    """The SVG icon ``resources/icons/<name>.svg`` (an empty icon when it is missing)."""
    path = ICONS / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def app_icon() -> QIcon:
    return icon("ora-desktop")


def style_sheet(dark: bool = False) -> str:
    """The application-wide style sheet: ``resources/style-dark.qss`` for a dark scheme, else none
    (single widgets get theirs from ``theme.styled``)."""
    if not dark:
        return ""
    try:
        text = (RESOURCES / "style-dark.qss").read_text(encoding="utf-8")
    except OSError:
        return ""
    return text.replace("@ICONS@", ICONS.as_posix())
