"""The main window: first run, sidebar, opening files, read-only, remembered state, About."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMessageBox

from ora_desktop.core import OraHome
from ora_desktop.gui.context import AppContext
from ora_desktop.gui.main_window import MainWindow

from .conftest import db_rows, started_window


def test_first_run_offers_a_demo_site(make_window, ora_home, qtbot):
    window = make_window(wait_for_rows=False)
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.welcome, timeout=10000)
    assert window.welcome.isVisible()
    assert window.welcome.open_button.text() == "Open a file…"
    qtbot.mouseClick(window.welcome.demo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.demo_task.done(), timeout=60000)
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.browser, timeout=30000)
    qtbot.waitUntil(lambda: window.browser.model.rowCount() > 0, timeout=20000)
    sites = {s.slug for s in OraHome(ora_home).sites()}
    assert len(sites) >= 2
    labels = [item.text(0) for item in window.sidebar.file_items()]
    assert any("(task)" in label for label in labels)  # task agents are marked
    assert all(item.text(1) for item in window.sidebar.file_items())  # memory counts shown


def test_sidebar_greys_broken_files_and_sees_new_ones(make_window, filled_db, ora_home, qtbot):
    filled_db(5)
    broken = ora_home / "sites" / "anwe-sh" / "broken.site.db"
    broken.write_bytes(b"this is not a database at all" * 10)
    window = make_window()
    item = window.sidebar.item_for(broken)
    assert item is not None and item.text(1) == "—"
    assert "not an SQLite database" in item.toolTip(0)
    assert item.foreground(0).color() != window.sidebar.item_for(window.ctx.current_path()).foreground(0).color()
    window.sidebar.setCurrentItem(item)
    qtbot.waitUntil(lambda: "cannot be opened" in window.browser.message.text(), timeout=5000)
    assert window.browser.center.currentWidget() is window.browser.message_page
    assert not window.browser.recover_button.isVisible()  # not a database at all: nothing to salvage
    # a new agent file appears without a restart (QFileSystemWatcher)
    filled_db(3, site="anwe-sh", agent="newcomer")
    qtbot.waitUntil(lambda: window.sidebar.item_for(ora_home / "sites" / "anwe-sh" / "newcomer.site.db")
                    is not None, timeout=10000)
    assert window.sidebar.item_for(ora_home / "sites" / "anwe-sh" / "newcomer.site.db").text(1) == "3"


def test_open_a_file_from_elsewhere_by_drop_and_recent(make_window, filled_db, tmp_path, seed_db, qtbot):
    filled_db(4)
    window = make_window()
    from tests.conftest import raw_seed_db

    outside = raw_seed_db(tmp_path / "elsewhere" / "guest.site.db", [("g1", "guest memory", "fact", 4)])
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(outside))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == outside.resolve()
                    and window.browser.model.rowCount() == 1, timeout=10000)
    assert window.sidebar.item_for(outside) is not None
    assert window.recent_files()[0] == str(outside.resolve())
    window._fill_recent()
    assert window.recent_menu.actions()[0].text() == str(outside.resolve())
    assert window.windowTitle().startswith("guest.site.db")
    window.open_file(tmp_path / "missing.site.db")  # a readable message, nothing opened
    assert window.browser.store.path == outside.resolve()


def test_read_only_changes_nothing(ora_home, filled_db, settings, aloop, qtbot):
    path = filled_db(5)
    before = path.read_bytes()
    ctx = AppContext(OraHome(ora_home), settings, read_only=True)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 5, timeout=10000)
    assert window.readonly_label.isVisible()
    assert not window.curator.new_action.isEnabled()
    window.browser.table.selectRow(1)
    assert not window.curator.delete_action.isEnabled()
    qtbot.waitUntil(lambda: window.browser.detail.memory is not None, timeout=5000)
    assert window.browser.detail.editor.content.isReadOnly()
    assert not window.browser.detail.save_button.isEnabled()
    window.close()
    ctx.close()
    assert path.read_bytes() == before


def test_layout_and_columns_are_remembered(ora_home, filled_db, settings, aloop, qtbot):
    filled_db(3)
    ctx = AppContext(OraHome(ora_home), settings)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    window.resize(700, 500)
    window.browser.table.set_column_visible(2, False)
    window.close()
    ctx.close()
    settings.sync()
    ctx2 = AppContext(OraHome(ora_home), QSettings(settings.fileName(), QSettings.Format.IniFormat))
    window2 = MainWindow(ctx2)
    qtbot.addWidget(window2)
    assert window2.size().width() == 700
    assert window2.browser.table.isColumnHidden(2)
    window2.close()
    ctx2.close()


def test_menus_shortcuts_and_about(make_window, filled_db, qtbot):
    filled_db(3)
    window = make_window()
    menus = [a.text() for a in window.menuBar().actions()]
    assert menus == ["&File", "&Edit", "&View", "&Help"]
    assert window.open_action.shortcut().toString() == "Ctrl+O"
    assert window.find_action.shortcut().toString() == "Ctrl+F"
    assert window.curator.delete_action.shortcut().toString() == "Del"
    window.about()
    box = window._about
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "PySide6" in box.informativeText() and "SQLite" in box.informativeText()
    box.close()
    assert window.count_label.text().startswith("3 memories")
    assert window.file_label.text() == "anwe-sh/ora"


def test_icons_and_dark_style_come_from_the_package_data(qapp):
    """An installed wheel has its icons and dark style: they are read from ora_desktop/resources
    through importlib.resources, wherever the package lives."""
    from ora_desktop.gui import resources

    folder = resources.resource_dir()
    assert folder.parent.name == "ora_desktop"
    assert not resources.app_icon().isNull()
    assert {size.width() for size in resources.app_icon().availableSizes()} >= {48, 64, 128, 256}
    dark = resources.style_sheet(dark=True)
    assert "@ICONS@" not in dark and (folder / "icons" / "check.svg").as_posix() in dark


def test_the_live_memory_of_a_chain_is_marked(make_window, filled_db, qtbot):
    path = filled_db(4)
    from ora_desktop.core import open_store

    with open_store(path) as store:
        store.supersede("m001", "m002")
    window = make_window()
    window.browser.follow("m001")
    detail = window.browser.detail
    qtbot.waitUntil(lambda: detail.chain_list.count() == 2, timeout=10000)
    labels = [detail.chain_list.item(i).text() for i in range(2)]
    assert labels[0].startswith("● live") and "number 2" in labels[0]
    assert labels[1].startswith("○") and "number 1" in labels[1]
    assert "recall threshold" in detail.health.text()
    assert db_rows(path, "SELECT count(*) FROM memories") == [(4,)]


def test_the_count_says_how_many_superseded_memories_the_list_hides(make_window, filled_db, qtbot):
    """The sidebar counts every row; the list hides superseded ones by default. The status bar
    says how many it hides, so the two numbers never disagree unexplained (5 listed, 6 in the
    sidebar), and says nothing of it while a search narrows the list."""
    path = filled_db(6)
    from ora_desktop.core import open_store

    with open_store(path) as store:
        store.supersede("m001", "m002")
    window = make_window()
    qtbot.waitUntil(lambda: window.sidebar.info_for(window.sidebar.item_for(path)).count == 6, timeout=10000)
    window.browser.table.clearSelection()
    qtbot.waitUntil(lambda: window.count_label.text() == "5 memories (1 superseded hidden)", timeout=10000)
    window.browser.search.field.setText("deploys")
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 2, timeout=10000)
    qtbot.waitUntil(lambda: window.count_label.text().startswith("2 memories"), timeout=10000)
    assert "hidden" not in window.count_label.text()


def test_an_edit_counts_again_only_its_own_file_in_the_sidebar(make_window, filled_db, qtbot, monkeypatch):
    from ora_desktop.gui.sidebar import view as sidebar_view

    from .test_curate import select_id

    path = filled_db(10)
    filled_db(5, agent="other")
    window = make_window()
    window.ctx.start_watching(3_600_000)  # only the window's own write in this test
    item = window.sidebar.item_for(path)
    qtbot.waitUntil(lambda: item is not None and "Average health" in item.toolTip(0), timeout=10000)
    before = window.sidebar.info_for(item).average_health
    scans = []
    real = sidebar_view.scan
    monkeypatch.setattr(sidebar_view, "scan", lambda *args: scans.append(1) or real(*args))
    select_id(qtbot, window, "m004")  # health 0.4
    window.browser.detail.editor.health.setText("1")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.sidebar.info_for(window.sidebar.item_for(path)).average_health
                    == pytest.approx(before + 0.06), timeout=10000)
    item = window.sidebar.item_for(path)
    assert f"{before + 0.06:.2f}" in item.toolTip(0) and item.text(1) == "10"
    qtbot.wait(500)
    assert scans == []  # the other files were not read again


def test_an_importance_edit_does_not_count_the_file_again(make_window, filled_db, qtbot, monkeypatch):
    """An edit that leaves every health score as it was cannot move the sidebar's count or health:
    the file is not read again (a scan of every row at a million memories)."""
    from ora_desktop.gui.sidebar import view as sidebar_view

    from .test_curate import select_id

    path = filled_db(10)
    window = make_window()
    window.ctx.start_watching(3_600_000)  # only the window's own write in this test
    item = window.sidebar.item_for(path)
    qtbot.waitUntil(lambda: item is not None and "Average health" in item.toolTip(0), timeout=10000)
    before = window.sidebar.info_for(item)
    counted = []
    real = sidebar_view.file_info
    monkeypatch.setattr(sidebar_view, "file_info", lambda *args: counted.append(args[1]) or real(*args))
    select_id(qtbot, window, "m004")
    window.browser.detail.editor.importance.setText("9")
    qtbot.mouseClick(window.browser.detail.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: db_rows(path, "SELECT importance FROM memories WHERE id = 'm004'") == [(9,)], timeout=10000)
    qtbot.wait(800)  # past the sidebar's 300 ms recount debounce
    assert counted == []
    assert window.sidebar.info_for(window.sidebar.item_for(path)) == before


def test_the_window_names_its_desktop_entry_so_a_dock_ties_it_to_the_launcher(qapp):
    """Wayland's app id and X11's WM_CLASS instance (RESOURCE_NAME, read by Qt's xcb plugin) are
    the desktop entry's StartupWMClass; the packaging test checks WM_CLASS under Xvfb with xprop."""
    import configparser
    import os
    from importlib import resources

    from ora_desktop.gui.app import make_application

    app = make_application()
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string((resources.files("ora_desktop.resources") / "org.ora.Desktop.desktop").read_text())
    wm_class = parser["Desktop Entry"]["StartupWMClass"]
    assert app.desktopFileName() == wm_class == "org.ora.Desktop"
    assert os.environ["RESOURCE_NAME"] == wm_class


def test_a_restart_shows_the_agent_viewed_last(ora_home, filled_db, settings, aloop, qtbot):
    """The window opens on the file a person left it on, not on the home's first file."""
    filled_db(3, site="acme-shop", agent="legacy")  # listed first
    chosen = filled_db(5, site="anwe-sh", agent="ora")

    ctx, window = started_window(ora_home, settings, qtbot)
    assert window.browser.store.path.name == "legacy.site.db"
    window.sidebar.select_path(chosen)
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == chosen, timeout=10000)
    window.close()
    ctx.close()
    settings.sync()
    ctx2, window2 = started_window(ora_home, QSettings(settings.fileName(), QSettings.Format.IniFormat), qtbot)
    assert window2.browser.store.path == chosen
    assert window2.sidebar.currentItem() is window2.sidebar.item_for(chosen)
    window2.close()
    ctx2.close()
