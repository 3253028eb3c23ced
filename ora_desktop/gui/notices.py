"""``NoticeBar``: a dismissible line at the top of the window for things the person must not miss.

Status-bar messages vanish; a scheduled job that changed files, for example, is said here and stays
until dismissed. ``ctx.notice`` (a signal of the ``AppContext``) feeds it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget


class NoticeBar(QFrame):
    """Shows the latest notice (and how many came before it) until the person dismisses them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NoticeBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.notices: list[str] = []
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.setToolTip("Hide these notices (they are also in the Jobs tab's history)")
        self.dismiss_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def add(self, text: str) -> None:
        """Show ``text`` (the newest notice first)."""
        self.notices.append(text)
        earlier = len(self.notices) - 1
        more = f"  ({earlier} earlier notice{'s' if earlier != 1 else ''}: see the tooltip)" if earlier else ""
        self.label.setText(text + more)
        self.setToolTip("\n".join(reversed(self.notices[-20:])))
        self.show()

    def dismiss(self) -> None:
        """Hide and forget every notice shown."""
        self.notices.clear()
        self.label.clear()
        self.setToolTip("")
        self.hide()
