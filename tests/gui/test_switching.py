"""Switching between agents and files: what is shown always belongs to the file listed."""

from __future__ import annotations

from .conftest import wait_idle
from .test_curate import select_id


def test_opening_another_agent_selects_its_top_row(make_window, filled_db, ora_home, qtbot):
    filled_db(12)
    other = filled_db(12, agent="other")
    window = make_window()
    wait_idle(qtbot, window)
    select_id(qtbot, window, "m004")  # rowid 5 here; in the other file rowid 5 is another memory
    assert window.browser.table.currentIndex().row() != 0
    window.sidebar.setCurrentItem(window.sidebar.item_for(other))
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.store.path == other
                    and not window.browser.model.is_loading(), timeout=10000)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.browser.table.currentIndex().isValid(), timeout=5000)
    assert window.browser.table.currentIndex().row() == 0
    top = window.browser.model.memory_at(0)
    qtbot.waitUntil(lambda: window.browser.detail.memory is not None
                    and window.browser.detail.memory.id == top.id, timeout=5000)
    assert window.browser.table.verticalScrollBar().value() == 0


def test_a_broken_file_shows_no_facets_of_the_previous_one(make_window, filled_db, ora_home, qtbot):
    filled_db(12)
    broken = ora_home / "sites" / "anwe-sh" / "broken.site.db"
    broken.write_bytes(b"this is not a database at all" * 10)
    window = make_window()
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.browser.facets.topLevelItemCount() > 0, timeout=5000)
    window.sidebar.setCurrentItem(window.sidebar.item_for(broken))
    qtbot.waitUntil(lambda: "cannot be opened" in window.browser.message.text(), timeout=5000)
    qtbot.wait(300)
    assert window.browser.facets.topLevelItemCount() == 0


def test_after_a_restore_replaced_the_file_new_and_delete_work_at_once(make_window, filled_db, qtbot):
    path = filled_db(12)
    window = make_window()
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.curator.new_action.isEnabled(), timeout=5000)
    window.ctx.forget_store(path)  # what the Backups tab does after a restore replaced the file
    # no click: the window reopens the file by itself and the actions follow
    qtbot.waitUntil(lambda: window.ctx.cached_store(path) is not None and window.curator.new_action.isEnabled()
                    and window.browser.store is window.ctx.cached_store(path), timeout=10000)
