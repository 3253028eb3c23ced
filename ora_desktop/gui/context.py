"""``AppContext``: the one object every view of the window shares.

The contract (other GUI features code against it):

- ``ctx.home: OraHome`` — the Ora home folder shown in the sidebar.
- ``ctx.settings: QSettings`` — remembered window state, columns, recent files.
- ``ctx.read_only: bool`` — ``--read-only``: every store is opened with ``readonly=True``.
- Signals:
  - ``current_changed(object)``: the selected ``AgentFile``, a ``Path`` (a file opened from
    elsewhere) or ``None``.
  - ``data_changed(object)``: a core ``Change`` — emitted (on the GUI thread) after our own writes
    and when another process wrote (initiator external, with the ids the store's change feed read;
    ``Change.reload()``, no ids, when it could not tell: refresh all).
  - ``store_changed(object, object)``: the same, with the file's ``Path`` first:
    ``(path, change)``; views showing another file can ignore it.
  - ``status(str)``: a short message for the status bar.
- ``ctx.current`` / ``ctx.current_path()`` — the selection; ``ctx.set_current(obj)``.
- ``ctx.current_store() -> Store | None`` — the selected file's store once it is open (never
  opens it; ``None`` while it opens, when nothing is selected or when it cannot be opened): what
  actions enable themselves from, on the GUI thread.
- ``ctx.store_for(path) -> Store`` — a cached store per file, opened on first use (raises an
  ``OraError`` naming the file). Opening reads the file (a header sniff and a schema check, up to
  the busy timeout when another program holds a lock): call it through ``run``, never on the GUI
  thread.
- ``ctx.adopt_first_rows(first_rows)`` / ``await ctx.first_rows(store, query)`` — the file and
  first screenful read while the window was starting (``views.first_rows``): its store
  is the one ``store_for`` returns, and its keys answer the table's first listing if it is the
  same query (else ``None``, and the table reads them itself); ``await ctx.first_memories()`` —
  the memories those keys list, read with them (the first paint shows rows, not placeholders).
- ``await ctx.run(fn, *args, **kw)`` — runs ``fn`` in a thread pool through
  ``loop.run_in_executor`` and returns its result on the GUI thread. Every database call goes
  through here: never call the store on the GUI thread, never emit signals from worker threads.
- ``ctx.watch_interval_ms`` / ``ctx.start_watching()`` — a ``QTimer`` polls
  ``store.external_change()`` of every open store (on a dedicated worker thread, because
  ``PRAGMA data_version`` is per connection) and emits ``data_changed`` with it when another
  process wrote.
- ``ctx.notify(path, change)`` — emit the change signals for a write done outside a store listener.
- ``ctx.report_change(path, change)`` — a job or sync run on a store of its own: told by the
  watched store's feed, or here when the window does not watch that file.
- ``ctx.from_thread(fn, *args)`` — call ``fn`` on the GUI thread (for callbacks of core threads).
- ``ctx.show_error(exc)`` — a readable message dialog (non-blocking) plus a status line.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from ..core import AgentFile, Change, OraError, OraHome, Store, open_store

if TYPE_CHECKING:
    from array import array

    from ..core import ListQuery, Memory
    from ..views.first_rows import FirstRows
    from .main_window import MainWindow

log = logging.getLogger("ora_desktop.gui")
T = TypeVar("T")


@functools.lru_cache(maxsize=4096)
def _resolve(path: Path) -> Path:
    return path.expanduser().resolve()


def resolved(path: str | Path) -> Path:
    """``path`` absolute, symlinks followed, remembered for the session. The window compares
    file paths at every selection (sidebar items, cached stores); each ``resolve()`` is an lstat
    per folder of the path, and after each system call the GUI thread waits for the GIL again:
    up to a switch interval (5 ms) apiece while a worker computes in Python. (A symlink pointed
    elsewhere during the session is not followed anew.)"""
    return _resolve(Path(path))


def path_of(item: object) -> Path | None:
    """The database path of a sidebar selection (``AgentFile`` or ``Path``), or ``None``."""
    if isinstance(item, AgentFile):
        return item.path
    if isinstance(item, (str, Path)):
        return Path(item)
    return None


class AppContext(QObject):
    """Shared state and services of one window (see the module docstring for the contract)."""

    current_changed = Signal(object)
    data_changed = Signal(object)
    store_changed = Signal(object, object)
    status = Signal(str)
    #: Something the person must not miss (a scheduled job changed files): shown until dismissed.
    notice = Signal(str)
    #: A file's cached store was dropped (its file was replaced, e.g. by a restore): views showing
    #: it reopen it.
    store_forgotten = Signal(object)

    def __init__(self, home: OraHome | None = None, settings: QSettings | None = None,
                 read_only: bool = False, parent: QObject | None = None, workers: int = 3) -> None:
        super().__init__(parent)
        self.home = home or OraHome()
        self.settings = settings or QSettings()
        self.read_only = read_only
        self.current: object | None = None
        #: The main window once it is built (panels reach its table and curator through it).
        self.window: MainWindow | None = None
        self._stores: dict[Path, Store] = {}
        self._told: dict[Path, int] = {}  # changes told the views, per file (see read_as_heard)
        self._stores_lock = threading.Lock()
        #: One lock per file being opened: a file that waits (another program's lock, a slow disk)
        #: holds up only the callers that want that file.
        self._opening: dict[Path, threading.Lock] = {}
        self._first_rows: FirstRows | None = None
        self._unsubscribe: dict[Path, Callable[[], None]] = {}
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ora-db")
        self._watch_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ora-watch")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._polling = False
        self._replacing: set[Path] = set()  # files a restore is replacing: not watched meanwhile
        self._closed = False
        self.watch_interval_ms = 1000
        self._watch_timer = QTimer(self)
        self._watch_timer.timeout.connect(self._poll_external)

    # ----------------------------------------------------------------- selection
    def set_current(self, item: object | None) -> None:
        """Select an ``AgentFile``, a ``Path`` or ``None``; emits ``current_changed``."""
        if item == self.current:
            return
        self.current = item
        self.current_changed.emit(item)

    def current_path(self) -> Path | None:
        return path_of(self.current)

    # ----------------------------------------------------------------- stores
    def store_for(self, path: str | Path) -> Store:
        """The cached store of ``path`` (opened on first use; raises an ``OraError``)."""
        key = resolved(path)
        with self._stores_lock:  # called from worker threads
            store = self._stores.get(key)
            if store is not None:
                return store
            opening = self._opening.setdefault(key, threading.Lock())
        with opening:  # opened once, while other files open meanwhile
            store = self._stores.get(key)
            if store is not None:
                return store
            ahead = self._first_rows.opened(key, self.read_only) if self._first_rows is not None else None
            store = ahead or open_store(key, readonly=self.read_only)
            with self._stores_lock:
                self._stores[key] = store
                self._unsubscribe[key] = store.subscribe(functools.partial(self._on_store_write, key))
            return store

    def adopt_first_rows(self, first_rows: FirstRows | None) -> None:
        """Use the store and first keys read while the window was starting (see the module docstring)."""
        self._first_rows = first_rows

    async def first_rows(self, store: Store, query: ListQuery) -> array | None:
        """The keys read ahead for ``query`` on ``store`` (once), or ``None``: read them yourself."""
        if self._first_rows is None:
            return None
        return await asyncio.wrap_future(self._first_rows.take(store, query), loop=self.loop)

    async def first_memories(self) -> list[Memory] | None:
        """The memories listed by the keys :meth:`first_rows` handed out, read ahead with them
        (``None``: none were handed out, or that read failed)."""
        if self._first_rows is None:
            return None
        return await asyncio.wrap_future(self._first_rows.taken_memories(), loop=self.loop)

    def cached_store(self, path: str | Path) -> Store | None:
        """The store of ``path`` if it is already open (never opens)."""
        return self._stores.get(resolved(path))

    def current_store(self) -> Store | None:
        """The selected file's store if it is open, else ``None`` (never opens it: the GUI thread
        reads no file; the Memories tab opens it through :meth:`run` and emits ``store_shown``)."""
        path = self.current_path()
        return self.cached_store(path) if path is not None else None

    def forget_store(self, path: str | Path) -> None:
        """Drop a cached store (e.g. after its file was replaced by a restore)."""
        key = resolved(path)
        self._stores.pop(key, None)
        unsubscribe = self._unsubscribe.pop(key, None)
        if unsubscribe:
            unsubscribe()
        self.store_forgotten.emit(key)

    # ----------------------------------------------------------------- work off the GUI thread
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.get_event_loop()
        return self._loop

    async def run(self, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        """Run ``fn(*args, **kw)`` on a worker thread; the result comes back on the GUI thread."""
        if self._closed:  # the window is gone: stop quietly
            raise asyncio.CancelledError
        call = functools.partial(fn, *args, **kw) if kw else fn
        return await self.loop.run_in_executor(self._executor, call, *([] if kw else args))

    async def run_watch(self, fn: Callable[..., T], *args: Any) -> T:
        """Like :meth:`run`, on the single watcher thread (for per-connection state)."""
        if self._closed:
            raise asyncio.CancelledError
        return await self.loop.run_in_executor(self._watch_executor, fn, *args)

    async def read_as_heard(self, path: str | Path, read: Callable[[Store], T]) -> T | None:
        """``read(store)`` of ``path``'s open store, taken on the watcher's thread exactly where
        the changes told so far leave the file (:meth:`Store.read_as_heard`; the change that
        look found is told first), or ``None`` when it could not be (a commit landed unheard, a
        change was told while it ran, the file is being replaced, or not open): ask again later."""
        key = resolved(path)
        store = self._stores.get(key)
        if store is None or self._closed or key in self._replacing:
            return None
        told = self._told.get(key, 0)
        try:
            change, result = await self.run_watch(store.read_as_heard, read)
        except OraError as exc:  # (the caller reads the file its usual way, and says what is wrong)
            log.info("reading %s: %s", key, exc)
            return None
        exact = result is not None and self._told.get(key, 0) == told and key not in self._replacing
        if change is not None and not self._closed and key not in self._replacing:
            self.notify(key, change)
        return result if exact else None

    def from_thread(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` on the GUI thread soon (safe from any thread; ignored after closing)."""
        if self._closed:
            return
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the window is gone
            pass

    # ----------------------------------------------------------------- change notification
    def _on_store_write(self, path: Path, change: Change) -> None:
        """Store listener: runs on the writing thread, so hop to the GUI thread first."""
        self.from_thread(self.notify, path, change)

    def notify(self, path: Path, change: Change) -> None:
        """Emit ``store_changed(path, change)`` and ``data_changed(change)`` (GUI thread)."""
        if self._closed:
            return
        key = resolved(path)
        self._told[key] = self._told.get(key, 0) + 1
        self.store_changed.emit(path, change)
        self.data_changed.emit(change)

    def report_change(self, path: Path, change: Change | None) -> None:
        """A job, sync or restore this window ran on a store of its own changed ``path``: while
        the window watches a store of that file, its feed tells (once, with ids and who made
        it: :mod:`ora_desktop.core.feedreaders`); otherwise the views are told here."""
        if change is None:
            return
        if self.cached_store(path) is not None and self._watch_timer.isActive():
            return
        self.notify(Path(path).resolve(), change)

    def start_watching(self, interval_ms: int | None = None) -> None:
        """Poll open stores for other processes' writes every ``interval_ms``."""
        if interval_ms is not None:
            self.watch_interval_ms = interval_ms
        self._watch_timer.start(self.watch_interval_ms)

    def _poll_external(self) -> None:
        if self._polling or not self._stores or self._closed:
            return
        self._polling = True
        task = asyncio.ensure_future(self._check_all(), loop=self.loop)
        task.add_done_callback(lambda _t: setattr(self, "_polling", False))

    async def _check_all(self) -> None:
        for path, store in list(self._stores.items()):
            if path in self._replacing:
                continue
            try:
                change = await self.run_watch(store.external_change)
            except OraError as exc:
                log.info("watching %s: %s", path, exc)
                continue
            # (a restore that began meanwhile tells the views itself, once)
            if change is not None and not self._closed and path not in self._replacing:
                self.notify(path, change)

    @contextlib.contextmanager
    def replacing(self, path: str | Path) -> Iterator[None]:
        """The window replaces ``path`` (a restore): its watcher does not report the writes that
        does; the caller forgets the store and tells the views once, when it is done."""
        key = resolved(path)
        self._replacing.add(key)
        try:
            yield
        finally:
            self._replacing.discard(key)

    # ----------------------------------------------------------------- messages
    def show_error(self, exc: BaseException | str, title: str = "Ora Desktop") -> None:
        """A readable, non-blocking message dialog, and the message in the status bar."""
        from .errors import describe, show_error

        self.status.emit(exc if isinstance(exc, str) else describe(exc))
        show_error(self.window, exc, title)

    # ----------------------------------------------------------------- shutdown
    def close(self) -> None:
        """Stop polling, close stores and worker threads (called when the window closes)."""
        if self._closed:
            return
        self._closed = True
        self._watch_timer.stop()
        for unsubscribe in self._unsubscribe.values():
            unsubscribe()
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._watch_executor.shutdown(wait=True, cancel_futures=True)
        for store in self._stores.values():
            try:
                store.close()
            except Exception:  # closing is best effort
                log.debug("closing %s", store.path, exc_info=True)
        self._stores.clear()
        if self._first_rows is not None:
            self._first_rows.close()
