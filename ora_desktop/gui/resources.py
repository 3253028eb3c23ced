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
    """``resources/style.qss`` (plus ``style-dark.qss`` for a dark scheme); empty if missing."""
    parts = []
    for name in ("style.qss", "style-dark.qss") if dark else ("style.qss",):
        try:
            parts.append((RESOURCES / name).read_text(encoding="utf-8"))
        except OSError:
            continue
    return "\n".join(parts).replace("@ICONS@", ICONS.as_posix())
