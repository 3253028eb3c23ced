"""Several consumers of one file's change feed, each with its own cursor.

One detector per open file (the store's commit counter and :class:`~.feed.ChangeFeed`) finds
what other programs committed; whichever consumer looks first runs it, and what it found is
kept in a short :class:`FeedLog`. Each :class:`FeedReader` (the window's watcher, the MCP
server's notices, a sidecar) reads the log from its own cursor, so two consumers never take each
other's changes: every foreign commit is heard by every reader, and once by each.

The store's own commits are published to the log too (their operations' ``Change``, once): a
reader made with ``own=True`` (a cache of the file's columns) hears them beside other programs';
the window's watcher and the MCP server's notices hear their own through the operations.
:func:`log_for` finds the feed of a file this process holds open. A reader that fell further
behind than the log keeps hears ``Change.reload()``.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from .records import Change

#: Changes kept for readers that look less often than others.
KEEP = 1024
#: ``detect()`` answers (someone else committed?, what changed: None when no memory did).
Detect = Callable[[], tuple[bool, Change | None]]


class FeedLog:
    """What the detector found, in order, for every reader of one file."""

    def __init__(self, detect: Detect, keep: int = KEEP) -> None:
        self._detect = detect
        self._lock = threading.Lock()
        #: (position, change or None when no memory changed, whether the store made it)
        self._entries: deque[tuple[int, Change | None, bool]] = deque(maxlen=keep)
        self._seq = 0

    def reader(self, own: bool = False) -> FeedReader:
        """A new consumer, hearing commits from now on (the store's own too with ``own``)."""
        with self._lock:
            return FeedReader(self, self._seq, own)

    def publish(self, change: Change) -> None:
        """The store committed ``change`` (called once per commit, after it)."""
        with self._lock:
            self._seq += 1
            self._entries.append((self._seq, change, True))

    def _read(self, cursor: int, own: bool) -> tuple[int, list[Change | None], bool]:
        """Look for new commits, then (the newest position, the entries after ``cursor``, whether
        some were already dropped)."""
        with self._lock:
            moved, change = self._detect()
            if moved:
                self._seq += 1
                self._entries.append((self._seq, change, False))
            lost = cursor < self._seq and (not self._entries or self._entries[0][0] > cursor + 1)
            return self._seq, [c for seq, c, ours in self._entries if seq > cursor and (own or not ours)], lost


class FeedReader:
    """One consumer's cursor on a :class:`FeedLog`."""

    def __init__(self, log: FeedLog, cursor: int, own: bool = False) -> None:
        self.log = log
        self._cursor = cursor
        self._own = own
        self._guard = threading.Lock()

    def _take(self) -> tuple[list[Change | None], bool]:
        with self._guard:
            self._cursor, entries, lost = self.log._read(self._cursor, self._own)
            return entries, lost

    def poll(self) -> Change | None:
        """The memories others changed since this reader's last look, as one ``Change``
        (``Change.reload()`` when which is not known), ``None`` when none did."""
        entries, lost = self._take()
        if lost:
            return Change.reload()
        return compose([c for c in entries if c is not None])

    def moved(self) -> bool:
        """Whether anyone else committed since this reader's last look (any table)."""
        entries, lost = self._take()
        return lost or bool(entries)


_open: weakref.WeakValueDictionary[str, FeedLog] = weakref.WeakValueDictionary()
_open_lock = threading.Lock()


def _key(path: str | Path) -> str:
    return str(Path(path).expanduser().resolve())


def register(path: str | Path, log: FeedLog) -> None:
    """``log`` is the feed of ``path`` while a store holds it open (see :func:`log_for`)."""
    with _open_lock:
        _open[_key(path)] = log


def unregister(path: str | Path, log: FeedLog) -> None:
    with _open_lock:
        if _open.get(_key(path)) is log:
            del _open[_key(path)]


def log_for(path: str | Path) -> FeedLog | None:
    """The feed of ``path`` if a store of this process holds it open (the latest one opened)."""
    with _open_lock:
        return _open.get(_key(path))


def compose(changes: Sequence[Change]) -> Change | None:
    """One ``Change`` with the effect of ``changes`` applied in order (a reload if any is)."""
    if not changes:
        return None
    if len(changes) == 1:
        return changes[0]
    if any(not c for c in changes):
        return Change.reload(changes[-1].initiator)
    state: dict[str, str] = {}  # id -> "added" (new to the reader), "changed" or "removed"
    rowids: set[int] = set()
    for change in changes:
        for key in change.added:
            state[key] = "changed" if state.get(key) == "removed" else "added"
        for key in change.changed:
            state[key] = "added" if state.get(key) == "added" else "changed"
        for key in change.removed:
            if state.get(key) == "added":
                del state[key]  # came and went between two looks: never the reader's
            else:
                state[key] = "removed"
        rowids |= change.removed_rowids
    named = {kind: frozenset(k for k, v in state.items() if v == kind) for kind in ("added", "changed", "removed")}
    if not any(named.values()):
        return None
    if any(c.added for c in changes):
        rowids = set()  # a later row may hold a rowid an earlier one left: the view reads its keys
    return Change(added=named["added"], changed=named["changed"], removed=named["removed"],
                  initiator=changes[-1].initiator, removed_rowids=frozenset(rowids))


__all__ = ["KEEP", "FeedLog", "FeedReader", "compose", "log_for", "register", "unregister"]
