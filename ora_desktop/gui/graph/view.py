"""The Graph tab: the neighbourhood of a memory — related_to links and supersession chains to N hops.

It follows the memory selected in the Memories tab (or an id typed in), walks the graph on a
worker thread (``core.operations.neighbourhood``) and draws it (``scene.GraphScene``). Click a
memory to select it in the Memories table; double-click to put it in the middle. Missing ids
and cycles are drawn in red and counted under the graph.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...core import Memory, OraError
from ...core.operations.neighbourhood import MAX_HOPS, RELATED, Neighbourhood, neighbourhood
from ..a11y import describe as accessible
from ..jobs.background import Latest
from ..jobs.widgets import muted
from ..review.navigate import show_in_table
from .scene import GraphScene, graph_layout

LEGEND = ("<span style='color:#7f8c8d'>━ related_to</span> &nbsp; "
          "<span style='color:#2e86c1'>╌▶ superseded by</span> &nbsp; "
          "<span style='color:#c0392b'>red: missing id or cycle</span> &nbsp; "
          "typed links ━▶ <span style='color:#e74c3c'>contradicts</span> "
          "<span style='color:#27ae60'>supports</span> <span style='color:#8e44ad'>derived-from</span> "
          "<span style='color:#16a085'>see-also</span> <span style='color:#a0522d'>other</span> &nbsp; "
          "<span style='color:#1e8449'>▢ centre</span>")


def walk(ctx, path, memory_id: str, hops: int) -> tuple[Neighbourhood, dict[str, tuple[float, float]]]:  # noqa: ANN001
    """The neighbourhood of ``memory_id`` in the file at ``path`` and where its boxes go (worker thread)."""
    graph = neighbourhood(ctx.store_for(path), memory_id, hops)
    return graph, graph_layout(graph)


def describe(graph: Neighbourhood) -> str:
    """``7 memories, 6 links · 1 missing id (x) · 1 supersession cycle (a → b → a)``."""
    memories = sum(1 for n in graph.nodes if not n.dangling)
    links = sum(1 for e in graph.edges if e.kind == RELATED)
    chains = len(graph.edges) - links
    parts = [f"{memories} memor{'y' if memories == 1 else 'ies'}, {links} link{'s' * (links != 1)}, "
             f"{chains} supersession{'s' * (chains != 1)}"]
    if graph.dangling:
        parts.append(f"{len(graph.dangling)} missing id{'s' * (len(graph.dangling) != 1)} "
                     f"({', '.join(graph.dangling[:3])}{'…' if len(graph.dangling) > 3 else ''})")
    for cycle in graph.cycles:
        parts.append("supersession cycle " + " → ".join([*cycle, cycle[0]]))
    if any(e.cycle and e.kind == RELATED for e in graph.edges):
        parts.append("a loop of one-way related_to links")
    if graph.malformed:
        parts.append(f"related_to not a JSON array: {', '.join(graph.malformed[:3])}")
    if graph.truncated:
        parts.append("stopped at 300 memories: fewer hops show the rest")
    return " · ".join(parts)


class GraphView(QWidget):
    """See the module docstring."""

    def __init__(self, ctx, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setObjectName("GraphView")
        self.ctx = ctx
        self.graph: Neighbourhood | None = None
        self._latest = Latest()
        self._pending: str | None = None  # the id to show when the tab is next visible
        self._navigating: str | None = None  # a selection we caused: do not re-centre on it
        #: The id the person asked for here (typed, or a double-click); the table's selection
        #: replaces it only once the person selects a row there themselves.
        self._asked: str | None = None

        self.memory_id = QLineEdit()
        self.memory_id.setPlaceholderText("memory id (or select one in the Memories tab)")
        self.hops = QSpinBox()
        self.hops.setRange(1, MAX_HOPS)
        self.hops.setValue(2)
        self.hops.setPrefix("hops ")
        self.follow = QCheckBox("Follow the table's selection")
        self.follow.setChecked(True)
        self.show_button = QPushButton("Show")
        self.fit_button = QPushButton("Fit")
        accessible(self.hops, "Hops", "How many links away from the memory the graph reaches")
        accessible(self.follow, "Follow the table's selection", "Show the graph of the memory selected in the table")
        accessible(self.show_button, "Show", "Draw the neighbourhood of the memory id")
        accessible(self.fit_button, "Fit", "Zoom so the whole graph shows")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("&Memory:", buddy=self.memory_id))
        bar.addWidget(self.memory_id, 1)
        bar.addWidget(self.hops)
        bar.addWidget(self.follow)
        bar.addWidget(self.show_button)
        bar.addWidget(self.fit_button)

        self.scene = GraphScene(self)
        self.view = QGraphicsView(self.scene)
        self.view.setObjectName("GraphCanvas")
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.view.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.legend = muted(QLabel(LEGEND))
        self.legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.legend)

        self.show_button.clicked.connect(lambda _c=False: self.ask(self.memory_id.text().strip()))
        self.memory_id.returnPressed.connect(lambda: self.ask(self.memory_id.text().strip()))
        self.hops.valueChanged.connect(lambda _v: self.graph and self.show_id(self.graph.origin))
        self.fit_button.clicked.connect(lambda _c=False: self.fit())
        self.scene.clicked.connect(self.navigate)
        self.scene.activated.connect(self.ask)
        ctx.current_changed.connect(self._file_changed)
        ctx.data_changed.connect(self._data_changed)
        browser = ctx.window.browser if ctx.window is not None else None
        self._table = browser.table if browser is not None else None
        if browser is not None:
            browser.table.current_memory.connect(self._table_selection)
            current = browser.detail.memory
            if current is not None:
                self._pending = current.id
        self.summary.setText("Select a memory in the Memories tab, or type its id, to see its links.")

    # ----------------------------------------------------------------- what to show
    def _table_selection(self, memory: Memory | None) -> None:
        memory_id = memory.id if memory is not None else None
        if not memory_id or not self.follow.isChecked():
            return
        if self._asked and (self._table is None or not self._table.isVisible()):
            return  # the table moved by itself (its first automatic selection, a reload): keep the asked id
        self._asked = None
        if memory_id == self._navigating:  # our own click selected it
            self._navigating = None
            return
        if self.isVisible():
            self.show_id(memory_id)
        else:
            self._pending = memory_id

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if self._pending:
            memory_id, self._pending = self._pending, None
            self.show_id(memory_id)

    def _file_changed(self, _current: object) -> None:
        self.graph = None
        self._asked = None
        self.scene.clear()
        self.scene.nodes, self.scene.edges = {}, []
        self.summary.setText("Select a memory in the Memories tab, or type its id, to see its links.")

    def _data_changed(self, _change: object) -> None:
        if self.graph is not None and self.isVisible():
            self.show_id(self.graph.origin)

    def ask(self, memory_id: str) -> asyncio.Task | None:
        """The person asked for ``memory_id`` (typed it, or double-clicked it): show it, and keep it
        until they select a row in the table themselves."""
        self._asked = memory_id or None
        return self.show_id(memory_id)

    def show_id(self, memory_id: str) -> asyncio.Task | None:
        """Walk and draw the neighbourhood of ``memory_id`` in the selected file."""
        if not memory_id:
            return None
        self.memory_id.setText(memory_id)
        return self._latest.start(self._show(memory_id))

    async def _show(self, memory_id: str) -> Neighbourhood | None:
        path = self.ctx.current_path()
        if path is None:
            self.summary.setText("Select an agent on the left first.")
            return None
        try:
            graph, positions = await self.ctx.run(walk, self.ctx, path, memory_id, self.hops.value())
        except OraError as exc:
            self.summary.setText(str(exc))
            return None
        self.graph = graph
        palette = self.palette()
        self.scene.draw(graph, palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base),
                        positions)
        self.summary.setText(describe(graph))
        self.fit()
        return graph

    def fit(self) -> None:
        """Show the whole graph (never blown up past natural size)."""
        rect = self.scene.sceneRect()
        if rect.isEmpty():
            return
        self.view.resetTransform()
        view = self.view.viewport().rect()
        if rect.width() > view.width() or rect.height() > view.height():
            self.view.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        self.view.centerOn(rect.center())

    # ----------------------------------------------------------------- clicks
    def navigate(self, memory_id: str) -> None:
        """A click: select the memory in the Memories table (the graph stays as it is)."""
        self.scene.select(memory_id)
        node = self.graph.node(memory_id) if self.graph else None
        if node is not None and node.dangling:
            self.ctx.status.emit(f"{memory_id}: no memory with this id in the file (a dangling link)")
            return
        self._navigating = memory_id
        if show_in_table(self.ctx, memory_id, switch_tab=False):
            self.ctx.status.emit(f"Selected {memory_id} in the Memories tab (double-click to centre the graph on it)")
