"""The window's settings file (recent files name memory files) is private like every file the app creates."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from PySide6.QtCore import QSettings

from ora_desktop.gui.app import make_application, private_settings


def test_window_settings_are_0600_in_a_0700_folder(qapp, isolated_dirs: Path) -> None:
    make_application()
    old = os.umask(0o022)
    try:
        QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(isolated_dirs / "config"))
        settings = private_settings()
        settings.setValue("recent", ["/home/someone/.ora/sites/private/ora.site.db"])
        settings.sync()
    finally:
        os.umask(old)
    path = Path(settings.fileName())
    assert path.is_relative_to(isolated_dirs / "config") and path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
