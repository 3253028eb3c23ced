"""GUI test fixtures: a qasync loop on pytest-qt's QApplication, a context, a window.

The loop is created with ``already_running=True``: coroutines and ``@asyncSlot`` tasks run while
pytest-qt spins Qt's event loop (``qtbot.waitUntil``), and test bodies stay plain functions —
no test awaits inside a nested Qt loop (ARCHITECTURE.md, "Pitfalls of the stack").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import qasync  # noqa: I001  (PySide6 is imported first, as qasync requires)
from PySide6.QtCore import QSettings

from ora_desktop.core import OraHome, open_store
from ora_desktop.gui.app import make_application
from ora_desktop.gui.context import AppContext


@pytest.fixture
def aloop(qapp) -> Iterator[asyncio.AbstractEventLoop]:
    make_application()
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    qapp.processEvents()
    loop._after_run_forever()  # noqa: SLF001 (the documented cleanup of an already-running loop)
    asyncio.events._set_running_loop(None)  # noqa: SLF001
    asyncio.set_event_loop(None)


@pytest.fixture
def settings(isolated_dirs: Path) -> QSettings:
    return QSettings(str(isolated_dirs / "config" / "gui-test.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def ctx(aloop, ora_home: Path, settings: QSettings) -> Iterator[AppContext]:
    context = AppContext(OraHome(ora_home), settings)
    yield context
    context.close()


@pytest.fixture
def filled_db(seed_db: Callable[..., Path]) -> Callable[..., Path]:
    """Factory: a seed file with ``n`` memories of mixed types, importance and health."""

    def make(n: int = 30, site: str = "anwe-sh", agent: str = "ora") -> Path:
        path = seed_db(site=site, agent=agent)
        types = ("fact", "preference", "context", "task", "conversation")
        with open_store(path) as store:
            store.add_many(
                {
                    "id": f"m{i:03d}",
                    "content": f"Memory number {i} about {'deploys' if i % 3 == 0 else 'coffee'}\nsecond line {i}",
                    "type": types[i % 5],
                    "importance": 1 + i % 10,
                    "health_score": round((i % 11) / 10, 2),
                    "created_at": f"2026-01-{1 + i % 28:02d} 10:00:00",
                }
                for i in range(n)
            )
        return path

    return make


@pytest.fixture
def make_window(ctx, qtbot):
    """Factory: the real main window on ``ctx`` (shown, started); waits until a file is listed."""
    from ora_desktop.gui.main_window import MainWindow

    windows = []

    def make(wait_for_rows: bool = True):
        window = MainWindow(ctx)
        qtbot.addWidget(window)
        window.resize(1400, 860)
        window.show()
        window.start()
        windows.append(window)
        if wait_for_rows:
            qtbot.waitUntil(lambda: window.browser.store is not None and not window.browser.model.is_loading()
                            and window.browser.model.rowCount() > 0, timeout=10000)
        return window

    yield make
    for window in windows:
        window._discard_confirmed = True  # a test may end mid-edit
        window.close()


def started_window(ora_home, qsettings, qtbot):
    """A window of its own context on ``qsettings`` (a restart: a fresh context and window on the
    same settings), shown, started and listing rows; returns (context, window)."""
    from ora_desktop.gui.main_window import MainWindow

    ctx = AppContext(OraHome(ora_home), qsettings)
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.browser.store is not None and window.browser.model.rowCount() > 0, timeout=10000)
    return ctx, window


def wait_idle(qtbot, window, timeout: int = 10000) -> None:
    """Until the table's keys are loaded and the rows on screen are fetched."""
    model = window.browser.model

    def fetched() -> bool:
        rows = range(min(model.rowCount(), 20))
        for row in rows:  # asked again at every look, as a painting view does: a reload that began
            model.data(model.index(row, 0))  # after the first ask dropped the pages then asked for
        return not model.is_loading() and all(model.memory_at(r) is not None for r in rows)

    qtbot.waitUntil(fetched, timeout=timeout)


def db_rows(path, sql: str, params=()):
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()
