"""The first run: no ``~/.ora`` yet — offer to open a file or create a demo site."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from .a11y import describe
from .resources import app_icon


class Welcome(QWidget):
    """Shown instead of the browser while ORA_HOME has no sites and no file is open."""

    open_file = Signal()
    create_demo = Signal()

    def __init__(self, home_root: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Welcome")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        logo = QLabel()
        logo.setPixmap(app_icon().pixmap(96, 96))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(logo)
        title = QLabel("<h2>Welcome to Ora Desktop</h2>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        self.text = QLabel(
            f"There are no Ora memory files in <b>{home_root}</b> yet.<br>"
            "Open an agent's <code>.site.db</code> file from anywhere, or create a demo site to look around "
            "(three sites, a few agents and a finished task agent, all made-up data).")
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.text.setMaximumWidth(560)
        self.text.setMinimumWidth(420)  # a word-wrapped label in a stretch row shrinks to a sliver
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.text)
        row.addStretch(1)
        layout.addLayout(row)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.open_button = QPushButton("Open a file…")
        self.demo_button = QPushButton("Create demo site")
        describe(self.open_button, "Open a file", "Open a .site.db file from anywhere")
        describe(self.demo_button, "Create demo site", "Write a demo site with a few agents to look around")
        self.demo_button.setDefault(True)
        self.open_button.clicked.connect(self.open_file)
        self.demo_button.clicked.connect(self.create_demo)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.demo_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.status = QLabel()
        self.status.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.status)
        layout.addStretch(2)
