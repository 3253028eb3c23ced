"""The dry-run preview: what a job would change, and a confirm step before the real run.

Opened with ``open()`` (window-modal, no nested event loop); the caller connects ``accepted``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ora_desktop.core.maintenance import JOBS, JobReport

from .data import counts_text

#: Rows listed in the dialog; the rest are counted ("and 1,234 more").
SHOWN = 2000


class PreviewDialog(QDialog):
    """Lists the dry run's ``would_change`` (memory id, summary); "Run …" confirms."""

    def __init__(self, report: JobReport, label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report = report
        self.setWindowTitle(f"Preview: {report.job} on {label}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.resize(760, 460)
        changes = report.would_change
        spec = JOBS.get(report.job)
        if not changes:
            self.resize(560, 220)
        if changes:
            total = report.would_change_count
            noun = "memory" if total == 1 else "memories"
            listed = f" (the first {len(changes):,} listed)" if total > len(changes) else ""
            headline = f"Running {report.job} on {label} would change {total:,} {noun}{listed}:"
        else:
            headline = f"Running {report.job} on {label} would change nothing right now."
        self.headline = QLabel(headline)
        self.headline.setWordWrap(True)
        what = report.message or counts_text(report.counts)
        detail = " ".join(_sentence(part) for part in (spec.description if spec else "", what) if part)
        self.detail = QLabel(detail)
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.table = QTableWidget(min(len(changes), SHOWN), 2)
        self.table.setHorizontalHeaderLabels(["Memory", "What would change"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        for row, (memory_id, summary) in enumerate(changes[:SHOWN]):
            self.table.setItem(row, 0, QTableWidgetItem(memory_id))
            item = QTableWidgetItem(summary)
            item.setToolTip(summary)
            self.table.setItem(row, 1, item)
        self.table.setVisible(bool(changes))
        self.table.setCurrentIndex(QModelIndex())  # no focus frame on the first cell
        self.nothing = QLabel("Nothing to list: running it now would not change any memory.")
        self.nothing.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.nothing.setVisible(not changes)
        self.more = QLabel(f"… and {len(changes) - SHOWN:,} more." if len(changes) > SHOWN else "")
        self.more.setVisible(len(changes) > SHOWN)

        buttons = QDialogButtonBox()
        self.confirm: QPushButton = buttons.addButton(f"Run {report.job}", QDialogButtonBox.ButtonRole.AcceptRole)
        self.confirm.setToolTip("Run the job for real now (deleted memories can be restored from the trash)")
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.confirm.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.detail)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.nothing, 1)
        layout.addWidget(self.more)
        layout.addWidget(buttons)


def _sentence(text: str) -> str:
    """``would delete 3`` -> ``Would delete 3.``"""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "…")) else ".")
