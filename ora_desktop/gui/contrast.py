"""High-contrast colours: when the system asks for them (Qt's accessibility hints), or when the
person ticks View > High contrast (kept in settings; unticking it keeps the ordinary colours even
where the system asks).

Both palettes meet WCAG 2 AA (at least 4.5:1) for every text role on its background, disabled
text included: black on white with a dark-blue selection, or white on black with a yellow one.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Qt
from PySide6.QtGui import QAction, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

SETTING = "view/high_contrast"
R = QPalette.ColorRole

#: (role, light, dark): the high-contrast colours.
_COLOURS = (
    (R.Window, "#ffffff", "#000000"), (R.WindowText, "#000000", "#ffffff"),
    (R.Base, "#ffffff", "#000000"), (R.AlternateBase, "#f0f0f0", "#1a1a1a"),
    (R.Text, "#000000", "#ffffff"), (R.Button, "#f0f0f0", "#1a1a1a"), (R.ButtonText, "#000000", "#ffffff"),
    (R.ToolTipBase, "#ffffff", "#000000"), (R.ToolTipText, "#000000", "#ffffff"),
    (R.Highlight, "#00008b", "#ffff00"), (R.HighlightedText, "#ffffff", "#000000"),
    (R.Link, "#0000c0", "#80c8ff"), (R.LinkVisited, "#551a8b", "#d0a0ff"),
    (R.PlaceholderText, "#4a4a4a", "#b8b8b8"), (R.BrightText, "#a00000", "#ff8080"),
    # Fusion draws frames, check boxes and scroll bars from these: strong edges, not grey on grey.
    (R.Light, "#ffffff", "#ffffff"), (R.Midlight, "#d0d0d0", "#808080"), (R.Mid, "#404040", "#c0c0c0"),
    (R.Dark, "#000000", "#000000"), (R.Shadow, "#000000", "#000000"),
)
#: Disabled text: still 4.5:1 on its background.
_DISABLED = ("#595959", "#a6a6a6")


def high_contrast_palette(dark: bool) -> QPalette:
    """White on black (``dark``) or black on white, every text role at least 4.5:1."""
    palette = QPalette()
    pick = 2 if dark else 1
    for entry in _COLOURS:
        palette.setColor(entry[0], QColor(entry[pick]))
    for role in (R.Text, R.WindowText, R.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DISABLED[pick - 1]))
    return palette


def system_wants_high_contrast() -> bool:
    """Whether the platform asks for high contrast (Qt 6.10's accessibility hints)."""
    hints = QGuiApplication.styleHints()
    accessibility = getattr(hints, "accessibility", None)
    if accessibility is None:
        return False
    return accessibility().contrastPreference() == Qt.ContrastPreference.HighContrast


def chosen(settings: QSettings) -> bool:
    """The person's choice if they made one, else the system's."""
    value = settings.value(SETTING)
    if value is None:
        return system_wants_high_contrast()
    return str(value).lower() in ("true", "1")


class ContrastChoice(QObject):
    """View > High contrast: applies the choice now, keeps it, and follows the system while the
    person has not chosen."""

    def __init__(self, settings: QSettings, parent: QWidget) -> None:
        super().__init__(parent)
        self.settings = settings
        self.action = QAction("&High contrast", parent)
        self.action.setCheckable(True)
        self.action.setStatusTip("Black on white (or white on black) with strong edges; follows the system "
                                 "until you choose")
        self.action.setChecked(chosen(settings))
        self.action.toggled.connect(self._toggled)
        accessibility = getattr(QGuiApplication.styleHints(), "accessibility", None)
        if accessibility is not None:
            accessibility().contrastPreferenceChanged.connect(self._system_changed)
        self._apply(self.action.isChecked())

    def _toggled(self, on: bool) -> None:
        self.settings.setValue(SETTING, on)
        self._apply(on)

    def _system_changed(self, *_preference: object) -> None:
        if self.settings.value(SETTING) is None:
            self.action.blockSignals(True)
            self.action.setChecked(system_wants_high_contrast())
            self.action.blockSignals(False)
            self._apply(self.action.isChecked())

    @staticmethod
    def _apply(on: bool) -> None:
        from .theme import set_high_contrast

        app = QApplication.instance()
        if isinstance(app, QApplication):
            set_high_contrast(app, on)
