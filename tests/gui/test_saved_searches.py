"""Saved searches: a named query with its filters, mode and scope, under the sidebar, kept."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt

from .conftest import started_window, wait_idle


def test_save_a_search_find_it_after_a_restart_and_run_it(ora_home, filled_db, settings, aloop, qtbot):
    filled_db(30)

    ctx, window = started_window(ora_home, settings, qtbot)
    saved = window.saved
    assert not saved.list.isVisible()  # nothing saved: no empty box under the sidebar
    window.browser.search.field.setText("deploys")
    window.browser.search.quick["low_health"].setChecked(True)
    qtbot.waitUntil(lambda: not window.browser.model.is_loading(), timeout=10000)
    dialog = saved.ask_name()
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    dialog.setTextValue("Weak deploy notes")
    dialog.accept()
    assert saved.list.isVisible() and saved.list.item(0).text() == "Weak deploy notes"
    assert "deploys" in saved.list.searches[0].query and "health:<=0.3" in saved.list.searches[0].query
    window.close()
    ctx.close()
    settings.sync()

    ctx2, window2 = started_window(ora_home, QSettings(settings.fileName(), QSettings.Format.IniFormat), qtbot)
    listing = window2.saved.list
    assert listing.count() == 1 and listing.isVisible()
    listing.itemActivated.emit(listing.item(0))
    browser = window2.browser

    def narrowed() -> bool:
        wait_idle(qtbot, window2)
        shown = [browser.model.memory_at(r) for r in range(browser.model.rowCount())]
        return bool(shown) and all("deploys" in m.content and m.health_score <= 0.3 for m in shown)
    qtbot.waitUntil(narrowed, timeout=10000)
    assert "health:<=0.3" in browser.search.field.text()
    listing.setCurrentRow(0)
    qtbot.keyClick(listing, Qt.Key.Key_Delete)  # forgotten, and so after a restart too
    assert listing.count() == 0 and not listing.isVisible()
    window2.close()
    ctx2.close()
