"""After the window's Empty trash…, another program's write and exit leave the window's next
write on disk (a byte scan that closed a descriptor of the file would drop SQLite's locks)."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtCore import Qt

from tests.integration.test_kept_locks import AGENT, READ, deleted_files

from .conftest import db_rows, wait_idle
from .test_purge import _confirm


def test_a_write_after_empty_trash_and_another_program_reaches_the_disk(make_window, filled_db, qtbot):
    path = filled_db(10)
    window = make_window()
    wait_idle(qtbot, window)
    store = window.ctx.store_for(path)
    store.delete(["m001", "m002"])
    window.curator.deleted_action.trigger()
    view = window.curator.deleted_view
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 2, timeout=10000)
    qtbot.mouseClick(view.empty_button, Qt.MouseButton.LeftButton)
    _confirm(qtbot, window, "2 memories")
    qtbot.waitUntil(lambda: db_rows(path, "SELECT count(*) FROM ora_desktop_trash") == [(0,)], timeout=10000)
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 0, timeout=10000)
    view.close()
    subprocess.run([sys.executable, "-c", AGENT, str(path), "from-another-program"], check=True, timeout=60)
    store.update("m005", importance=9)
    assert deleted_files(path) == []
    fresh = subprocess.run([sys.executable, "-c", READ, str(path), "m005"], check=True, timeout=60,
                           capture_output=True, text=True)
    assert fresh.stdout.strip() == "9"
