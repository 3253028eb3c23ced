"""The shell: context services, lazy panels, the exception dialog, command-line options."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtWidgets import QApplication, QWidget

from ora_desktop.core import Change, NotFound
from ora_desktop.gui import errors, panels
from ora_desktop.gui.app import parse_args


def test_run_executes_off_the_gui_thread_and_returns_on_it(ctx, qtbot, filled_db):
    import threading

    path = filled_db(5)
    seen = {}

    async def work():
        gui = threading.get_ident()
        store = await ctx.run(ctx.store_for, path)
        seen["count"] = await ctx.run(lambda: (threading.get_ident() != gui, store.count()))
        seen["back_on_gui"] = threading.get_ident() == gui

    task = ctx.loop.create_task(work())
    qtbot.waitUntil(task.done, timeout=5000)
    task.result()
    assert seen == {"count": (True, 5), "back_on_gui": True}


def test_our_write_is_announced_on_the_gui_thread(ctx, qtbot, filled_db):
    path = filled_db(3)
    store = ctx.store_for(path)
    with qtbot.waitSignal(ctx.store_changed, timeout=5000) as blocker:
        ctx.loop.create_task(ctx.run(store.update, "m001", importance=9))
    changed_path, change = blocker.args
    assert changed_path == path.resolve()
    assert isinstance(change, Change) and change.changed == {"m001"}


def test_another_process_write_is_noticed(ctx, qtbot, filled_db):
    import subprocess

    path = filled_db(3)
    ctx.store_for(path)
    ctx.start_watching(50)
    qtbot.wait(120)
    code = ("import ora_desktop, sys; s = ora_desktop.open_store(sys.argv[1]); "
            "s.add('written by the agent', type='fact', importance=3)")
    with qtbot.waitSignal(ctx.data_changed, timeout=5000) as blocker:
        subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    assert blocker.args[0].source == "external"


def test_every_panel_imports_and_builds_in_tab_order(ctx, qtbot):
    built = list(panels.load_panels(ctx))
    for _title, widget in built:
        qtbot.addWidget(widget)
    assert [title for title, _ in built] == ["Jobs", "Backups", "Charts", "Task", "Sync", "Duplicates", "Review",
                                            "Context", "Graph"]
    assert all(isinstance(widget, QWidget) for _, widget in built)


def test_a_panel_that_cannot_be_imported_fails_loudly(ctx, monkeypatch):
    monkeypatch.setitem(sys.modules, "ora_desktop.gui.graph.view", None)  # as a broken import would
    with pytest.raises(ImportError):
        list(panels.load_panels(ctx))


def test_unexpected_exception_shows_copyable_details_and_app_keeps_running(aloop, qtbot):
    errors.install_excepthook(aloop)
    try:
        raise ValueError("boom in a slot")
    except ValueError:
        sys.excepthook(*sys.exc_info())
    dialog = errors._OPEN[-1]
    qtbot.addWidget(dialog)
    assert dialog.isVisible()
    assert "boom in a slot" in dialog.message.text()
    assert "Traceback" in dialog.details.toPlainText()
    dialog.copy_details()
    assert "ValueError: boom in a slot" in QApplication.clipboard().text()
    dialog.close()


def test_expected_errors_are_words_not_tracebacks(aloop, qtbot):
    errors.install_excepthook(aloop)
    sys.excepthook(NotFound, NotFound("x.site.db: no memory with id 'q'"), None)
    dialog = errors._OPEN[-1]
    qtbot.addWidget(dialog)
    assert dialog.message.text() == "x.site.db: no memory with id 'q'"
    assert not dialog.details.isVisible() and "Traceback" not in dialog.details.toPlainText()
    dialog.close()


def test_command_line_options():
    args = parse_args(["--read-only", "--home", "/tmp/h", "a.site.db", "b.site.db"])
    assert args.read_only and args.home == "/tmp/h" and args.files == ["a.site.db", "b.site.db"]
    plain = parse_args([])
    assert not plain.read_only and plain.home is None and plain.files == []


def test_errors_are_described_in_words():
    assert errors.describe(PermissionError(13, "denied", "/x.db")) == "Permission denied: /x.db"


def test_the_window_lists_the_rows_read_ahead_and_still_sees_a_later_write(aloop, qtbot, filled_db, settings):
    """``ora-desktop FILE`` reads the file's first rows while the window is imported; the window
    shows them, and a memory another program writes after that read still appears."""
    import sqlite3

    from ora_desktop.core import open_store
    from ora_desktop.gui.app import build_window
    from ora_desktop.views.first_rows import FirstRows

    path = filled_db(30)
    ahead = FirstRows(open_store, path)
    ahead.keys.result(timeout=10)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO memories (id, content, type, importance, created_at, updated_at) "
                 "VALUES ('agent-new', 'written by the agent just now', 'fact', 5, datetime('now'), datetime('now'))")
    conn.commit()
    conn.close()
    ctx, window = build_window(parse_args([str(path)]), settings, ahead)
    qtbot.addWidget(window)
    try:
        window.show()
        window.start()
        model = window.browser.model
        qtbot.waitUntil(lambda: model.rowCount() == 31 and model.memory_at(0) is not None
                        and model.memory_at(0).id == "agent-new", timeout=10000)
        assert ahead.taken, "the first rows shown were the ones read ahead"
        assert ctx.cached_store(path) is ahead.store.result(), "the store opened ahead is the window's"
    finally:
        window._discard_confirmed = True
        window.close()
        ctx.close()


def test_every_module_imports():
    """Modules the window imports only when first needed (panels, actions' operations, the search
    engine) still fail loudly here when an import breaks."""
    import importlib
    import pkgutil

    import ora_desktop

    for module in pkgutil.walk_packages(ora_desktop.__path__, "ora_desktop."):
        if module.name != "ora_desktop.__main__":  # running it starts the command line
            importlib.import_module(module.name)


def test_with_no_file_named_the_homes_first_file_is_read_ahead_and_shown(aloop, qtbot, filled_db, settings,
                                                                         monkeypatch):
    """Plain ``ora-desktop`` reads ahead the file the sidebar selects first (the first agent of
    the first site), and the window lists it from those keys."""
    from ora_desktop import cli
    from ora_desktop.gui.app import build_window

    first = filled_db(12, site="alpha-site", agent="ora")
    filled_db(5, site="beta-site", agent="ora")
    handed = []
    monkeypatch.setattr("ora_desktop.cli.common.start_window", lambda argv, first_rows=None: handed.append(first_rows))
    cli.main([])
    ahead = handed[0]
    assert ahead is not None and ahead.path == first.resolve()
    ctx, window = build_window(parse_args([]), settings, ahead)
    qtbot.addWidget(window)
    try:
        window.show()
        window.start()
        model = window.browser.model
        qtbot.waitUntil(lambda: ctx.current_path() is not None and model.rowCount() == 12, timeout=10000)
        assert ctx.current_path().resolve() == first.resolve() and ahead.taken
    finally:
        window._discard_confirmed = True
        window.close()
        ctx.close()


def test_a_file_opened_at_launch_is_listed_once_its_first_rows_are_painted_with_one_scan(
        aloop, qtbot, filled_db, settings, monkeypatch):
    """``ora-desktop FILE``: the sidebar's scan, which counts every file (a full read of a big
    one), waits until the file's first rows are painted, and runs once, not twice."""
    from PySide6.QtCore import QEvent, QObject

    from ora_desktop.gui.app import build_window
    from ora_desktop.gui.sidebar import view as sidebar_view

    path = filled_db(30, site="outside", agent="opened")
    painted, scans = [], []
    real_scan = sidebar_view.scan
    monkeypatch.setattr(sidebar_view, "scan", lambda *args: scans.append(bool(painted)) or real_scan(*args))

    class PaintSpy(QObject):
        def eventFilter(self, obj, event):  # noqa: N802, ANN001, ANN201
            if event.type() == QEvent.Type.Paint and model.rowCount() and model.memory_at(0) is not None:
                painted.append(True)
            return False

    ctx, window = build_window(parse_args([str(path)]), settings)
    qtbot.addWidget(window)
    try:
        model = window.browser.model
        spy = PaintSpy(window)
        window.browser.table.viewport().installEventFilter(spy)
        window.show()
        window.start()
        qtbot.waitUntil(lambda: window.sidebar.item_for(path) is not None
                        and window.sidebar.item_for(path).text(1) == "30", timeout=10000)
        qtbot.waitUntil(lambda: window.panels_task.done(), timeout=20000)
        assert scans == [True], "one scan, after the first rows were painted"
    finally:
        window._discard_confirmed = True
        window.close()
        ctx.close()


def test_the_window_built_in_turns_as_launched_lists_the_file_read_ahead(aloop, qtbot, filled_db, settings):
    """``build_window_async`` (the launch's path: the Memories tab, the rest of the window and the
    files opened, each in an event-loop turn of its own) gives the same window: the file opened,
    its rows from the keys read ahead, the Memories tab the window's own."""
    import gc


    path = filled_db(25)
    ahead, ctx, window = _built_as_launched(aloop, qtbot, settings, path)
    try:
        window.show()
        window.start()
        model = window.browser.model
        qtbot.waitUntil(lambda: model.rowCount() == 25 and model.memory_at(0) is not None, timeout=10000)
        assert ahead.taken and ctx.current_path().resolve() == path.resolve()
        assert window.memories.indexOf(window.browser) == 0 and window.browser.window() is window
        assert gc.isenabled(), "garbage collection is back on once the window is built"
    finally:
        window._discard_confirmed = True
        window.close()
        ctx.close()


def test_the_first_rows_read_ahead_are_shown_at_once_not_as_placeholders(aloop, qtbot, filled_db, settings,
                                                                         monkeypatch):
    """At launch the memories of the first screenful are read with their keys: when the table
    first lists rows it already has their contents (no placeholder rows painted, then filled)."""

    from ora_desktop.core import open_store
    from ora_desktop.gui.memories.model import MemoryTableModel
    from ora_desktop.views.first_rows import FIRST_ROWS

    listed: list[tuple[int, bool]] = []  # (rows, every row already has its memory), at each reset
    made = MemoryTableModel.__init__

    def spied(model: MemoryTableModel, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        made(model, *args, **kwargs)
        model.modelReset.connect(lambda: listed.append(
            (model.rowCount(), all(model.memory_at(row) is not None for row in range(model.rowCount())))))

    monkeypatch.setattr(MemoryTableModel, "__init__", spied)

    path = filled_db(FIRST_ROWS + 50)
    ahead, ctx, window = _built_as_launched(aloop, qtbot, settings, path)
    model = window.browser.model
    try:
        window.show()
        window.start()
        qtbot.waitUntil(lambda: model.rowCount() == FIRST_ROWS + 50 and not model.is_loading(), timeout=10000)
        assert ahead.taken
        listed_rows = [reset for reset in listed if reset[0]]
        assert listed_rows and listed_rows[0] == (FIRST_ROWS, True), "the first rows come with their memories"
        with open_store(path) as store:
            assert [model.memory_at(row) for row in range(FIRST_ROWS)] == store.by_rowids(model.keys[:FIRST_ROWS])
    finally:
        window._discard_confirmed = True
        window.close()
        ctx.close()


def _built_as_launched(aloop, qtbot, settings, path):
    """The window built as ``ora-desktop FILE`` builds it (rows read ahead, built in turns, its
    modules imported on a worker): ``(read-ahead, context, window)``."""
    import qasync

    from ora_desktop.core import open_store
    from ora_desktop.gui.app import build_window_async
    from ora_desktop.views.first_rows import FirstRows

    ahead = FirstRows(open_store, path)
    importer = qasync.QThreadExecutor(1)  # the modules' import runs here; shut down below
    aloop.set_default_executor(importer)
    try:
        task = aloop.create_task(build_window_async(parse_args([str(path)]), settings, ahead))
        qtbot.waitUntil(task.done, timeout=10000)
    finally:
        aloop.set_default_executor(None)
        importer.shutdown()
    ctx, window = task.result()
    qtbot.addWidget(window)
    return ahead, ctx, window
