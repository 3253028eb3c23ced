"""The detail pane's Related list and the memory it shows follow deletes made anywhere."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from .conftest import wait_idle


def _agent_deletes(path, memory_id):
    """Another program deletes ``memory_id`` (a real second process, through the library)."""
    code = "import ora_desktop, sys; s = ora_desktop.open_store(sys.argv[1]); s.delete([sys.argv[2]])"
    subprocess.run([sys.executable, "-c", code, str(path), memory_id], check=True)


def _related(detail):
    return [detail.related.item(i).text() for i in range(detail.related.count())]


def _shown_text(detail):
    return " ".join([detail.title.text(), detail.meta.text(), detail.related_note.text(), *_related(detail)])


def test_the_related_pane_shows_current_state_after_deletes(make_window, filled_db, qtbot):
    path = filled_db(12)
    with sqlite3.connect(path) as conn:
        conn.execute("""UPDATE memories SET related_to='["m002", "m004"]' WHERE id = 'm001'""")
    window = make_window()
    browser, detail = window.browser, window.browser.detail
    wait_idle(qtbot, window)
    browser.controller.set_text("deploys", immediate=True)  # m001 is not listed: the pane follows it alone
    qtbot.waitUntil(lambda: not browser.model.is_loading() and browser.model.rowCount() == 4, timeout=10000)
    browser.follow("m001")
    qtbot.waitUntil(lambda: detail.memory is not None and detail.memory.id == "m001" and len(_related(detail)) == 2,
                    timeout=10000)
    _agent_deletes(path, "m002")  # a memory the shown one links to
    # The delete unlinked it (core removes links to a deleted memory): the list says so, not "not in this file".
    qtbot.waitUntil(lambda: detail.memory.related_to == ("m004",), timeout=10000)
    qtbot.waitUntil(lambda: _related(detail) == ["Memory number 4 about coffee"], timeout=10000)
    assert "not in this file" not in _shown_text(detail)
    _agent_deletes(path, "m001")  # the shown memory itself
    # It goes from the pane, which says so (then, with nothing selected, the table may select its top row).
    qtbot.waitUntil(lambda: detail.memory is None or detail.memory.id != "m001", timeout=10000)
    qtbot.wait(500)  # a links read started for it must not report it missing
    assert "no memory with id" not in _shown_text(detail)
    if detail.memory is None:
        assert "was deleted" in detail.meta.text() and _related(detail) == []
    else:
        assert len(_related(detail)) == len(detail.memory.related_to)
