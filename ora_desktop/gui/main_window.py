"""The main window: sidebar, the Memories tab (plus the extra panels), menus, toolbar, status bar.

Window geometry, dock/toolbar state and the splitter are remembered in ``QSettings``; recent
files too. Files can be opened with File > Open, from the recent list, by drag and drop, or on
the command line. With no sites in ORA_HOME and nothing open, a welcome page offers to open a
file or create a demo site.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import platform
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, QSize, Qt, QTimer, Signal, qVersion
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from ..core import AgentFile, OraError, Store
from ..views.table import hides_only_superseded
from .context import AppContext, path_of, resolved
from .contrast import ContrastChoice
from .curate.actions import Curator
from .dock_width import DockWidthKeeper
from .elided import ElidedLabel
from .exchange.actions import Exchanger
from .keyboard import KeyboardPaths
from .memories.page import MemoryBrowser
from .messages import MessageLog
from .notices import NoticeBar
from .panels import import_later, load_panels_async, start_services_async
from .purge.actions import Forgetter
from .resources import app_icon
from .search.saved import SavedSearches
from .sidebar.view import ITEM_ROLE, Sidebar
from .welcome import Welcome

log = logging.getLogger("ora_desktop.gui")
RECENT_KEY = "files/recent"
#: The sidebar's width on a first start (it keeps the width a person drags it to).
DOCK_WIDTH = 256
#: The file shown last, shown again at the next start (the command line's read-ahead reads it too).
LAST_KEY = "files/last"
MAX_RECENT = 10


class MainWindow(QMainWindow):
    """See the module docstring."""

    closed = Signal()

    def __init__(self, ctx: AppContext, browser: MemoryBrowser | None = None) -> None:
        """``browser``: the Memories tab, if built already (``app.build_window_async``)."""
        super().__init__()
        self.ctx = ctx
        ctx.window = self
        self.setObjectName("MainWindow")
        self.setWindowTitle("Ora Desktop")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.resize(first_size())
        self.browser = browser or MemoryBrowser(ctx)
        self.sidebar = Sidebar(ctx)
        self.curator = Curator(ctx, self.browser.selected_memories, self.browser.detail, self,
                               lambda: self.browser.table.selected_count())
        self.exchanger = Exchanger(ctx, self.browser, self.curator, self)
        self.contrast = ContrastChoice(ctx.settings, self)
        self.forgetter = Forgetter(ctx, self.browser.selected_memories, self,
                                   lambda: self.browser.table.selected_count())
        self.curator.deleted_view_made.connect(self._deleted_view_made)
        self.browser.table.cells.edited.connect(self.curator.edit_cell)
        self.browser.table.cells.note.connect(ctx.status.emit)
        self.sidebar.recover_requested.connect(self.forgetter.recover)
        self.forgetter.recovered.connect(self.open_file)
        self.exchanger.created.connect(self.open_file)
        self.browser.recover_asked.connect(self.forgetter.recover)
        self.welcome = Welcome(str(ctx.home.root))
        self.welcome.open_file.connect(self.open_dialog)
        self.welcome.create_demo.connect(self.create_demo)
        self.memories = QStackedWidget()
        self.memories.addWidget(self.browser)
        self.memories.addWidget(self.welcome)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("MainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.memories, "Memories")
        self.panels: dict[str, QWidget] = {}  # added by start() once the window is up
        self._discard_confirmed = False  # the person chose to discard unsaved edits and quit
        self.notices = NoticeBar()
        ctx.notice.connect(self.notices.add)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.notices)
        column.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.dock = QDockWidget("Sites and agents", self)
        self.dock.setObjectName("SidebarDock")
        self.saved = SavedSearches(self.browser, ctx.settings, self)
        sidebar_column = QWidget()
        column_layout = QVBoxLayout(sidebar_column)
        column_layout.setContentsMargins(0, 0, 0, 0)
        column_layout.addWidget(self.sidebar, 1)
        column_layout.addWidget(self.saved.box)
        self.dock.setWidget(sidebar_column)
        self.dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                              | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        # Agent names stay readable however small the window gets (the table and detail pane
        # give way first; Sidebar.keep_names_readable), and a squeezed sidebar grows back with it.
        self._make_status_bar()
        self._make_actions()
        self._make_menus()
        self._make_toolbar()
        self._restore_state()
        ctx.status.connect(self.show_status)
        ctx.current_changed.connect(self._current_changed)
        self.browser.store_shown.connect(self._store_shown)
        self.browser.counts_changed.connect(self._counts)
        # "(N superseded hidden)" is the file's count less the rows listed: said again when either moves.
        self.sidebar.count_moved.connect(
            lambda _path: self._counts(self.browser.model.rowCount(), self.browser.table.selected_count()))
        self.browser.hits_shown.connect(self._hits_counted)
        self.browser.model.loaded.connect(lambda _n: self._poll_index())
        self.browser.table.selection_size.connect(lambda _n: self.curator.update_actions())
        self.browser.table.selection_size.connect(lambda _n: self.forgetter.update_actions())
        self.sidebar.scanned.connect(self._scanned)
        self._index_timer = QTimer(self, interval=2000)
        self._index_timer.timeout.connect(self._poll_index)
        self._index_task: asyncio.Task | None = None
        self._build = None
        #: Files opened before start() (the command line's): listed in the sidebar once the first
        #: rows are painted (its scan counts every file, a full read of a 1M-row file); then ``None``.
        self._unlisted: list[Path] | None = []
        self._recent: list[str] | None = None  # the recent files, read from the settings when first asked
        self._last_shown: str | None = None  # the file last saved under LAST_KEY
        self._showing_hits = False  # the all-sites list is shown: the count line says its hits

    # ----------------------------------------------------------------- building
    def _make_status_bar(self) -> None:
        bar = self.statusBar()
        self.file_label = ElidedLabel(max_width=360)
        self.readonly_label = QLabel("Read-only")
        self.readonly_label.setToolTip("Opened read-only: nothing can be changed (--read-only)")
        self.readonly_label.setStyleSheet("color: #c0392b; font-weight: 600;")
        self.readonly_label.hide()
        self.count_label = QLabel()
        self.index_label = ElidedLabel(max_width=320)
        for widget in (self.file_label, self.readonly_label, self.count_label, self.index_label):
            bar.addPermanentWidget(widget)
        self.messages = MessageLog(bar)  # a long message whole on hover; View > Recent messages

    def _make_actions(self) -> None:
        def action(text: str, slot, shortcut=None, tip: str = "") -> QAction:  # noqa: ANN001
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            if tip:
                act.setStatusTip(tip)
                act.setToolTip(tip)
            act.triggered.connect(lambda _c=False: slot())
            return act

        self.open_action = action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                                  "Open a .site.db file from anywhere (Ctrl+O)")
        self.demo_action = action("Create &demo site", self.create_demo, None,
                                  "Write a demo site with made-up memories into the Ora home folder")
        self.reload_action = action("&Reload", self.reload, QKeySequence.StandardKey.Refresh,
                                    "Re-read the sites and the current file (F5)")
        self.quit_action = action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.find_action = action("&Find", self.browser.search.focus_search, QKeySequence.StandardKey.Find,
                                  "Search memories as you type (Ctrl+F)")
        self.clear_search_action = action("Clear search and filters", self.clear_search, None)
        self.about_action = action("&About Ora Desktop", self.about)
        browser = self.browser
        self.keyboard = KeyboardPaths(
            [(self.dock, lambda: self.sidebar), (browser.search, lambda: browser.search.field),
             (browser.center, browser.center.currentWidget), (browser.detail, lambda: browser.detail.editor.content)],
            search=browser.search.field, table=browser.table, detail=browser.detail,
            editor=browser.detail.editor.content, parent=self)
        QWidget.setTabOrder(browser.search.field, browser.table)
        self.next_pane_action = action("Next pane", lambda: self.keyboard.next_zone(1), "F6",
                                       "Move to the next pane: sites, search, memories, detail (F6)")
        self.previous_pane_action = action("Previous pane", lambda: self.keyboard.next_zone(-1), "Shift+F6",
                                           "Move to the previous pane (Shift+F6)")
        self.facets_action = QAction("&Facets", self, checkable=True, checked=True)
        self.facets_action.toggled.connect(self.browser.facets.setVisible)
        self.detail_action = QAction("&Detail pane", self, checkable=True, checked=True)
        self.detail_action.toggled.connect(self.browser.detail.setVisible)

    def _make_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        file_menu.addAction(self.demo_action)
        file_menu.addSeparator()
        file_menu.addAction(self.exchanger.import_action)
        file_menu.addAction(self.exchanger.export_action)
        file_menu.addSeparator()
        file_menu.addAction(self.reload_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit = bar.addMenu("&Edit")
        for act in self.curator.edit_actions():
            edit.addSeparator() if act is None else edit.addAction(act)
        edit.addSeparator()
        for act in self.forgetter.actions():
            edit.addAction(act)
        edit.addSeparator()
        edit.addAction(self.find_action)
        edit.addAction(self.clear_search_action)
        view = bar.addMenu("&View")
        view.addAction(self.dock.toggleViewAction())
        view.addAction("Recent &messages…", lambda: self.messages.open_list(self))
        view.addAction(self.saved.action)
        view.addAction(self.facets_action)
        view.addAction(self.detail_action)
        view.addMenu(self.browser.table.column_menu(self))
        view.addAction(self.contrast.action)
        view.addSeparator()
        view.addAction(self.next_pane_action)
        view.addAction(self.previous_pane_action)
        view.addSeparator()
        self.view_menu = view
        self._add_tab_action(0)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.about_action)

    def _add_tab_action(self, index: int) -> None:
        """View > <tab> with Ctrl+<n>."""
        act = QAction(self.tabs.tabText(index), self)
        act.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
        act.triggered.connect(lambda _c=False, i=index: self.tabs.setCurrentIndex(i))
        self.view_menu.addAction(act)

    def _make_toolbar(self) -> None:
        tools = self.addToolBar("Main")
        tools.setObjectName("MainToolbar")
        tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        style = self.style()
        from PySide6.QtWidgets import QStyle

        icons = {
            self.open_action: QStyle.StandardPixmap.SP_DialogOpenButton,
            self.curator.new_action: QStyle.StandardPixmap.SP_FileIcon,
            self.curator.delete_action: QStyle.StandardPixmap.SP_TrashIcon,
            self.curator.undo_action: QStyle.StandardPixmap.SP_ArrowBack,
            self.curator.redo_action: QStyle.StandardPixmap.SP_ArrowForward,
            self.reload_action: QStyle.StandardPixmap.SP_BrowserReload,
            self.curator.deleted_action: QStyle.StandardPixmap.SP_DialogResetButton,
        }
        for act, pixmap in icons.items():
            act.setIcon(style.standardIcon(pixmap))
        for act in (self.open_action, None, self.curator.new_action, self.curator.delete_action,
                    self.curator.undo_action, self.curator.redo_action, None, self.curator.deleted_action,
                    self.reload_action):
            tools.addSeparator() if act is None else tools.addAction(act)

    # ----------------------------------------------------------------- state
    def _restore_state(self) -> None:
        settings = self.ctx.settings
        geometry = settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        state = settings.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)
        wanted = DOCK_WIDTH
        with contextlib.suppress(TypeError, ValueError):
            wanted = max(int(settings.value("window/sidebar", DOCK_WIDTH)), self.sidebar.minimumWidth())
        self.dock_width = DockWidthKeeper(self, self.dock, wanted)
        splitter = settings.value("window/splitter")
        if isinstance(splitter, QByteArray) and not splitter.isEmpty():
            self.browser.splitter.restoreState(splitter)

    def save_state(self) -> None:
        settings = self.ctx.settings
        if self._recent:  # (its saves on the watcher thread may be cancelled at closing)
            settings.setValue(RECENT_KEY, self._recent)
        elif self._recent is not None:
            settings.remove(RECENT_KEY)
        if self._last_shown:
            settings.setValue(LAST_KEY, self._last_shown)
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState())
        settings.setValue("window/splitter", self.browser.splitter.saveState())
        settings.setValue("window/sidebar", self.dock_width.wanted)
        self.browser.table.save_layout()
        settings.sync()

    # ----------------------------------------------------------------- starting
    def prepare_first_paint(self) -> Iterator[None]:
        """Lay out the window and draw each of its parts once offscreen, one part per step (a
        generator: the caller yields to the event loop between steps), before ``show()``.

        A window's first paint also fills Qt's caches (glyphs, style pixmaps, icons): at launch
        that made ``show()`` and the paint after it one 35-40 ms block of the GUI thread (its own
        CPU time); drawn ahead in parts of at most ~6 ms, the first real paint costs about half."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        browser = self.browser
        for part in (self.menuBar(), self.dock, browser.search, browser.facets, browser.table,
                     browser.detail, self.statusBar()):
            yield
            if not part.isHidden():
                part.grab()

    def start(self) -> asyncio.Task:
        """Scan ORA_HOME (once the first rows are painted when a file was opened already: the
        sidebar then needs nothing from the scan to show it), watch for other processes' writes,
        then add the extra panels and services."""
        unlisted, self._unlisted = self._unlisted or [], None
        if not unlisted:
            self.sidebar.rescan()
        self.ctx.start_watching()
        self._index_timer.start()
        self.panels_task = asyncio.ensure_future(self._add_panels(unlisted), loop=self.ctx.loop)
        return self.panels_task

    async def _add_panels(self, unlisted: list[Path]) -> None:
        """Once the first rows are painted (or 1.5 s passed: no file, or it failed), so that
        nothing else competes with them: list the ``unlisted`` files in the sidebar, import what
        the actions use when first triggered, add the extra panels, start the services."""
        painted = asyncio.Event()
        watcher = FirstRowsPainted(self.browser, painted.set)
        try:
            await asyncio.wait_for(painted.wait(), 1.5)
        except TimeoutError:
            pass
        finally:
            watcher.stop()
        for path in unlisted:
            self.sidebar.add_file(path)
        await self.ctx.run(import_later)
        async for title, widget in load_panels_async(self.ctx, self):
            self.panels[title] = widget
            self._add_tab_action(self.tabs.addTab(widget, title))
        await start_services_async(self.ctx)

    def _scanned(self, count: int) -> None:
        has_files = count > 0 or self.ctx.current is not None
        self.memories.setCurrentWidget(self.browser if has_files else self.welcome)
        if has_files and self.ctx.current is None:
            usable = [item for item in self.sidebar.file_items() if (info := self.sidebar.info_for(item)) and info.ok]
            last = self.ctx.settings.value(LAST_KEY)
            shown_last = self.sidebar.item_for(Path(last)) if isinstance(last, str) and last else None
            if shown_last is not None and shown_last in usable:
                self.sidebar.setCurrentItem(shown_last)  # the agent viewed last, as it was left
            elif usable:
                self.sidebar.setCurrentItem(usable[0])

    # ----------------------------------------------------------------- files
    def open_file(self, path: Path) -> None:
        """Open a file from anywhere: list it in the sidebar and select it."""
        path = Path(path).expanduser()
        if not path.exists():
            self.ctx.show_error(f"{path}: no such file", "Open")
            return
        path = resolved(path)
        self._remember_recent(path)
        item = self.sidebar.item_for(path)
        if item is None:
            agent = self.ctx.home.agent_for(path)
        else:  # a listed file's item knows its agent: the home's folders are not read again
            value = item.data(0, ITEM_ROLE)
            agent = value if isinstance(value, AgentFile) else None
        if self._unlisted is not None:
            self._unlisted.append(path)  # listed by start(), once the first rows are painted
        else:
            self.sidebar.add_file(path)
        self.memories.setCurrentWidget(self.browser)
        self.tabs.setCurrentIndex(0)
        self.ctx.set_current(agent or path)

    def open_dialog(self) -> None:
        dialog = QFileDialog(self, "Open an Ora memory file", str(self.ctx.home.sites_dir
                                                                  if self.ctx.home.exists() else Path.home()))
        dialog.setNameFilters(["Ora memory files (*.site.db *.db)", "All files (*)"])
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(lambda name: self.open_file(Path(name)))
        self._file_dialog = dialog
        dialog.open()

    def _remember_recent(self, path: Path) -> None:
        recent = [p for p in self.recent_files() if p != str(path)]
        self._save_recent([str(path), *recent][:MAX_RECENT])

    def recent_files(self) -> list[str]:
        if self._recent is None:
            value = self.ctx.settings.value(RECENT_KEY) or []
            self._recent = [value] if isinstance(value, str) else [str(v) for v in value]
        return list(self._recent)

    def _save_recent(self, files: list[str]) -> None:
        """Keep ``files`` as the recent list, saved on the watcher thread (one at a time, in
        order) and again with the window's state. Saving QSettings syncs its file to disk (two
        fdatasync), which waits for the disk: 364 ms on the GUI thread while an index was written."""
        self._recent = files
        settings = self.ctx.settings
        asyncio.ensure_future(self.ctx.run_watch(_save_setting, settings.fileName(), settings.format(),
                                                 RECENT_KEY, files), loop=self.ctx.loop)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for name in files:
            act = self.recent_menu.addAction(name)
            act.setEnabled(Path(name).exists())
            act.triggered.connect(lambda _c=False, name=name: self.open_file(Path(name)))
        if not files:
            self.recent_menu.addAction("(no recent files)").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", lambda: self._save_recent([]))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        files = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        for path in files:
            self.open_file(path)
        event.acceptProposedAction()

    def create_demo(self) -> asyncio.Task:
        """Write the demo ORA_HOME (off the GUI thread) and show it."""
        self.demo_task = asyncio.ensure_future(self._create_demo(), loop=self.ctx.loop)
        return self.demo_task

    async def _create_demo(self) -> None:
        from ..core.demo import write_demo_home  # here, not at start-up: only the welcome page needs it

        self.welcome.status.setText("Creating the demo site…")
        self.welcome.demo_button.setEnabled(False)
        self.sidebar.watcher.blockSignals(True)  # show the files once they are complete
        try:
            paths = await self.ctx.run(write_demo_home, self.ctx.home.root)
        except OraError as exc:
            self.sidebar.watcher.blockSignals(False)
            self.welcome.status.setText("")
            self.welcome.demo_button.setEnabled(True)
            self.ctx.show_error(exc, "Demo")
            return
        self.sidebar.watcher.blockSignals(False)
        self.welcome.status.setText("")
        self.ctx.status.emit(f"Created a demo home with {len(paths)} agent files in {self.ctx.home.root}")
        await self.sidebar.rescan()

    def reload(self) -> None:
        self.sidebar.rescan()
        self.browser.model.reload(keep_rows=True)

    def clear_search(self) -> None:
        self.browser.search.field.clear()
        for button in self.browser.search.quick.values():
            button.setChecked(False)
        self.browser.controller.clear()

    # ----------------------------------------------------------------- status
    def show_status(self, text: str) -> None:
        self.messages.show(text)

    def _current_changed(self, item: object) -> None:
        path = path_of(item)
        label = item.label if isinstance(item, AgentFile) else (path.name if path else "")
        self.setWindowTitle(f"{label} — Ora Desktop" if label else "Ora Desktop")
        self.file_label.setText(label)
        self.file_label.setToolTip(str(path) if path else "")
        self.curator.update_actions()
        self.forgetter.update_actions()
        if path is not None and str(path) != self._last_shown:  # saved off the GUI thread (see _save_recent)
            self._last_shown = str(path)
            settings = self.ctx.settings
            asyncio.ensure_future(self.ctx.run_watch(_save_setting, settings.fileName(), settings.format(),
                                                     LAST_KEY, self._last_shown), loop=self.ctx.loop)

    def _store_shown(self, store: Store | None) -> None:
        self.readonly_label.setVisible(bool(store and store.readonly))
        self.curator.update_actions()
        self.forgetter.update_actions()
        self.index_label.setText("")

    def _deleted_view_made(self, view: QWidget) -> None:
        view.purge_requested.connect(self.forgetter.purge_ids)
        view.empty_requested.connect(self.forgetter.empty_trash)

    def _hits_counted(self, hits: int) -> None:
        """The all-sites list is shown: the count says its hits, not the hidden table's rows."""
        self._showing_hits = hits >= 0
        if self._showing_hits:
            self.count_label.setText(f"{hits:,} hit{'' if hits == 1 else 's'} across all sites")

    def _counts(self, rows: int, selected: int) -> None:
        if self._showing_hits:
            return
        text = f"{rows:,} memor{'y' if rows == 1 else 'ies'}"
        hidden = self._superseded_hidden(rows)
        if hidden:
            text += f" ({hidden:,} superseded hidden)"
        if selected:
            text += f" · {selected:,} selected"
        self.count_label.setText(text)

    def _superseded_hidden(self, rows: int) -> int:
        """How many rows the sidebar counts that the whole-file list leaves out (superseded
        memories, hidden by default): 0 while a search or any filter narrows the list."""
        store = self.browser.store
        if store is None or self.browser.controller.text.strip():
            return 0
        if not hides_only_superseded(self.browser.model.query):
            return 0
        item = self.sidebar.item_for(store.path)
        info = self.sidebar.info_for(item) if item is not None else None
        return max(0, info.count - rows) if info is not None and info.count is not None else 0

    def _poll_index(self) -> None:
        store = self.browser.store
        if store is None or (self._index_task is not None and not self._index_task.done()):
            return
        self._index_task = asyncio.ensure_future(self._index_state(store), loop=self.ctx.loop)

    async def _index_state(self, store: Store) -> None:
        try:
            state = await self.ctx.run(_index_state, store.path)
        except OraError as exc:
            self.index_label.setText("Index: unavailable")
            self.index_label.setToolTip(str(exc))
            return
        if state.building:
            fraction = state.fraction
            self.index_label.setText(f"Index: building {fraction:.0%}" if fraction is not None else "Index: building")
        elif state.built and not state.stale:
            self.index_label.setText(f"Index: {state.rows:,} memories")
        elif state.built:
            self.index_label.setText("Index: updating on next search")
        else:
            self.index_label.setText("Index: not built yet" if state.fts5 else "Index: no FTS5 (plain search)")
            if state.fts5:
                self._build_index(store)
        self.index_label.setToolTip(state.reason or str(state.sidecar))

    def _build_index(self, store: Store) -> None:
        """Build the full-text index in the background; search uses plain matching meanwhile."""
        from ..core.search import BuildTask

        if self._build is not None and self._build.state is None:
            return
        def progress(done: int, total: int) -> None:
            self.ctx.from_thread(self.index_label.setText, f"Index: building {done * 100 // max(total, 1)}%")

        def finished(_state: object) -> None:
            self.ctx.from_thread(self._index_built, store, started)

        started = time.monotonic()
        self._build = BuildTask(store.path, progress, finished)

    def _index_built(self, store: Store, started: float) -> None:
        if self._build is not None and self._build.error:
            self.ctx.status.emit(f"The search index could not be built: {self._build.error}")
        self._poll_index()
        if self.browser.store is store:
            self.browser.controller.index_ready(store, started)

    # ----------------------------------------------------------------- about and closing
    def about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("About Ora Desktop")
        box.setIconPixmap(app_icon().pixmap(64, 64))
        box.setText(f"<h3>Ora Desktop {__version__}</h3><p>See and tend an AI agent's long-term memory.</p>")
        box.setInformativeText(
            f"Python {platform.python_version()} · Qt {qVersion()} · PySide6 {pyside_version} · "
            f"SQLite {sqlite3.sqlite_version}<br>Ora home: {self.ctx.home.root}")
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        self._about = box
        box.open()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        editor = self.browser.detail.editor
        if editor.is_modified() and not self._discard_confirmed:
            event.ignore()
            box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                              f"Your changes to “{editor.base.title[:60] if editor.base else ''}” are not saved.",
                              QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel, self)
            box.setInformativeText("Cancel to go back and save them (Ctrl+S), or discard them and quit.")

            def chosen(_result: int) -> None:
                if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Discard:
                    self._discard_confirmed = True
                    self.close()
            box.finished.connect(chosen)
            self._unsaved_box = box
            box.open()
            return
        self.save_state()
        if self._build is not None and self._build.state is None:
            self._build.cancel()
        self._index_timer.stop()
        super().closeEvent(event)
        self.closed.emit()


class FirstRowsPainted(QObject):
    """Calls ``done()`` once the Memories table has painted real rows (not placeholders)."""

    def __init__(self, browser: MemoryBrowser, done: Callable[[], object]) -> None:
        super().__init__(browser)
        self.table, self.model, self.done = browser.table, browser.model, done
        self.table.viewport().installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint and self.model.rowCount() \
                and self.model.memory_at(max(0, self.table.rowAt(0))) is not None:
            # after this paint has been drawn, not before it
            QTimer.singleShot(0, self.done)
            self.stop()
        return False

    def stop(self) -> None:
        self.table.viewport().removeEventFilter(self)


def first_size() -> QSize:
    """The window's size before any is remembered: 1400×860, or less on a smaller screen (a
    1366×768 laptop shows the whole window, its frame and panel included)."""
    screen = QGuiApplication.primaryScreen()
    area = screen.availableGeometry() if screen is not None else None
    if area is None or area.isEmpty():
        return QSize(1400, 860)
    return QSize(min(1400, area.width() - 16), min(860, area.height() - 40))


def _save_setting(file_name: str, fmt: QSettings.Format, key: str, value: list[str] | str) -> None:
    """Save ``key`` (removed when ``value`` is empty) through a QSettings of this thread's own."""
    settings = QSettings(file_name, fmt)
    if value:
        settings.setValue(key, value)
    else:
        settings.remove(key)
    settings.sync()


def _index_state(path: Path):  # noqa: ANN202 (an IndexState)
    """The search index's state (the search package is imported here, on a worker thread)."""
    from ..core.search import index_state

    return index_state(path)
