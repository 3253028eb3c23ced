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
    qtbot.mouseClick(bar.dismiss_button, Qt.MouseButton.LeftButton)
    assert not bar.isVisible() and bar.notices == []
