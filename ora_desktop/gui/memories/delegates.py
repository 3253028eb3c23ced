"""Painting cells: padded text, and text with the searched words highlighted (the health bar is a
pixmap the model hands the default delegate, see :mod:`.health_bar`)."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable

from PySide6.QtCore import QMargins, QModelIndex, QPersistentModelIndex, QPoint, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ...core.search import highlight
from ...core.search.query import ParsedQuery, Term
from ..theme import is_dark
from .model import DISPLAY, MEMORY_ROLE

Index = QModelIndex | QPersistentModelIndex

#: The memory table's cell padding (left and right, top and bottom), drawn by its delegates. A
#: ``QTableView::item { padding }`` style sheet drew the same, but it sends every cell of every
#: paint through Qt's style-sheet style: a fifth of a table paint's instructions.
CELL_PADDING = (6, 2)


def query_of_terms(terms: Iterable[str]) -> ParsedQuery:
    """A query marking any of ``terms`` (words, or phrases when they hold spaces)."""
    words = tuple(dict.fromkeys(t.strip() for t in terms if t and t.strip()))
    group = tuple(Term(w, "phrase" if " " in w else "word") for w in words)
    return ParsedQuery(groups=(group,) if group else ())


def match_spans(text: str, terms: Iterable[str] | ParsedQuery) -> list[tuple[int, int]]:
    """Sorted, merged ``(start, end)`` spans where the search matches ``text``: core's stem-aware
    spans (a search for ``running`` marks ``runs``), from a query or a list of terms."""
    parsed = terms if isinstance(terms, ParsedQuery) else query_of_terms(terms)
    if not parsed.groups or not text:
        return []
    return _merged(highlight.match_spans(text, parsed))


def _merged(found: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


class SpanCache:
    """Spans of one search per shown text, computed when a row is painted and kept (bounded)."""

    def __init__(self, size: int = 2000) -> None:
        self.query = ParsedQuery()
        self.size = size
        self._spans: OrderedDict[str, list[tuple[int, int]]] = OrderedDict()

    def set_query(self, query: ParsedQuery) -> None:
        if query != self.query:
            self.query = query
            self._spans.clear()

    def __contains__(self, text: object) -> bool:
        return text in self._spans

    def spans(self, text: str) -> list[tuple[int, int]]:
        found = self._spans.get(text)
        if found is None:
            self.fill([text])
            return self._spans.get(text, [])
        self._spans.move_to_end(text)
        return found

    def fill(self, texts: Iterable[str]) -> None:
        """Compute the spans of every text not cached yet in one FTS5 statement (a screenful of
        rows costs about what one row costs)."""
        missing = [t for t in dict.fromkeys(texts) if isinstance(t, str) and t not in self._spans]
        if not missing:
            return
        if not self.query.groups:
            found: list = [[] for _ in missing]
        else:
            found = highlight.fts_spans_many(missing, self.query) if highlight_fts() else None
            if found is None:
                found = [highlight.python_spans(t, self.query) for t in missing]
        for text, spans in zip(missing, found, strict=True):
            self._spans[text] = _merged(spans)
        while len(self._spans) > self.size:
            self._spans.popitem(last=False)


def highlight_fts() -> bool:
    """Whether spans come from FTS5 (as the index matched), else from core's light stemmer."""
    from ...core.search.sidecar import fts5_available

    return fts5_available()


def visible_texts(option: QStyleOptionViewItem, index: Index, whole: bool = False) -> list[str]:
    """The display texts of the rows of ``index``'s column on screen in ``option.widget``
    (``whole``: their memories' whole content)."""
    view = option.widget
    model = index.model()
    if view is None or model is None or not hasattr(view, "indexAt"):
        return []
    height = view.viewport().height()
    first = view.indexAt(QPoint(1, 1)).row()
    last = view.indexAt(QPoint(1, max(1, height - 2))).row()
    first = max(0, first)
    last = model.rowCount(index.parent()) - 1 if last < 0 else last
    texts = []
    for row in range(first, min(last, first + 200) + 1):
        value = model.index(row, index.column(), index.parent()).data(MEMORY_ROLE if whole else DISPLAY)
        if whole:
            value = getattr(value, "content", None)
        if isinstance(value, str):
            texts.append(value)
    return texts


@functools.cache
def highlight_color() -> QColor:
    """The marks' colour for the current scheme (forgotten when the palette changes)."""
    return QColor(150, 110, 0, 200) if is_dark() else QColor(255, 214, 64, 200)


_SELECTED = QStyle.StateFlag.State_Selected.value
_LEFT_MIDDLE = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)


class PaddedDelegate(QStyledItemDelegate):
    """Draws a cell's text, icon and focus frame inside ``padding`` (x, y); the row's background
    (alternate colour, selection) still fills the whole cell. (The memory table shows the focus
    frame whenever it has focus: ``MemoryTable.initViewItemOption``.)"""

    def __init__(self, parent=None, padding: tuple[int, int] = (0, 0)) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.padding = padding
        self._margins = QMargins(padding[0], padding[1], padding[0], padding[1])

    def padded(self, option: QStyleOptionViewItem) -> QStyleOptionViewItem:
        """A copy of ``option`` whose rect is the cell's inside its padding."""
        opt = QStyleOptionViewItem(option)
        if self.padding != (0, 0):
            opt.rect = option.rect.marginsRemoved(self._margins)
        return opt

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        super().paint(painter, self.padded(option) if self.padding != (0, 0) else option, index)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        return super().sizeHint(option, index).grownBy(self._margins)


class HighlightDelegate(PaddedDelegate):
    """Elided text with the current search's matches painted on a highlight: core's stem-aware
    spans, computed only for the rows painted and cached per text."""

    def __init__(self, parent=None, padding: tuple[int, int] = (0, 0)) -> None:  # noqa: ANN001
        super().__init__(parent, padding)
        self._terms: tuple[str, ...] = ()
        self.cache = SpanCache()
        #: (shown text, marks) by (text, width, italic), for the current search (see _layout).
        self._layouts: dict[tuple[str, int, bool], tuple[str, list[tuple[int, int]]]] = {}

    @property
    def terms(self) -> tuple[str, ...]:
        """The searched terms (setting them highlights them as words and phrases)."""
        return self._terms

    @terms.setter
    def terms(self, terms: tuple[str, ...]) -> None:
        self._terms = tuple(terms)
        self._set_query(query_of_terms(self._terms))

    def set_query(self, query: ParsedQuery) -> None:
        """Highlight what ``query`` matches (its prefixes and phrases as the index matched them)."""
        self._terms = query.terms
        self._set_query(query)

    def _set_query(self, query: ParsedQuery) -> None:
        if query != self.cache.query:
            self._layouts.clear()
        self.cache.set_query(query)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if not self.cache.query.groups:
            super().paint(painter, option, index)
            return
        opt = self.padded(option)
        self.initStyleOption(opt, index)  # the palette's Text is the row's foreground, if any
        style = opt.widget.style() if opt.widget else QApplication.style()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget).adjusted(3, 0, -3, 0)
        text, spans = self.marked_text(opt, option, index, rect.width())
        opt.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        if not text:
            return
        shown, marks = self._layout(text, rect.width(), opt, spans)
        painter.save()
        if marks:
            color = highlight_color()
            top, height = rect.top() + 2, rect.height() - 4
            for x, width in marks:
                painter.fillRect(rect.left() + x, top, width, height, color)
        selected = bool(opt.state.value & _SELECTED)
        painter.setFont(opt.font)
        painter.setPen(opt.palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text))
        painter.drawText(rect, _LEFT_MIDDLE, shown)  # one run of text: shaped once, not per piece
        painter.restore()

    def marked_text(self, opt: QStyleOptionViewItem, option: QStyleOptionViewItem, index: Index,
                    width: int) -> tuple[str, Callable[[], list[tuple[int, int]]]]:
        """The cell's text and how to find its matches' spans (asked only when not laid out yet)."""
        text = opt.text

        def spans() -> list[tuple[int, int]]:
            if text not in self.cache:  # a miss computes the spans of the whole screenful at once
                self.cache.fill([text, *visible_texts(option, index)])
            return self.cache.spans(text)

        return text, spans

    def _layout(self, text: str, width: int, opt: QStyleOptionViewItem,
                spans: Callable[[], list[tuple[int, int]]]) -> tuple[str, list[tuple[int, int]]]:
        """The text as shown in ``width`` pixels (elided) and the marks behind its matches, as
        (x, width) from the text's left; kept per text, width and font for the current search."""
        key = (text, width, opt.font.italic())
        found = self._layouts.get(key)
        if found is not None:
            return found
        metrics = opt.fontMetrics
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
        end_of_shown = len(shown) - 1 if shown != text else len(shown)  # the "…" of an elided text
        marks = []
        for start, end in spans():
            end = min(end, end_of_shown)
            if start < end:
                x = metrics.horizontalAdvance(shown[:start])
                marks.append((x, metrics.horizontalAdvance(shown[:end]) - x))
        if len(self._layouts) > 2000:
            self._layouts.clear()
        self._layouts[key] = (shown, marks)
        return shown, marks


class SnippetDelegate(HighlightDelegate):
    """The Matched column: the searched words in context, as the command line shows them (core's
    :func:`~ora_desktop.core.search.highlight.snippet` around the first match, sized to the
    cell), marked; empty without a search. Spans are computed for the rows painted only, a
    screenful in one statement, and kept per memory text."""

    def __init__(self, parent=None, padding: tuple[int, int] = (0, 0)) -> None:  # noqa: ANN001
        super().__init__(parent, padding)
        self.cache.size = 300  # keyed by whole contents: a few screenfuls, not thousands of memories
        self._snippets: OrderedDict[tuple[str, int], tuple[str, list[tuple[int, int]]]] = OrderedDict()

    def _set_query(self, query: ParsedQuery) -> None:
        if query != self.cache.query:
            self._snippets.clear()
        super()._set_query(query)

    def marked_text(self, opt: QStyleOptionViewItem, option: QStyleOptionViewItem, index: Index,
                    width: int) -> tuple[str, Callable[[], list[tuple[int, int]]]]:
        memory = index.data(MEMORY_ROLE)
        content = getattr(memory, "content", None)
        if not isinstance(content, str) or not content:
            return "", list
        chars = max(20, min(400, width // max(1, opt.fontMetrics.averageCharWidth())))
        found = self._snippets.get((content, chars))
        if found is None:
            if content not in self.cache:
                self.cache.fill([content, *visible_texts(option, index, whole=True)])
            spans = self.cache.spans(content)
            text, inside, _marked = highlight.snippet(content, spans, chars) if spans else ("", (), "")
            found = self._snippets[(content, chars)] = (text, list(inside))
            while len(self._snippets) > self.cache.size:
                self._snippets.popitem(last=False)
        else:
            self._snippets.move_to_end((content, chars))
        return found[0], lambda: found[1]
