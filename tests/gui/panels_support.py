"""Helpers for the Jobs, Backups, Charts and Task panel tests.

Each test builds the real ``AppContext`` on a real qasync loop and drives the panel inside
``loop.run_until_complete(scenario())``: waits are ``await until(...)`` (asyncio sleeps that let
Qt run), never nested Qt event loops (no ``exec()``, no ``qtbot.waitSignal`` inside a coroutine).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import PySide6  # noqa: F401  (PySide6 before qasync)
import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from ora_desktop.core import OraHome
from ora_desktop.gui.context import AppContext


async def until(condition: Callable[[], object], timeout: float = 15.0, what: str = "condition") -> None:
    """Let the loop (and Qt) run until ``condition()`` is true, or fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


@pytest.fixture(name="loop")
def loop_fixture(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop over the test's QApplication, installed as the current asyncio loop."""
    event_loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    pending = [task for task in asyncio.all_tasks(event_loop) if not task.done()]
    for task in pending:  # reloads still waiting when the test ended
        task.cancel()
    if pending:
        event_loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    event_loop.close()
    asyncio.set_event_loop(None)
    # Collect the closed loop's Qt timer objects here, on the GUI thread: left to the cyclic GC
    # they may be freed on a worker thread, leaving Qt a dangling timer (a later segfault).
    del event_loop
    gc.collect()


@pytest.fixture(name="ctx")
def ctx_fixture(loop: asyncio.AbstractEventLoop, ora_home: Path, tmp_path: Path) -> Iterator[AppContext]:
    """The real application context over the test's ORA_HOME."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    context = AppContext(OraHome(ora_home), settings)
    yield context
    context.close()
    del context
    gc.collect()


def visible_message_boxes() -> list[QMessageBox]:
    """Message boxes currently shown (opened with ``open()``)."""
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def top_dialogs(kind: type[QWidget]) -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
