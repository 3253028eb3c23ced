"""Notices that must not be missed stay at the top of the window until dismissed."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_notices_stay_until_dismissed(make_window, filled_db, qtbot):
    filled_db(5)
    window = make_window()
    bar = window.notices
    assert not bar.isVisible()
    window.ctx.notice.emit("Scheduled cleanup changed ora (anwe-sh): expired 3.")
    window.ctx.notice.emit("Scheduled decay changed ora (anwe-sh): decayed 12.")
    assert bar.isVisible()
    assert bar.label.text().startswith("Scheduled decay changed ora (anwe-sh): decayed 12.")
    assert "1 earlier notice" in bar.label.text() and "expired 3" in bar.toolTip()
    assert bar.all_button.isVisible()
    qtbot.mouseClick(bar.dismiss_button, Qt.MouseButton.LeftButton)
    assert not bar.isVisible() and bar.notices == []


def test_every_notice_is_listed_with_its_file(make_window, filled_db, qtbot):
    """Nine notices: the newest shows, and "All notices" lists all nine, newest first (not a tooltip)."""
    filled_db(5)
    window = make_window()
    bar = window.notices
    for n in range(9):
        window.ctx.notice.emit(f"Scheduled cleanup changed agent{n} (anwe-sh): expired {n + 1}.")
    assert bar.label.text().startswith("Scheduled cleanup changed agent8 (anwe-sh)")
    assert not bar.list.isVisible() and bar.all_button.text() == "All notices (9)"
    qtbot.mouseClick(bar.all_button, Qt.MouseButton.LeftButton)
    assert bar.list.isVisible() and bar.list.count() == 9
    assert [bar.list.item(i).text().split(" changed ")[1].split(" ")[0] for i in range(3)] == [
        "agent8", "agent7", "agent6"]
    qtbot.mouseClick(bar.dismiss_button, Qt.MouseButton.LeftButton)
    assert bar.list.count() == 0 and not bar.isVisible()
