"""The Charts panel: health, types, growth, sync status and importance vs health.

Scope is the selected agent, its site, or every agent in ``ORA_HOME``. Aggregates are computed in
a worker thread (:mod:`ora_desktop.core.operations.stats`); only the finished numbers reach the GUI thread.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCharts import QChart, QChartView
from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ora_desktop.core import AgentFile, OraError, OraHome, open_store
from ora_desktop.core.operations.stats import ChartData, chart_data

from ..a11y import describe
from ..context import path_of
from ..jobs.background import Latest
from ..jobs.widgets import LazyRefresh
from . import builders

SCOPES = (("agent", "This agent"), ("site", "This site"), ("all", "Everything"))
CHARTS = (
    ("health", builders.health_chart),
    ("types", builders.types_chart),
    ("growth", builders.growth_chart),
    ("sync", builders.sync_chart),
    ("scatter", builders.scatter_chart),
)


def scope_files(home: OraHome, current: object, scope: str) -> tuple[str, list[Path]]:
    """(label, files) for a scope; runs in a worker thread (it lists ``ORA_HOME``)."""
    path = path_of(current)
    if scope == "all":
        files = [agent.path for agent in home.agents()]
        if path is not None and path not in files:
            files.append(path)
        return f"every agent ({len(files)} files)", files
    if path is None:
        return "", []
    agent = current if isinstance(current, AgentFile) else None
    site = agent.site if agent is not None else None
    if scope == "site" and site is not None:
        found = next((s for s in home.sites() if s.slug == site), None)
        files = [a.path for a in found.agents] if found else [path]
        return f"site {site} ({len(files)} files)", files
    label = agent.label if agent is not None else path.name
    return (label if scope == "agent" else f"{label} (not in a site)"), [path]


def load(home: OraHome, current: object, scope: str) -> ChartData:
    """Every aggregate for a scope, opening each file read-only for the duration (worker thread)."""
    label, files = scope_files(home, current, scope)
    opened = []

    def opener(path: Path):
        store = open_store(path, readonly=True)
        opened.append(store)
        return store

    try:
        return chart_data(label, files, opener)
    finally:
        for store in opened:
            store.close()


class ChartsView(LazyRefresh, QWidget):
    """Five charts for the chosen scope; refreshes when the selection or the data changes."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.current = ctx.current
        self.data: ChartData | None = None
        self.charts: dict[str, QChart] = {}
        self._latest = Latest()

        self.scope = QComboBox()
        for key, label in SCOPES:
            self.scope.addItem(label, key)
        self.scope.setToolTip("Which memories the charts count")
        self.summary = QLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QPushButton("Refresh")
        describe(self.refresh_button, "Refresh charts", "Count again and redraw the charts")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Scope:"))
        bar.addWidget(self.scope)
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.refresh_button)

        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        grid_host = QWidget()
        self.grid = QGridLayout(grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.views: dict[str, QChartView] = {}
        for index, (name, _build) in enumerate(CHARTS):
            self.charts[name] = QChart()
            view = QChartView(self.charts[name])
            view.setRenderHint(QPainter.RenderHint.Antialiasing)
            view.setMinimumSize(280, 220)
            view.setObjectName(f"chart-{name}")
            if name == "scatter":
                view.setToolTip("Each point is every memory with that importance and health (to 0.02); points are "
                                "spread sideways around their importance so they do not hide each other")
            self.views[name] = view
            row, column = divmod(index, 2)
            span = 2 if name == "scatter" else 1
            self.grid.addWidget(view, row, column, 1, span)
        # The charts keep a readable size (their labels need it); on a small screen they scroll.
        scroller = QScrollArea()
        scroller.setWidget(grid_host)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(scroller)

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)

        self.scope.currentIndexChanged.connect(lambda _i: self.refresh())
        self.refresh_button.clicked.connect(self.refresh)
        ctx.current_changed.connect(self._on_current)
        ctx.data_changed.connect(self.request_refresh)
        self._show_message("Loading…")
        self.init_lazy()

    # ------------------------------------------------------------------ loading
    def _on_current(self, current: object) -> None:
        self.current = current
        self.request_refresh()

    def refresh(self) -> asyncio.Task | None:
        """Recompute the charts in the background (a newer refresh supersedes this one)."""
        return self._latest.start(self.reload())

    async def reload(self) -> ChartData | None:
        scope = self.scope.currentData()
        if scope != "all" and self.current is None:
            self.data = None
            self._show_message("Select an agent in the sidebar, or choose “Everything” as the scope.")
            return None
        self.summary.setText("Counting…")
        try:
            data = await self.ctx.run(load, self.ctx.home, self.current, scope)
        except OraError as exc:
            self._show_message(f"Could not read the memories: {exc}")
            return None
        self.show_data(data)
        return data

    # ------------------------------------------------------------------ drawing
    def show_data(self, data: ChartData) -> None:
        """Redraw every chart from ``data`` (GUI thread)."""
        self.data = data
        problems = "" if not data.problems else f" — {len(data.problems)} file(s) could not be read"
        self.summary.setText(f"{data.total:,} memories in {data.scope}{problems}")
        self.summary.setToolTip("\n".join(data.problems))
        if data.empty:
            text = f"No memories in {data.scope} yet." if data.scope else "Nothing to chart."
            if data.problems:
                text += "\n\n" + "\n".join(data.problems)
            self._show_message(text)
            return
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        for name, build in CHARTS:
            build(self.charts[name], data, dark)
        self.stack.setCurrentIndex(1)

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.summary.setText("")
        self.stack.setCurrentIndex(0)
