"""The Task panel: what a spawned task agent was asked to do and what it produced.

Reads ``store.tasks()`` (the seed's ``task_context`` table) in a worker thread: a sortable table
of every task row, and the selected task's description, status, times, and its input and
output as pretty-printed JSON. Values that
are not valid JSON are shown exactly as stored, and say so.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ora_desktop.core import AgentFile, OraError, TaskContext

from ..a11y import describe
from ..fonts import relative_font
from ..formatting import first_line
from ..jobs.background import Latest
from ..jobs.widgets import LazyRefresh, cell, readonly_table
from ..sortable import filling, keyed, moment, sortable

TASK_ROLE = Qt.ItemDataRole.UserRole + 41
STATUS_MARKS = {"active": "● active", "completed": "✔ completed", "failed": "✖ failed"}


def pretty(raw: str | None) -> tuple[str, bool]:
    """(text to show, whether it is valid JSON): JSON indented, anything else as stored."""
    if raw is None or raw == "":
        return "", True
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError):
        return raw, False
    return json.dumps(parsed, indent=2, ensure_ascii=False), True


def when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else "—"


def load_tasks(ctx, path, current: object) -> tuple[list[TaskContext], str]:
    """The task rows of the file at ``path`` and the agent it reports to (worker thread)."""
    tasks = ctx.store_for(path).tasks()
    parent = ctx.home.parent_of(current) if isinstance(current, AgentFile) and current.is_task_agent else None
    return tasks, (parent.label if parent is not None else "")


class JsonBox(QGroupBox):
    """A titled, read-only, monospace JSON viewer with a Copy button."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # long strings wrap
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.copy = QPushButton("Copy")
        describe(self.copy, f"Copy {title}", f"Copy the {title.lower()} JSON to the clipboard")
        describe(self.text, title, f"The task's {title.lower()} as JSON")
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.text.toPlainText()))
        bar = QHBoxLayout()
        bar.addWidget(self.note, 1)
        bar.addWidget(self.copy)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addLayout(bar)

    def show_value(self, raw: str | None) -> None:
        text, valid = pretty(raw)
        self.text.setPlainText(text or "")
        self.text.setPlaceholderText("(nothing recorded)")
        self.note.setText("" if valid else "Not valid JSON — shown exactly as stored.")
        self.copy.setEnabled(bool(text))


class TaskView(LazyRefresh, QWidget):
    """Task description, status, input and output of the selected task agent."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.current = ctx.current
        self.tasks: list[TaskContext] = []
        self._latest = Latest()

        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)

        self.task_list = describe(sortable(readonly_table(["Status", "Task", "Started", "Completed", "Id"]), 2),
                                  "Tasks", "The task_context rows of this file, newest first (a click on a column "
                                  "header sorts by it); the selected task is shown below")
        self.task_list.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.task_list.horizontalHeader().setStretchLastSection(False)
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        relative_font(self.description, 1.15)
        self.status_label = QLabel()
        self.task_id = QLabel()
        self.task_id.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.started = QLabel()
        self.finished = QLabel()
        self.parent_label = QLabel()
        self.parent_label.setToolTip("The agent the promote job copies this task's important memories into")
        form = QFormLayout()
        form.addRow("Task:", self.description)
        form.addRow("Status:", self.status_label)
        form.addRow("Id:", self.task_id)
        form.addRow("Started:", self.started)
        form.addRow("Completed:", self.finished)
        form.addRow("Reports to:", self.parent_label)
        self.input_box = JsonBox("Input")
        self.output_box = JsonBox("Output")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.input_box)
        split.addWidget(self.output_box)

        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.addWidget(self.task_list)
        details_layout.addLayout(form)
        details_layout.addWidget(split, 1)

        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(details)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)

        self.task_list.itemSelectionChanged.connect(self._selected)
        ctx.current_changed.connect(self._on_current)
        ctx.data_changed.connect(self.request_refresh)
        self.init_lazy()

    def _on_current(self, current: object) -> None:
        self.current = current
        self.request_refresh()

    def refresh(self) -> asyncio.Task | None:
        """Reload the task rows of the selected file in the background."""
        return self._latest.start(self.reload())

    async def reload(self) -> list[TaskContext]:
        path = self.ctx.current_path()
        if path is None:
            self._message("Select a task agent (named task-…) in the sidebar to see its task.")
            return []
        try:
            tasks, parent = await self.ctx.run(load_tasks, self.ctx, path, self.current)
        except OraError as exc:
            self._message(f"Could not read the task: {exc}")
            return []
        self.tasks = tasks
        self.parent_label.setText(parent or "none found in this site (promote has nowhere to copy to)")
        if not tasks:
            agent = self.current if isinstance(self.current, AgentFile) else None
            task_agent = agent is not None and agent.is_task_agent
            name = agent.label if agent is not None else path.name
            self._message(
                f"{name} has no task recorded (its task_context table is empty or missing)." if task_agent
                else f"{name} is not a spawned task agent, so it has no task context."
            )
            return tasks
        self.task_list.blockSignals(True)
        with filling(self.task_list):
            self.task_list.setRowCount(len(tasks))
            for row, task in enumerate(tasks):
                status = cell(STATUS_MARKS.get(task.status or "", task.status or "unknown"))
                status.setData(TASK_ROLE, row)
                cells = (status, cell(first_line(task.task_description, 200), task.task_description),
                         keyed(when(task.created_at), moment(task.created_at)),
                         keyed(when(task.completed_at) if task.completed_at else "not finished",
                               moment(task.completed_at)), cell(task.id))
                for column, item in enumerate(cells):
                    self.task_list.setItem(row, column, item)
        self.task_list.blockSignals(False)
        self._fit_rows()
        self.task_list.selectRow(0)
        self._selected()
        self.stack.setCurrentIndex(1)
        return tasks

    def _fit_rows(self) -> None:
        """As tall as its rows, up to six (then it scrolls): the task's details get the rest."""
        table = self.task_list
        rows = sum(table.rowHeight(r) for r in range(min(table.rowCount(), 6)))
        table.setFixedHeight(table.horizontalHeader().sizeHint().height() + rows + 2 * table.frameWidth())

    def _selected(self) -> None:
        """Show the task of the selected row (whatever order the table is sorted in)."""
        rows = self.task_list.selectionModel().selectedRows()
        item = self.task_list.item(rows[0].row(), 0) if rows else None
        if item is not None:
            self._show_task(item.data(TASK_ROLE))

    def _show_task(self, row: int) -> None:
        if not 0 <= row < len(self.tasks):
            return
        task = self.tasks[row]
        self.description.setText(task.task_description)
        self.status_label.setText(STATUS_MARKS.get(task.status or "", task.status or "unknown"))
        self.task_id.setText(task.id)
        self.started.setText(when(task.created_at))
        self.finished.setText(when(task.completed_at) if task.completed_at else "not finished")
        self.input_box.show_value(task.input_raw)
        self.output_box.show_value(task.output_raw)

    def _message(self, text: str) -> None:
        self.tasks = []
        self.message.setText(text)
        self.stack.setCurrentIndex(0)
