"""``NoticeBar``: a dismissible line at the top of the window for things the person must not miss.

Status-bar messages vanish; a scheduled job that changed files, for example, is said here and stays
until dismissed. ``ctx.notice`` (a signal of the ``AppContext``) feeds it. The newest notice is
shown; "All notices" opens the list of every one since the last Dismiss (each names its file).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QListWidget, QPushButton, QSizePolicy, QWidget


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
        self.all_button = QPushButton("All notices")
        self.all_button.setCheckable(True)
        self.all_button.setToolTip("List every notice since the last Dismiss, newest first")
        self.all_button.toggled.connect(self._show_all)
        self.list = QListWidget()
        self.list.setAccessibleName("All notices")
        self.list.setAccessibleDescription("Every notice since the last Dismiss, newest first")
        self.list.setWordWrap(True)
        self.list.setMaximumHeight(160)
        self.list.hide()
        layout = QGridLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 0, 0)
        layout.addWidget(self.all_button, 0, 1, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.dismiss_button, 0, 2, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.list, 1, 0, 1, 3)
        layout.setColumnStretch(0, 1)
        self.hide()

    def add(self, text: str) -> None:
        """Show ``text`` (the newest notice first)."""
        self.notices.append(text)
        earlier = len(self.notices) - 1
        more = f"  ({earlier} earlier notice{'s' if earlier != 1 else ''})" if earlier else ""
        self.label.setText(text + more)
        self.setToolTip("\n".join(reversed(self.notices[-20:])))
        self.list.insertItem(0, text)
        self.all_button.setText(f"All notices ({len(self.notices)})")
        self.all_button.setVisible(bool(earlier))
        self.show()

    def _show_all(self, on: bool) -> None:
        self.list.setVisible(on)

    def dismiss(self) -> None:
        """Hide and forget every notice shown."""
        self.notices.clear()
        self.label.clear()
        self.list.clear()
        self.all_button.setChecked(False)
        self.setToolTip("")
        self.hide()
