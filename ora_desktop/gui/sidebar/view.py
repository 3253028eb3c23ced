"""``Sidebar``: a tree of sites → agents (count, health dot, task marker), and opened files.

Refreshes by itself when files appear or go (``QFileSystemWatcher`` on the sites folders) and
when a file is written (memory counts). Selecting an item sets ``ctx.current``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from PySide6.QtCore import QEvent, QFileSystemWatcher, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTreeWidget, QTreeWidgetItem, QWidget

from ...core import AgentFile, Change
from ...core.operations.stats import health_may_change
from ..a11y import describe
from ..context import AppContext, path_of, resolved
from ..memories.health_bar import health_color
from ..resources import icon
from .model import FileInfo, SiteInfo, file_info, file_info_in, scan

#: How long a file's writes rest before its count and health are read again (its count shifts meanwhile).
SETTLE_MS = 30_000
#: A count that could not be taken exactly where the changes heard leave the file (a commit
#: landed unheard as it began) is taken again after this long, then twice as long, and so on.
RECHECK_MS = 1_000
RECHECKS = 6
#: Rows heard this many seconds after a scan's counts were shown may have been counted in them
#: (committed before the scan read, heard after: the watcher looks about every second).
SCAN_DOUBT_S = 2.0

log = logging.getLogger("ora_desktop.gui")
ITEM_ROLE = Qt.ItemDataRole.UserRole + 10
GROUP_ROLE = Qt.ItemDataRole.UserRole + 11  # True on the group of files opened from outside ORA_HOME
DAMAGED_COLOUR = "#d0443e"


_SIDE_FILES = ("-journal", "-wal", "-shm")


def _entries(folder: str) -> frozenset[str] | None:
    """The names in ``folder`` but SQLite's side files (None when it cannot be read)."""
    try:
        return frozenset(name for name in os.listdir(folder) if not name.endswith(_SIDE_FILES))
    except OSError:
        return None


def health_dot(value: float | None) -> QIcon:
    pixmap = QPixmap(12, 12)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(health_color(value))
    painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    return QIcon(pixmap)


class Sidebar(QTreeWidget):
    """The file tree (see the module docstring)."""

    scanned = Signal(int)  # number of files listed
    count_moved = Signal(object)  # the path of a file whose count changed (moved by rows, or read again)
    recover_requested = Signal(object)  # the path of a file to salvage

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        describe(self, "Sites and agents", "Every site and its agent files with memory counts and health")
        self.ctx = ctx
        self.extra: list[Path] = []
        self.infos: dict[Path, FileInfo] = {}
        self.setColumnCount(2)
        self.setHeaderLabels(["Agent", "Memories"])
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformRowHeights(True)
        self.setRootIsDecorated(True)
        self.keep_names_readable()
        self.currentItemChanged.connect(self._on_current)
        ctx.current_changed.connect(self._follow_current)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._directory_changed)
        self._listed: dict[str, frozenset[str]] = {}  # watched folder -> its entries when last read
        self._debounce = QTimer(self, singleShot=True, interval=300)
        self._debounce.timeout.connect(self.rescan)
        self._task: asyncio.Task | None = None
        self._again = False
        self._listed_once = False  # a scan has listed every file: an opened file is then counted alone
        self._adding: asyncio.Task | None = None
        self._edited: set[Path] = set()  # files whose rows were edited in place, to count again
        self._edit_debounce = QTimer(self, singleShot=True, interval=300)
        self._edit_debounce.timeout.connect(self._recount_edited)
        #: Files whose rows came or went: counted again once their writes rest (see _shift_count).
        self._settling: set[Path] = set()
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._recount_settled)
        #: Files whose count shown may be off by commits heard around its reading: read again
        #: exactly (``AppContext.read_as_heard``) soon, with how many tries so far.
        self._unsure: dict[Path, int] = {}
        self._recheck = QTimer(self, singleShot=True, interval=RECHECK_MS)
        self._recheck.timeout.connect(self._recount_unsure)
        self._scan_heard: set[Path] | None = None  # files whose rows moved while a scan read the counts
        self._scan_doubted_until = 0.0  # (time.monotonic) rows heard before this may be in the last scan
        ctx.store_changed.connect(self._store_changed)

    # ----------------------------------------------------------------- scanning
    def add_file(self, path: Path) -> None:
        """List a file opened from outside ORA_HOME (kept until the window closes). Once the
        sidebar is listed, only that file is read (counted), not every file again: a file listed
        already reads nothing."""
        path = resolved(path)
        if self.item_for(path) is not None:
            return  # listed; its count follows its writes (_store_changed)
        outside = self.ctx.home.agent_for(path) is None
        if outside and path not in self.extra:
            self.extra.append(path)
        if outside and self._listed_once and (self._task is None or self._task.done()):
            self._adding = asyncio.ensure_future(self._list_one(path), loop=self.ctx.loop)
        else:
            self.rescan()

    async def _list_one(self, path: Path) -> None:
        """Count ``path`` alone (off the GUI thread) and add it under "Opened files"."""
        info = await self.ctx.run(file_info, self.ctx.store_for, path, path.name)
        if self.item_for(path) is not None or path not in self.extra:
            return  # a scan listed it meanwhile
        item = self._file_item(info)
        top = self._opened_top()
        top.addChild(item)
        top.setExpanded(True)
        current = self.ctx.current_path()
        if current is not None and resolved(current) == path:
            self.blockSignals(True)
            try:
                self.setCurrentItem(item)
            finally:
                self.blockSignals(False)
        self.scanned.emit(len(self.infos))

    def _store_changed(self, path: object, change: Change) -> None:
        """Nobody knows which rows changed (a restore, an unreadable log): read every file
        again. Rows of one file added, removed or edited (the ids are known): count that file
        again, not every file of every site (a scan of each at 1M)."""
        if not change or self.item_for(Path(path)) is None:
            self.rescan_soon()
            return
        if change.membership_changed:
            if self._scan_heard is not None:  # the scan's count may hold these rows, or not
                self._scan_heard.add(resolved(path))
            elif time.monotonic() < self._scan_doubted_until:  # heard after the scan, maybe counted in it
                self._doubt(resolved(path))
            self._shift_count(resolved(path), len(change.added) - len(change.removed))
            if not change.changed:
                return
        if not health_may_change(change):
            return  # an importance, content or type edit: the count and health shown still hold
        self._edited.add(resolved(path))  # (a count taken now keeps the shifted one: see _recount)
        self._edit_debounce.start()

    def _shift_count(self, path: Path, delta: int) -> None:
        """Rows of ``path`` came or went (their ids known): its count moves by ``delta`` now, and
        the file is counted again (health included) once the writes rest a while, not per write
        (a count is a scan of the file: a core's worth at 1M for an agent writing every second)."""
        info, item = self.infos.get(path), self.item_for(path)
        if info is not None and item is not None and info.count is not None and delta:
            self.infos[path] = info = replace(info, count=max(0, info.count + delta))
            item.setText(1, f"{info.count:,}")
            self._sum_site(item)
            self.count_moved.emit(path)
        self._settling.add(path)
        self._settle.start()

    def _recount_settled(self) -> asyncio.Task:
        paths, self._settling = sorted(self._settling), set()
        return asyncio.ensure_future(self._recount(paths), loop=self.ctx.loop)

    def _recount_unsure(self) -> asyncio.Task:
        return asyncio.ensure_future(self._recount(sorted(self._unsure)), loop=self.ctx.loop)

    def _doubt(self, path: Path) -> None:
        """``path``'s count was read where a commit may be heard twice or not at all: read it
        again exactly, soon (a few times, further apart each; then the settle count rules)."""
        tries = self._unsure.get(path, 0)
        if tries >= RECHECKS:
            self._unsure.pop(path, None)
            return
        self._unsure[path] = tries + 1
        if not self._recheck.isActive():
            self._recheck.start(RECHECK_MS * 2 ** (min(self._unsure.values()) - 1))

    def _recount_edited(self) -> asyncio.Task:
        paths, self._edited = sorted(self._edited), set()
        return asyncio.ensure_future(self._recount(paths), loop=self.ctx.loop)

    async def _recount(self, paths: list[Path]) -> None:
        for path in paths:
            old = self.infos.get(path)
            if old is None or not old.ok:
                self.rescan_soon()
                return
            # Taken where the changes heard leave the file, the count is exact, and each change
            # heard after it moves it by its ids; otherwise it may hold a commit whose change is
            # still to be heard (or miss one heard meanwhile), and is read again soon.
            info = await self.ctx.read_as_heard(path, partial(file_info_in, path=path, label=old.label,
                                                              agent=old.agent))
            exact = info is not None
            if info is None:
                info = await self.ctx.run(file_info, self.ctx.store_for, path, old.label, old.agent)
            item = self.item_for(path)
            if item is None or not info.ok:
                self.rescan_soon()
                return
            current = self.infos.get(path)
            if exact:
                self._unsure.pop(path, None)
            else:
                self._doubt(path)
                if path in self._settling and current is not None:
                    info = replace(info, count=current.count)  # the count kept follows the rows by their ids
            self.infos[path] = info
            item.setText(1, "" if info.count is None else f"{info.count:,}")
            self._sum_site(item)
            self.count_moved.emit(path)
            item.setToolTip(0, info.tooltip())
            item.setToolTip(1, info.tooltip())
            if not info.damaged:
                item.setIcon(1, health_dot(info.average_health))

    def rescan_soon(self) -> None:
        self._debounce.start()

    def rescan(self) -> asyncio.Task:
        """Re-read ORA_HOME and the files' counts off the GUI thread; returns the task."""
        if self._task is not None and not self._task.done():
            self._again = True
            return self._task
        self._task = asyncio.ensure_future(self._rescan(), loop=self.ctx.loop)
        return self._task

    async def _rescan(self) -> None:
        while True:
            self._again = False
            self._scan_heard = set()
            try:
                sites, others = await self.ctx.run(scan, self.ctx.home, self.ctx.store_for, list(self.extra))
            finally:
                heard, self._scan_heard = self._scan_heard, None
            self._fill(sites, others)
            self._scan_doubted_until = time.monotonic() + SCAN_DOUBT_S
            for path in heard:  # rows came or went while the scan counted: its count may hold them, or not
                self._doubt(path)
            self._watch(sites)
            self._listed_once = True
            if not self._again:
                return

    def _directory_changed(self, folder: str) -> None:
        """A watched folder changed: read every file again only when files came or went, not
        when SQLite's journal or WAL files of a write did (every write to a file in ORA_HOME)."""
        entries = _entries(folder)
        if entries is None or entries != self._listed.get(folder):
            self.rescan_soon()

    def _watch(self, sites: list[SiteInfo]) -> None:
        wanted = {str(self.ctx.home.root), str(self.ctx.home.sites_dir), *(str(s.path) for s in sites)}
        wanted = {p for p in wanted if Path(p).is_dir()}
        current = set(self.watcher.directories())
        if current - wanted:
            self.watcher.removePaths(list(current - wanted))
        if wanted - current:
            self.watcher.addPaths(list(wanted - current))
        self._listed = {folder: entries for folder in wanted if (entries := _entries(folder)) is not None}

    # ----------------------------------------------------------------- items
    def _fill(self, sites: list[SiteInfo], others: list[FileInfo]) -> None:
        selected = self.ctx.current_path()
        self.blockSignals(True)
        self.clear()
        self.infos = {}
        current_item = None
        for site in sites:
            top = QTreeWidgetItem([site.slug, f"{sum(f.count or 0 for f in site.files):,}"])
            top.setIcon(0, icon("site"))
            top.setToolTip(0, str(site.path))
            top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.addTopLevelItem(top)
            for info in site.files:
                item = self._file_item(info)
                top.addChild(item)
                if selected is not None and resolved(info.path) == resolved(selected):
                    current_item = item
            top.setExpanded(True)
        if others:
            top = self._opened_top()
            for info in others:
                item = self._file_item(info)
                top.addChild(item)
                if selected is not None and resolved(info.path) == resolved(selected):
                    current_item = item
            top.setExpanded(True)
        if current_item is not None:
            self.setCurrentItem(current_item)
        self.blockSignals(False)
        self.scanned.emit(len(self.infos))

    def _sum_site(self, item: QTreeWidgetItem) -> None:
        """The site's row shows the sum of its files' counts (again, after one of them moved)."""
        top = item.parent()
        if top is None or top.data(0, GROUP_ROLE):
            return  # "Opened files" shows no total
        counts = [info.count for i in range(top.childCount())
                  if (info := self.info_for(top.child(i))) is not None]
        top.setText(1, f"{sum(c or 0 for c in counts):,}")

    def _opened_top(self) -> QTreeWidgetItem:
        """The "Opened files" group (files from outside ORA_HOME), last; made when first needed."""
        last = self.topLevelItem(self.topLevelItemCount() - 1) if self.topLevelItemCount() else None
        if last is not None and last.data(0, GROUP_ROLE):
            return last
        top = QTreeWidgetItem(["Opened files", ""])
        top.setData(0, GROUP_ROLE, True)
        top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)
        self.addTopLevelItem(top)
        return top

    def _file_item(self, info: FileInfo) -> QTreeWidgetItem:
        name = f"{info.label}  (task)" if info.is_task_agent else info.label
        item = QTreeWidgetItem([name, "" if info.count is None else f"{info.count:,}"])
        item.setData(0, ITEM_ROLE, info.agent if info.agent is not None else info.path)
        item.setToolTip(0, info.tooltip())
        item.setToolTip(1, info.tooltip())
        self.infos[resolved(info.path)] = info
        if info.damaged:  # marked, not just greyed out: it needs a person (Recover…)
            item.setIcon(0, icon("broken-file"))
            item.setText(0, f"{name}  (damaged)")
            item.setForeground(0, QBrush(QColor(DAMAGED_COLOUR)))
            if not info.ok:
                item.setText(1, "—")
        elif info.ok:
            item.setIcon(0, icon("task-agent" if info.is_task_agent else "agent"))
            item.setIcon(1, health_dot(info.average_health))
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        else:
            item.setIcon(0, icon("broken-file"))
            grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
            item.setForeground(0, grey)
            item.setForeground(1, grey)
            item.setText(1, "—")
        if info.is_task_agent:
            font = item.font(0)
            font.setItalic(True)
            item.setFont(0, font)
            item.setForeground(0, QBrush(QColor("#7a5cc9")) if info.ok and not info.damaged else item.foreground(0))
        return item

    def _menu(self, pos: object) -> None:
        item = self.itemAt(pos)
        info = self.info_for(item) if item is not None else None
        if info is None:
            return
        menu = QMenu(self)
        act = menu.addAction("Recover into a new file…")
        act.setStatusTip("Salvage the memories SQLite can still read into a new file (this file is not changed)")
        act.triggered.connect(lambda _checked=False, path=info.path: self.recover_requested.emit(path))
        self._open_menu = menu  # kept referenced while it is shown
        menu.popup(self.viewport().mapToGlobal(pos))

    def file_items(self) -> list[QTreeWidgetItem]:
        out = []
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            out.extend(top.child(j) for j in range(top.childCount()))
        return out

    def item_for(self, path: Path) -> QTreeWidgetItem | None:
        target = resolved(path)
        for item in self.file_items():
            value = path_of(item.data(0, ITEM_ROLE))
            if value is not None and resolved(value) == target:
                return item
        return None

    def info_for(self, item: QTreeWidgetItem) -> FileInfo | None:
        path = path_of(item.data(0, ITEM_ROLE))
        return self.infos.get(resolved(path)) if path is not None else None

    def keep_names_readable(self) -> None:
        """A minimum width that shows a dozen characters of a name, in the font of the moment."""
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("m" * 12) + 40)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the system's font size changed
            self.keep_names_readable()

    def select_path(self, path: Path) -> None:
        item = self.item_for(path)
        if item is not None:
            self.setCurrentItem(item)

    def _follow_current(self, item: object) -> None:
        """Highlight the file the window shows, however it was chosen (a search hit, Open…)."""
        path = path_of(item)
        target = self.item_for(path) if path is not None else None
        if target is not None and target is not self.currentItem():
            self.blockSignals(True)
            try:
                self.setCurrentItem(target)
            finally:
                self.blockSignals(False)
            self.viewport().update()

    def _on_current(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        value = current.data(0, ITEM_ROLE) if current is not None else None
        if isinstance(value, (AgentFile, Path)):
            self.ctx.set_current(value)
