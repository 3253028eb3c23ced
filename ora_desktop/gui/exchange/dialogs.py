"""The export options dialog and the import preview dialog (opened with ``open()``, never
``exec()``: a qasync pitfall, ARCHITECTURE.md)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...core.exchange import FORMATS
from ...core.operations.export import EXPORT_FORMATS
from ...core.operations.importing import CONFLICT_POLICIES, ImportResult

SCOPES = {"file": "Every memory of the file", "selection": "The selected memories", "view": "What the list shows now"
          " (the current search results and filters)"}
_CONFLICTS = {"skip": "Keep the memory already in the file", "replace": "Replace it",
              "newer": "Replace it only when the imported one is newer",
              "changed": "Replace it only when its text changed"}


class ExportDialog(QDialog):
    """What to export and in which format; ``chosen(scope, format)`` when accepted."""

    chosen = Signal(str, str)

    def __init__(self, selected: int, shown: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export memories")
        self.scope = QComboBox()
        counts = {"selection": selected, "view": shown}
        for key, text in SCOPES.items():
            label = f"{text} ({counts[key]:,})" if key in counts else text
            self.scope.addItem(label, key)
            if key == "selection" and not selected:
                self.scope.model().item(self.scope.count() - 1).setEnabled(False)
        self.format = QComboBox()
        for key, text in zip(EXPORT_FORMATS, ("JSONL — every column, one memory a line",
                                              "CSV — every column, for spreadsheets",
                                              "Markdown — a review document grouped by type"), strict=True):
            self.format.addItem(text, key)
        form = QFormLayout()
        form.addRow("Export", self.scope)
        form.addRow("Format", self.format)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Choose file…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.accepted.connect(lambda: self.chosen.emit(self.scope.currentData(), self.format.currentData()))


class ImportPreviewDialog(QDialog):
    """The import preview: detected format, counts per type, conflicts, invalid rows and the
    first rows as they will look. Options re-run the preview (``options_changed``);
    ``confirmed`` when the user imports."""

    options_changed = Signal()
    confirmed = Signal()

    def __init__(self, source: Path, target: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Import {source.name}")
        self.resize(820, 520)
        self.source, self.target = source, target
        self.format = QComboBox()
        for key in FORMATS:
            self.format.addItem("Detect from the content" if key == "auto" else key, key)
        self.conflict = QComboBox()
        for key in CONFLICT_POLICIES:
            self.conflict.addItem(_CONFLICTS[key], key)
        self.local_only = QCheckBox("Never sync the imported memories (local_only)")
        self.messages = QCheckBox("context-memory: also import key messages")
        self.skip_bad = QCheckBox("Skip invalid rows (otherwise one invalid row stops the import)")
        for box in (self.format, self.conflict):
            box.currentIndexChanged.connect(lambda _i: self.options_changed.emit())
        for check in (self.local_only, self.messages, self.skip_bad):
            check.toggled.connect(lambda _c: self.options_changed.emit())
        self.summary = QLabel("Reading the source…")
        self.summary.setWordWrap(True)
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet("color: #c0392b;")
        self.problems.hide()
        self.rows = QTableWidget(0, 5)
        self.rows.setHorizontalHeaderLabels(["type", "importance", "created", "sync", "content"])
        self.rows.horizontalHeader().setStretchLastSection(True)
        self.rows.verticalHeader().hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.import_button.setText("Import")
        self.import_button.setEnabled(False)
        self.buttons.accepted.connect(self._confirm)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("From", QLabel(str(source)))
        form.addRow("Into", QLabel(str(target)))
        form.addRow("Format", self.format)
        form.addRow("Same id already there", self.conflict)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        for widget in (self.local_only, self.messages, self.skip_bad, self.summary, self.problems, self.rows,
                       self.buttons):
            layout.addWidget(widget)
        self.result: ImportResult | None = None

    def options(self) -> dict:
        """The chosen options as keyword arguments of ``import_memories`` (``format`` included)."""
        return {"format": self.format.currentData(), "on_conflict": self.conflict.currentData(),
                "skip_bad": self.skip_bad.isChecked(), "local_only": self.local_only.isChecked(),
                "messages": self.messages.isChecked()}

    def reading(self) -> None:
        self.summary.setText("Reading the source…")
        self.import_button.setEnabled(False)

    def show_preview(self, result: ImportResult) -> None:
        """Fill the preview from a dry run (which ran with ``skip_bad`` to list every bad row)."""
        self.result = result
        types = ", ".join(f"{t} {n:,}" for t, n in result.by_type.items()) or "none"
        self.summary.setText(
            f"Detected format: {result.format}. {result.added:,} new memories, {result.conflicts:,} already in the "
            f"file ({'replaced' if result.replaced else 'kept'}), {result.collapsed:,} duplicates collapsed. "
            f"By type: {types}.")
        bad = result.skipped
        if bad:
            lines = "\n".join(str(s) for s in bad[:8]) + (f"\n… and {len(bad) - 8} more" if len(bad) > 8 else "")
            verdict = "they will be skipped" if self.skip_bad.isChecked() else "nothing will be imported unless " \
                "you skip them"
            self.problems.setText(f"{len(bad):,} invalid rows ({verdict}):\n{lines}")
        self.problems.setVisible(bool(bad))
        self.rows.setRowCount(len(result.sample))
        for row, memory in enumerate(result.sample):
            created = memory.created_at.strftime("%Y-%m-%d %H:%M:%S") if memory.created_at else ""
            cells = (memory.type, memory.importance, created, memory.sync_status, memory.content.replace("\n", " ⏎ "))
            for column, value in enumerate(cells):
                self.rows.setItem(row, column, QTableWidgetItem("" if value is None else str(value)))
        can_import = (result.added + result.replaced) > 0 and (not bad or self.skip_bad.isChecked())
        self.import_button.setEnabled(can_import)

    def show_problem(self, message: str) -> None:
        """The source cannot be imported at all (no format, unreadable): say so."""
        self.result = None
        self.summary.setText(message)
        self.problems.hide()
        self.rows.setRowCount(0)
        self.import_button.setEnabled(False)

    def _confirm(self) -> None:
        self.confirmed.emit()
        self.accept()
