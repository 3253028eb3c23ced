"""Opening a file: the GUI thread reads no file (the store opens on a worker), and the actions
that depend on the file (File > Export…, File > Import…) follow the store once it is open."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from ora_desktop.core import OraHome
from ora_desktop.gui import context as context_module
from ora_desktop.gui.context import AppContext, path_of
from ora_desktop.gui.main_window import MainWindow
from ora_desktop.gui.sidebar.view import ITEM_ROLE
from tests.conftest import raw_seed_db


@pytest.fixture
def opened_on(monkeypatch) -> list[str]:
    """The thread each store was opened on, "GUI" or "worker" (the context's ``open_store``,
    recorded as it starts); ``.paths`` lists the files in the same order."""
    threads = Opened()
    real = context_module.open_store

    def recording(path, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        threads.paths.append(Path(path))
        threads.append("GUI" if threading.current_thread() is threading.main_thread() else "worker")
        return real(path, *args, **kw)

    monkeypatch.setattr(context_module, "open_store", recording)
    return threads


class Opened(list):
    def __init__(self) -> None:
        super().__init__()
        self.paths: list[Path] = []

    def clear(self) -> None:
        super().clear()
        self.paths.clear()


def shown(window: MainWindow, path: Path) -> bool:
    store = window.browser.store
    return store is not None and store.path == path.resolve() and not window.browser.model.is_loading()


def actions(window: MainWindow) -> tuple[bool, bool]:
    return window.exchanger.export_action.isEnabled(), window.exchanger.import_action.isEnabled()


def test_a_writable_file_opens_on_a_worker_and_export_and_import_follow(make_window, filled_db, tmp_path,
                                                                        opened_on, qtbot):
    filled_db(4)
    window = make_window()
    outside = raw_seed_db(tmp_path / "elsewhere" / "guest.site.db", [("g1", "guest memory", "fact", 4)])
    opened_on.clear()
    window.open_file(outside)
    assert actions(window) == (False, False)  # not open yet: nothing to export or import into
    qtbot.waitUntil(lambda: shown(window, outside) and actions(window) == (True, True), timeout=10000)
    assert opened_on and set(opened_on) == {"worker"}


def test_a_broken_file_is_refused_once_on_a_worker_and_disables_both(make_window, filled_db, tmp_path,
                                                                     opened_on, qtbot):
    home_file = filled_db(4)
    window = make_window()
    qtbot.waitUntil(lambda: actions(window) == (True, True), timeout=5000)
    broken = tmp_path / "broken.site.db"
    broken.write_bytes(b"this is not a database at all" * 10)
    messages: list[str] = []
    window.ctx.status.connect(messages.append)
    opened_on.clear()
    window.open_file(broken)
    qtbot.waitUntil(lambda: "cannot be opened" in window.browser.message.text(), timeout=10000)
    assert actions(window) == (False, False)
    assert opened_on and set(opened_on) == {"worker"}
    assert len([m for m in messages if "not an SQLite database" in m]) == 1  # said once, not per view
    # back to the open file: both actions at once, nothing opened again
    qtbot.waitUntil(lambda: (item := window.sidebar.item_for(broken)) is not None
                    and window.sidebar.currentItem() is item, timeout=10000)
    opened_on.clear()
    window.sidebar.setCurrentItem(window.sidebar.item_for(home_file))
    assert actions(window) == (True, True)
    qtbot.waitUntil(lambda: shown(window, home_file), timeout=10000)
    assert "GUI" not in opened_on


def test_a_read_only_window_offers_export_but_not_import(ora_home, filled_db, tmp_path, settings, aloop,
                                                         opened_on, qtbot):
    filled_db(3)
    outside = raw_seed_db(tmp_path / "elsewhere" / "guest.site.db", [("g1", "guest memory", "fact", 4)])
    ctx = AppContext(OraHome(ora_home), settings, read_only=True)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.model.rowCount() == 3,
                    timeout=10000)
    opened_on.clear()
    window.open_file(outside)
    qtbot.waitUntil(lambda: shown(window, outside) and window.exchanger.export_action.isEnabled(), timeout=10000)
    assert not window.exchanger.import_action.isEnabled()
    assert opened_on and set(opened_on) == {"worker"}
    window.close()
    ctx.close()


def test_a_file_another_program_holds_locked_does_not_hold_up_opening_another(ctx, filled_db, tmp_path,
                                                                              opened_on, qtbot):
    other = filled_db(3)
    locked = raw_seed_db(tmp_path / "locked.site.db", [("l1", "locked memory", "fact", 4)])
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")  # a rollback journal: an exclusive lock keeps readers out
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE memories SET importance = 5")
    try:
        waiting = ctx.loop.create_task(ctx.run(ctx.store_for, locked))
        qtbot.waitUntil(lambda: locked.resolve() in opened_on.paths, timeout=5000)  # waiting for the lock
        opening = ctx.loop.create_task(ctx.run(ctx.store_for, other))
        qtbot.waitUntil(opening.done, timeout=4000)  # well within the 5 s the locked file may wait
        assert opening.result().path == other.resolve()
        assert not waiting.done()
    finally:
        holder.rollback()
        holder.close()
    qtbot.waitUntil(waiting.done, timeout=10000)  # the lock went: it opens
    assert waiting.result().path == locked.resolve() and ctx.cached_store(locked) is waiting.result()


def test_opening_a_file_from_elsewhere_counts_that_file_alone(make_window, filled_db, tmp_path, monkeypatch, qtbot):
    from ora_desktop.gui.sidebar import model as sidebar_model

    home_files = [filled_db(4), filled_db(6, agent="other")]
    window = make_window()
    qtbot.waitUntil(lambda: all(window.sidebar.item_for(p) is not None for p in home_files), timeout=10000)
    counted: list[Path] = []
    real = sidebar_model.file_health
    monkeypatch.setattr(sidebar_model, "file_health", lambda store: counted.append(store.path) or real(store))
    outside = raw_seed_db(tmp_path / "elsewhere" / "guest.site.db", [("g1", "guest memory", "fact", 4)])
    window.open_file(outside)
    qtbot.waitUntil(lambda: (item := window.sidebar.item_for(outside)) is not None and item.text(1) == "1"
                    and window.sidebar.currentItem() is item, timeout=10000)
    assert counted == [outside.resolve()]  # not every file of every site again (a full read of each)
    assert [window.sidebar.item_for(p).text(1) for p in home_files] == ["4", "6"]
    assert window.sidebar.item_for(outside).parent().text(0) == "Opened files"
    window.open_file(home_files[1])  # listed already: nothing read to list it
    window.open_file(outside)
    qtbot.waitUntil(lambda: shown(window, outside), timeout=10000)
    assert counted == [outside.resolve()]
    listed = [i for i in window.sidebar.file_items() if path_of(i.data(0, ITEM_ROLE)) == outside.resolve()]
    assert len(listed) == 1


def test_switching_between_listed_files_asks_the_file_system_nothing_on_the_gui_thread(make_window, filled_db,
                                                                                       monkeypatch, qtbot):
    import os

    first, second = filled_db(4), filled_db(6, agent="other")
    window = make_window()
    for path in (second, first):  # each shown once: opened and listed
        window.sidebar.setCurrentItem(window.sidebar.item_for(path))
        qtbot.waitUntil(lambda path=path: shown(window, path), timeout=10000)
    asked: list[str] = []

    def recording(name: str):  # noqa: ANN202
        real = getattr(os, name)

        def call(*args, **kw):  # noqa: ANN002, ANN003, ANN202
            if threading.current_thread() is threading.main_thread():
                asked.append(f"{name}{args[:1]}")
            return real(*args, **kw)
        return call

    for name in ("stat", "lstat", "listdir", "scandir"):
        monkeypatch.setattr(os, name, recording(name))
    # Each call waits for the GIL again after it, up to 5 ms while a worker computes (a file
    # opening, an index building): resolving every listed path at each switch added up to 100 ms.
    window.sidebar.setCurrentItem(window.sidebar.item_for(second))
    assert asked == []
    qtbot.waitUntil(lambda: shown(window, second), timeout=10000)
    assert actions(window) == (True, True)


def test_opening_a_file_saves_the_recent_list_off_the_gui_thread_and_it_lasts(ora_home, filled_db, tmp_path,
                                                                              settings, aloop, qtbot):
    filled_db(3)
    outside = raw_seed_db(tmp_path / "elsewhere" / "guest.site.db", [("g1", "guest memory", "fact", 4)])
    ctx = AppContext(OraHome(ora_home), settings)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.model.rowCount() == 3, timeout=10000)
    written: list[str] = []
    settings.setValue = lambda key, *rest: written.append(key)  # the GUI thread's own settings object
    window.open_file(outside)
    # A write to the window's settings syncs the file to disk on the GUI thread (two fdatasync,
    # which wait for a busy disk): the list is saved on a worker, and read back by another reader.
    assert written == [] and window.recent_files() == [str(outside.resolve())]
    file_name = settings.fileName()
    qtbot.waitUntil(lambda: QSettings(file_name, QSettings.Format.IniFormat).value("files/recent")
                    in ([str(outside.resolve())], str(outside.resolve())), timeout=5000)
    del settings.setValue
    window._fill_recent()
    [clear] = [a for a in window.recent_menu.actions() if a.text() == "Clear list"]
    clear.trigger()
    assert window.recent_files() == []
    window.open_file(outside)
    window.close()
    ctx.close()
    again = MainWindow(AppContext(OraHome(ora_home), QSettings(file_name, QSettings.Format.IniFormat)))
    qtbot.addWidget(again)
    assert again.recent_files() == [str(outside.resolve())]
    again.ctx.close()
