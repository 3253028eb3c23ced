"""Render the application icon's PNG sizes from its SVG (run after changing the SVG; the PNGs are
committed): ``QT_QPA_PLATFORM=offscreen python packaging/render_icons.py``."""

from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "ora_desktop" / "resources" / "icons"
SIZES = (48, 64, 128, 256)
NAME = "org.ora.Desktop"


def render(size: int) -> Path:
    image = QImage(QSize(size, size), QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    QSvgRenderer(str(ICONS / "ora-desktop.svg")).render(painter)
    painter.end()
    target = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{NAME}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    image.save(str(target))
    return target


if __name__ == "__main__":
    app = QGuiApplication([])
    for size in SIZES:
        print(render(size))
