"""Read a file's first screenful on a thread while the window is still starting.

At a million memories the window's first rows need one top-N sort over the whole table (about a
third of a second, spent inside SQLite with the GIL released). ``ora-desktop FILE`` starts
:class:`FirstRows` before it imports Qt and the window, so that sort runs on another core while
the imports run; the window then adopts the opened store and, if its first listing asks for the
same query, the keys already read and the memories they list (so that the table's first paint
shows rows, not placeholders: ``AppContext.adopt_first_rows``). Anything else (another sort
saved by the table, a search typed first) simply runs as usual: nothing is guessed.

The store is opened exactly as the window opens it, before the query, so a write by another
program after the read is seen by the window's watcher like any other.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from ..core.listing import ListQuery
from ..core.records import Memory
from ..core.store import Store

#: How many rows the window lists at once before reading every key (the table's first screenful).
FIRST_ROWS = 200


class FirstRows:
    """The store of ``path`` (opened with ``open_store``, the window's opener) and the keys of its
    default listing's first ``rows`` rows, read on a daemon thread. Errors are left to the window,
    which opens and reads again the usual way."""

    def __init__(self, open_store: Callable[..., Store], path: str | Path, readonly: bool = False,
                 rows: int = FIRST_ROWS) -> None:
        self.open_store = open_store
        self.path = Path(path).expanduser().resolve()
        self.readonly = readonly
        self.rows = rows
        self.store: Future[Store] = Future()
        #: The query the keys answer, known once the store is open.
        self.query: Future[ListQuery] = Future()
        self.keys: Future[array] = Future()
        #: The memories those keys list, in their order (read right after the keys).
        self.memories: Future[list[Memory]] = Future()
        self._taken = False
        self._handed = False  # the keys were handed out (they answered the query asked)
        self._adopted = False
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read, name="ora-first-rows", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        futures = (self.store, self.query, self.keys, self.memories)
        try:
            store = self.open_store(self.path, readonly=self.readonly)
            self.store.set_result(store)
            self.query.set_result(default_query(store, self.rows))
            self.keys.set_result(store.row_keys(self.query.result()))
            self.memories.set_result(store.by_rowids(self.keys.result()))
        except BaseException as exc:  # noqa: BLE001 (handed on: the window tries again and reports it)
            for future in futures:
                if not future.done():
                    future.set_exception(exc)
        # The thread stays until close(), and with it its connection: a store closes the
        # connections of ended threads as soon as another thread connects, before that one has
        # read anything, and on a WAL file the closing one, seeing no other reader, would
        # checkpoint and delete the -shm whose counter the window's watcher compares.
        self._closed.wait()

    def opened(self, path: str | Path, readonly: bool) -> Store | None:
        """The store (waiting for the open), once, if it is the one asked for; ``None`` when it is
        another file or mode, the open failed, or it was handed out already."""
        if self._adopted or Path(path).expanduser().resolve() != self.path or readonly != self.readonly:
            return None
        try:
            store = self.store.result()
        except Exception:  # noqa: BLE001 (the caller opens it itself and gets the error)
            return None
        self._adopted = True
        return store

    def take(self, store: Store, query: ListQuery) -> Future[array | None]:
        """A future of the keys if they answer ``query`` on ``store`` (once), else of ``None``
        (resolved as soon as that is known, without waiting for the read)."""
        answer: Future[array | None] = Future()
        if self._taken or not self.store.done() or self.store.exception() is not None \
                or self.store.result() is not store:
            answer.set_result(None)
            return answer
        self._taken = True

        def keys_read(keys: Future[array]) -> None:
            self._handed = keys.exception() is None
            answer.set_result(keys.result() if self._handed else None)

        def planned(plan: Future[ListQuery]) -> None:
            if plan.exception() is None and plan.result() == query:
                self.keys.add_done_callback(keys_read)
            else:
                answer.set_result(None)

        self.query.add_done_callback(planned)
        return answer

    def taken_memories(self) -> Future[list[Memory] | None]:
        """Once the keys were handed out by :meth:`take`: a future of the memories they list, in
        their order (``None`` if that read failed); before that, or if they never were, of ``None``."""
        if not self._handed:
            answer: Future[list[Memory] | None] = Future()
            answer.set_result(None)
            return answer
        read: Future[list[Memory] | None] = Future()

        def done(memories: Future[list[Memory]]) -> None:
            read.set_result(memories.result() if memories.exception() is None else None)

        self.memories.add_done_callback(done)
        return read

    @property
    def taken(self) -> bool:
        """Whether the window's first listing used the keys read here."""
        return self._taken

    def close(self) -> None:
        """Let the thread end, and close the store if the window never adopted it (the window
        closes the stores it uses)."""
        self._closed.set()
        # The read may still be running on the thread's connection: closing the store under it
        # can crash SQLite's module (seen once in a full test run). The thread ends right after it.
        if self._thread is not threading.current_thread():
            self._thread.join()
        if not self._adopted and self.store.done() and self.store.exception() is None:
            self.store.result().close()


def default_query(store: Store, rows: int = FIRST_ROWS) -> ListQuery:
    """The window's listing with nothing typed, ticked or sorted by hand: every memory, newest
    first, its first ``rows`` rows. It is ``search.listing_query`` of an empty request (a test
    holds them equal), built without importing the search engine: the read starts sooner."""
    from ..core.search.query import parse_query

    return ListQuery(order_by="created_at", descending=True, limit=rows, superseded="show",
                     filters=parse_query(""))
