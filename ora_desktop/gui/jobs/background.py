"""Running panel work off the GUI thread: latest-wins reloads and thread-safe progress.

Shared by the Jobs, Backups, Charts and Task panels. Work runs through ``ctx.run`` (the qasync
loop's executor); results come back on the GUI thread as the awaited value. Callbacks from the
worker thread (progress) are marshalled with ``loop.call_soon_threadsafe``, never by emitting Qt
signals from a plain thread.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)


class Latest:
    """Holds the one reload in flight for a view; starting another cancels the older one.

    A cancelled reload's worker finishes in its thread, but its result is never shown.
    """

    def __init__(self) -> None:
        self._task: asyncio.Task | None = None

    def start(self, coro: Awaitable[Any]) -> asyncio.Task | None:
        """Run ``coro`` as the view's reload; ``None`` (and ``coro`` closed) when the event loop
        is already gone — a debounce timer that fires while the window closes."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        try:
            self._task = asyncio.ensure_future(coro)
        except RuntimeError:
            if inspect.iscoroutine(coro):
                coro.close()  # never awaited: close it so Python does not warn
            log.debug("reload dropped: no event loop (the window is closing)")
            self._task = None
            return None
        self._task.add_done_callback(_log_failure)
        return self._task

    @property
    def task(self) -> asyncio.Task | None:
        return self._task

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()


def _log_failure(task: asyncio.Task) -> None:
    if task.cancelled() or task.exception() is None:
        return
    exc = task.exception()
    if isinstance(exc, RuntimeError) and "shutdown" in str(exc):
        log.debug("reload dropped: the window is closing")  # the worker pool is already shut down
        return
    log.error("background reload failed", exc_info=exc)


class Progress:
    """A progress callback safe to call from a worker thread; the GUI sees the latest value.

    ``report(done, total, message)`` may be called thousands of times a second: only the most
    recent value is delivered, at most once per turn of the event loop. ``cancel`` is a
    ``threading.Event`` the worker polls (``progress.cancelled()``).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, on_progress: Callable[[int, int, str], None]) -> None:
        self._loop = loop
        self._on_progress = on_progress
        self._lock = threading.Lock()
        self._latest: tuple[int, int, str] | None = None
        self._scheduled = False
        self.cancel = threading.Event()

    def report(self, done: int = 0, total: int = 0, message: str = "") -> None:
        """Called from the worker thread."""
        with self._lock:
            self._latest = (int(done or 0), int(total or 0), str(message or ""))
            if self._scheduled:
                return
            self._scheduled = True
        if self._loop.is_closed():  # the window closed while the job ran (qasync would not check)
            return
        try:
            self._loop.call_soon_threadsafe(self._deliver)
        except RuntimeError:
            pass

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.report(*args, **kwargs)

    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def _deliver(self) -> None:
        with self._lock:
            latest, self._latest, self._scheduled = self._latest, None, False
        if latest is not None:
            self._on_progress(*latest)
