"""Light or dark, following the system (Qt 6.5+ ``styleHints().colorScheme()``), live; high
contrast on request (``gui/contrast.py``)."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from .resources import style_sheet

W = TypeVar("W")


def is_dark() -> bool:
    """Whether the system asks for a dark scheme (or the palette already is dark)."""
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    """A Fusion-friendly dark palette (for platforms whose style has none of its own)."""
    p = QPalette()
    base, window, text = QColor(30, 31, 34), QColor(43, 45, 48), QColor(223, 225, 229)
    for role, color in (
        (QPalette.ColorRole.Window, window), (QPalette.ColorRole.WindowText, text),
        (QPalette.ColorRole.Base, base), (QPalette.ColorRole.AlternateBase, QColor(37, 38, 42)),
        (QPalette.ColorRole.Text, text), (QPalette.ColorRole.Button, window),
        (QPalette.ColorRole.ButtonText, text), (QPalette.ColorRole.ToolTipBase, QColor(60, 63, 65)),
        (QPalette.ColorRole.ToolTipText, text), (QPalette.ColorRole.Highlight, QColor(53, 116, 240)),
        (QPalette.ColorRole.HighlightedText, QColor(255, 255, 255)), (QPalette.ColorRole.Link, QColor(110, 160, 255)),
        (QPalette.ColorRole.PlaceholderText, QColor(140, 143, 150)), (QPalette.ColorRole.Mid, QColor(70, 72, 76)),
        (QPalette.ColorRole.Midlight, QColor(58, 60, 64)),
        # Fusion draws check boxes and frames from these: without them they vanish on dark.
        (QPalette.ColorRole.Light, QColor(120, 124, 132)), (QPalette.ColorRole.Dark, QColor(20, 21, 23)),
        (QPalette.ColorRole.Shadow, QColor(0, 0, 0)), (QPalette.ColorRole.BrightText, QColor(255, 90, 90)),
    ):
        p.setColor(role, color)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(120, 122, 128))
    return p


def apply_theme(app: QApplication) -> None:
    """Use Fusion with a light or dark palette matching the system, and follow changes."""
    app.setStyle("Fusion")
    hints = QGuiApplication.styleHints()
    apply_scheme(app, hints.colorScheme())
    if not app.property("oraThemeHooked"):  # a Qt dynamic property: connect once per application
        hints.colorSchemeChanged.connect(lambda scheme: apply_scheme(app, scheme))
        app.setProperty("oraThemeHooked", True)


def set_high_contrast(app: QApplication, on: bool) -> None:
    """Switch the high-contrast palette (``gui/contrast.py``) on or off, keeping light or dark."""
    if bool(app.property("oraHighContrast")) == on:
        return
    app.setProperty("oraHighContrast", on)
    apply_scheme(app, QGuiApplication.styleHints().colorScheme())


def apply_scheme(app: QApplication, scheme: Qt.ColorScheme) -> None:
    """The dark palette for a dark system scheme, the style's own palette otherwise.

    The light scheme sets no application-wide style sheet: one would route every widget through
    Qt's style-sheet style, which made building the window three times slower (12 -> 40 ms,
    blocking the GUI thread at launch). The few widgets that want a touch get it from
    :func:`styled`. The dark scheme does need one (Fusion draws check boxes invisibly on a
    dark base), so a dark launch pays that cost.
    """
    from .memories.delegates import highlight_color
    from .memories.health_bar import forget_bars

    dark = scheme == Qt.ColorScheme.Dark
    if app.property("oraHighContrast"):
        from .contrast import high_contrast_palette

        app.setPalette(high_contrast_palette(dark))
    else:
        app.setPalette(dark_palette() if dark else app.style().standardPalette())
    forget_bars()  # the bars' track is drawn in the palette's colours
    highlight_color.cache_clear()
    app.setStyleSheet(style_sheet(dark))
    restyle(app)  # single widgets' sheets follow (their colours differ in high contrast)


def restyle(app: QApplication, *_font: object) -> None:
    """Set every :func:`styled` widget's sheet again: for the colours now in use, and after a font
    change (a widget with a style sheet keeps the font it was polished with until then)."""
    for widget in app.allWidgets():
        name = widget.objectName()
        if name in WIDGET_SHEETS and widget.property("oraStyled"):
            widget.setStyleSheet("")
            widget.setStyleSheet(sheet(name))


#: Style sheets for single widgets, by the widget's object name (see :func:`styled`).
WIDGET_SHEETS = {
    "EmptyState": "QLabel { color: palette(placeholder-text); }",  # 15 % larger than the text: styled()
    "ValidationMessage": "QLabel { color: #c0392b; font-weight: 600; }",
    "WarningMessage": "QLabel { color: #a35200; font-weight: 600; }",
    "QuickFilter": (
        "QToolButton { padding: 2px 8px; border-radius: 9px; border: 1px solid palette(mid); }"
        "QToolButton:checked { background: palette(highlight); color: palette(highlighted-text);"
        " border-color: palette(highlight); }"
    ),
}


#: In high contrast, messages take the palette's strong colours (WCAG AA on their background).
HIGH_CONTRAST_SHEETS = {
    "ValidationMessage": "QLabel { color: palette(bright-text); font-weight: 600; }",
    "WarningMessage": "QLabel { color: palette(text); font-weight: 600; }",
    "QuickFilter": WIDGET_SHEETS["QuickFilter"].replace("palette(mid)", "palette(text)"),
}


def sheet(name: str) -> str:
    """The style sheet of widgets named ``name``, for the colours now in use."""
    app = QApplication.instance()
    if app is not None and app.property("oraHighContrast") and name in HIGH_CONTRAST_SHEETS:
        return HIGH_CONTRAST_SHEETS[name]
    return WIDGET_SHEETS[name]


def styled(widget: W, name: str) -> W:
    """Name ``widget`` and give it that name's style sheet (:func:`sheet`), kept up to date when
    the colours change."""
    widget.setObjectName(name)
    widget.setStyleSheet(sheet(name))
    widget.setProperty("oraStyled", True)
    app = QApplication.instance()
    if app is not None and not app.property("oraRestyleHooked"):  # once per application
        app.fontChanged.connect(lambda font: restyle(app, font))
        app.setProperty("oraRestyleHooked", True)
    if name == "EmptyState":
        from .fonts import relative_font

        relative_font(widget, 1.15)
    return widget
