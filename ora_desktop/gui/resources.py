"""The package's data files (``ora_desktop/resources``): SVG icons and the dark style sheet,
read with :mod:`importlib.resources` so they are found in a wheel, a checkout or a bundle."""

from __future__ import annotations

import atexit
import contextlib
import functools
from importlib import resources
from pathlib import Path

from PySide6.QtGui import QIcon

from ..core.desktop_files import APP_ID  # the desktop entry, metainfo and PNG icons are named for it

APP_ICON = "ora-desktop"


@functools.cache
def resource_dir() -> Path:
    """The resources folder as a real path (Qt loads icons and style-sheet images by path); a
    zipped install is extracted once for the life of the process."""
    stack = contextlib.ExitStack()
    atexit.register(stack.close)
    return stack.enter_context(resources.as_file(resources.files("ora_desktop.resources")))


@functools.cache
def icon(name: str) -> QIcon:
    """The SVG icon ``resources/icons/<name>.svg`` (an empty icon when it is missing)."""
    path = resource_dir() / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


@functools.cache
def app_icon() -> QIcon:
    """The application icon: its rendered PNG sizes (48-256 px), the SVG when they are missing."""
    result = QIcon()
    for png in sorted((resource_dir() / "icons" / "hicolor").glob(f"*/apps/{APP_ID}.png")):
        result.addFile(str(png))
    return result if not result.isNull() else icon(APP_ICON)


def style_sheet(dark: bool = False) -> str:
    """The application-wide style sheet: ``resources/style-dark.qss`` for a dark scheme, else none
    (single widgets get theirs from ``theme.styled``)."""
    if not dark:
        return ""
    try:
        text = (resource_dir() / "style-dark.qss").read_text(encoding="utf-8")
    except OSError:
        return ""
    return text.replace("@ICONS@", (resource_dir() / "icons").as_posix())
