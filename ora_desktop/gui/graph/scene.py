"""Drawing a :class:`~ora_desktop.core.operations.neighbourhood.Neighbourhood` on a ``QGraphicsScene``.

Boxes are placed by ``layout.py`` (rings by distance, then relaxed so that no box overlaps
another and lines keep off boxes that are not theirs). ``related_to`` links are grey lines
(arrowed when one-way, one line for a two-way link, links pointing in included), supersession
is a blue dashed arrow from the old memory to the one replacing it, a typed link is a solid
arrow coloured by its type with the type written at its middle (``contradicts`` orange-red,
``supports`` green, ``derived-from`` purple, ``see-also`` teal, any other type brown),
anything on a cycle is red, and an id that names no memory is a red dashed box saying so.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSceneMouseEvent,
    QGraphicsSimpleTextItem,
    QWidget,
)

from ...core.operations.neighbourhood import RELATED, TYPED, GraphEdge, GraphNode, Neighbourhood
from ..formatting import first_line
from .layout import NODE_H, NODE_W, relax

COLOURS = {"related": "#7f8c8d", "superseded_by": "#2e86c1", "cycle": "#c0392b", "origin": "#1e8449",
           "selected": "#d68910", "missing": "#c0392b"}
#: Typed links by type (any other type: ``TYPE_COLOURS[""]``).
TYPE_COLOURS = {"contradicts": "#e74c3c", "supports": "#27ae60", "derived-from": "#8e44ad", "see-also": "#16a085",
                "": "#a0522d"}


def edge_colour(edge: GraphEdge) -> str:
    """The colour an edge is drawn in (before cycle and missing-memory marks)."""
    if edge.kind == TYPED:
        return TYPE_COLOURS.get(edge.label, TYPE_COLOURS[""])
    return COLOURS[edge.kind]


class NodeItem(QGraphicsRectItem):
    """One memory (or a missing id) as a box with its first words; clicks go to the scene."""

    def __init__(self, node: GraphNode, origin: bool, palette_text: QColor, base: QColor) -> None:
        super().__init__(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H)
        self.node = node
        self.origin = origin
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAcceptHoverEvents(True)
        memory = node.memory
        if memory is None:
            label = f"missing\n{node.id}"
            tip = f"{node.id}: no memory with this id in the file (a dangling link)"
        else:
            label = f"{first_line(memory.content, 60)}\n{memory.type or '?'} · {memory.importance} · {node.id}"
            tip = f"{node.id}\n{first_line(memory.content, 200)}\n{memory.type}, importance {memory.importance}, " \
                  f"health {memory.health_score}" + ("\nsuperseded" if memory.superseded_by else "")
        self.setToolTip(tip)
        text = QGraphicsSimpleTextItem(label, self)
        font = QFont(text.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        if origin:
            font.setBold(True)
        if memory is not None and memory.superseded_by:
            font.setItalic(True)
        text.setFont(font)
        metrics = QFontMetricsF(font)  # each line elided to the box (bold text is wider)
        text.setText("\n".join(metrics.elidedText(line, Qt.TextElideMode.ElideRight, NODE_W - 14)
                               for line in label.split("\n")))
        text.setBrush(QBrush(palette_text))
        bounds = text.boundingRect()
        text.setPos(-bounds.width() / 2, -bounds.height() / 2)
        self.setBrush(QBrush(base))
        self.set_selected(False)

    def set_selected(self, selected: bool) -> None:
        colour = COLOURS["selected"] if selected else COLOURS["origin"] if self.origin else (
            COLOURS["missing"] if self.node.dangling else "#95a5a6")
        pen = QPen(QColor(colour), 3.0 if (selected or self.origin) else 1.4)
        if self.node.dangling:
            pen.setStyle(Qt.PenStyle.DashLine)
        self.setPen(pen)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        scene = self.scene()
        if isinstance(scene, GraphScene) and event.button() == Qt.MouseButton.LeftButton:
            scene.clicked.emit(self.node.id)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        scene = self.scene()
        if isinstance(scene, GraphScene):
            scene.activated.emit(self.node.id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)


class GraphScene(QGraphicsScene):
    """The drawn neighbourhood; ``clicked(id)`` on a click, ``activated(id)`` on a double-click."""

    clicked = Signal(str)
    activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.nodes: dict[str, NodeItem] = {}
        self.edges: list[tuple[GraphEdge, QGraphicsPathItem]] = []
        #: Each typed edge's label item, by (source, target, type).
        self.labels: dict[tuple[str, str, str], QGraphicsSimpleTextItem] = {}

    def draw(self, graph: Neighbourhood, text: QColor, base: QColor,
             positions: dict[str, tuple[float, float]] | None = None) -> None:
        """Draw ``graph`` at ``positions`` (computed on a worker: :func:`graph_layout`), or lay it out here."""
        self.clear()
        self.nodes, self.edges, self.labels = {}, [], {}
        for node, (x, y) in (positions or graph_layout(graph)).items():
            position = QPointF(x, y)
            item = NodeItem(graph.node(node), node == graph.origin, text, base)
            item.setPos(position)
            item.setZValue(1)
            self.addItem(item)
            self.nodes[node] = item
        pairs = {(e.source, e.target, e.kind) for e in graph.edges}
        for edge in graph.edges:
            mutual = edge.kind == RELATED and (edge.target, edge.source, RELATED) in pairs
            if mutual and edge.source > edge.target:
                continue  # one line for a two-way link
            path = self._edge(edge, arrow=not mutual)
            self.addItem(path)
            self.edges.append((edge, path))
            if edge.kind == TYPED:
                self._label(edge, text)
        self.setSceneRect(self.itemsBoundingRect().adjusted(-40, -40, 40, 40))

    def select(self, memory_id: str | None) -> None:
        for node_id, item in self.nodes.items():
            item.set_selected(node_id == memory_id)

    def _edge(self, edge: GraphEdge, arrow: bool) -> QGraphicsPathItem:
        start, end = self.nodes[edge.source].pos(), self.nodes[edge.target].pos()
        line = QLineF(_border(start, end), _border(end, start))
        path = QPainterPath(line.p1())
        path.lineTo(line.p2())
        if arrow and line.length() > 1:
            angle = math.atan2(line.dy(), line.dx())
            tip = line.p2()
            wings = [QPointF(tip.x() - 11 * math.cos(angle + s), tip.y() - 11 * math.sin(angle + s))
                     for s in (0.4, -0.4)]
            path.addPolygon(QPolygonF([tip, wings[0], wings[1], tip]))
        dangling = self.nodes[edge.target].node.dangling
        colour = COLOURS["cycle"] if edge.cycle else COLOURS["missing"] if dangling else edge_colour(edge)
        pen = QPen(QColor(colour), 2.6 if edge.cycle else 1.6)
        if edge.kind not in (RELATED, TYPED) or dangling:
            pen.setStyle(Qt.PenStyle.DashLine)
        item = QGraphicsPathItem(path)
        item.setPen(pen)
        item.setBrush(QBrush(QColor(colour)))
        item.setToolTip(_edge_tip(edge) + (f" — {edge.target} does not exist" if dangling else ""))
        return item


    def _label(self, edge: GraphEdge, text: QColor) -> None:
        """The link's type, written at the middle of its line in the line's colour."""
        start, end = self.nodes[edge.source].pos(), self.nodes[edge.target].pos()
        label = QGraphicsSimpleTextItem(edge.label)
        label.setBrush(QBrush(QColor(edge_colour(edge))))
        box = label.boundingRect()
        label.setPos((start.x() + end.x() - box.width()) / 2, (start.y() + end.y() - box.height()) / 2)
        label.setZValue(2)
        label.setToolTip(_edge_tip(edge))
        self.addItem(label)
        self.labels[(edge.source, edge.target, edge.label)] = label


def _edge_tip(edge: GraphEdge) -> str:
    if edge.kind == TYPED:
        return f"{edge.source} {edge.label} {edge.target}"
    if edge.kind == RELATED:
        text = f"{edge.source} lists {edge.target} in related_to"
        return text + (" — part of a loop of links" if edge.cycle else "")
    text = f"{edge.source} is superseded by {edge.target}"
    return text + (" — a supersession cycle: no live memory" if edge.cycle else "")


def _border(centre: QPointF, toward: QPointF) -> QPointF:
    """Where the line from ``centre`` to ``toward`` leaves the node box around ``centre``."""
    dx, dy = toward.x() - centre.x(), toward.y() - centre.y()
    if dx == 0 and dy == 0:
        return centre
    scale = min(NODE_W / 2 / abs(dx) if dx else math.inf, NODE_H / 2 / abs(dy) if dy else math.inf)
    return QPointF(centre.x() + dx * scale, centre.y() + dy * scale)


def graph_layout(graph: Neighbourhood) -> dict[str, tuple[float, float]]:
    """Where each box of ``graph`` goes (no Qt: runs on a worker thread)."""
    return relax(graph.origin, [(n.id, n.depth) for n in graph.nodes], [(e.source, e.target) for e in graph.edges])


__all__ = ["GraphScene", "NodeItem", "graph_layout"]
