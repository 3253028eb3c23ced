"""Several consumers of one file's change feed, each with its own cursor.

One detector per open file (the store's commit counter and :class:`~.feed.ChangeFeed`) finds
what other programs committed; whichever consumer looks first runs it, and what it found is
kept in a short :class:`FeedLog`. Each :class:`FeedReader` (the window's watcher, the MCP
server's notices, a sidecar) reads the log from its own cursor, so two consumers never take each
other's changes: every foreign commit is heard by every reader, and once by each.

The store's own commits are published to the log too (their operations' ``Change``, once): a
reader made with ``own=True`` (a cache of the file's columns) hears them beside other programs';
the window's watcher and the MCP server's notices hear their own through the operations.
:func:`log_for` finds the feed of a file this process holds open. A commit by another store of
this process (a job, a sync, an import run on their own store) is heard by the others as the
``Change`` its operation emitted, with its initiator (:func:`claim`), not as another program's.
A reader that fell further behind than the log keeps hears ``Change.reload()``.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .records import Change, Initiator

#: Changes kept for readers that look less often than others.
KEEP = 1024
#: ``detect()`` answers (someone else committed? — None: it cannot look now —, what changed:
#: None when no memory did).
Detect = Callable[[], tuple[bool | None, Change | None]]


class FeedLog:
    """What the detector found, in order, for every reader of one file."""

    def __init__(self, detect: Detect, keep: int = KEEP) -> None:
        self._detect = detect
        self._lock = threading.Lock()
        #: (position, change or None when no memory changed, whether the store made it)
        self._entries: deque[tuple[int, Change | None, bool]] = deque(maxlen=keep)
        self._seq = 0

    def reader(self, own: bool = False, look: bool = True) -> FeedReader:
        """A new consumer, hearing commits from now on (the store's own too with ``own``).

        With ``look`` the detector looks first, so "from now on" is from the detector's position
        now: a commit made before, then undone after, nets to nothing in the next look, which must
        not hide it from a consumer that read the file in between. A reader whose first look
        could not be taken hears ``Change.reload()`` first."""
        with self._lock:
            sure = True
            if look:
                moved, change = self._detect()
                if moved:
                    self._seq += 1
                    self._entries.append((self._seq, change, False))
                sure = moved is not None
            return FeedReader(self, self._seq, own, sure)

    def heard(self, change: Change | None) -> None:
        """Other programs' commits, found by the store's writer (those right before its own
        commit): readers hear them as the detector's (``None``: no memory changed)."""
        with self._lock:
            self._seq += 1
            self._entries.append((self._seq, change, False))

    def publish(self, change: Change) -> None:
        """The store committed ``change`` (called once per commit, after it)."""
        with self._lock:
            self._seq += 1
            self._entries.append((self._seq, change, True))

    def _read(self, cursor: int, own: bool) -> tuple[int, list[Change | None], bool, bool]:
        """Look for new commits, then (the newest position, the entries after ``cursor``, whether
        some were already dropped, whether the detector could look)."""
        with self._lock:
            moved, change = self._detect()
            if moved:
                self._seq += 1
                self._entries.append((self._seq, change, False))
            lost = cursor < self._seq and (not self._entries or self._entries[0][0] > cursor + 1)
            entries = [c for seq, c, ours in self._entries if seq > cursor and (own or not ours)]
            return self._seq, entries, lost, moved is not None


class FeedReader:
    """One consumer's cursor on a :class:`FeedLog`."""

    def __init__(self, log: FeedLog, cursor: int, own: bool = False, sure: bool = True) -> None:
        self.log = log
        self._cursor = cursor
        self._own = own
        self._sure = sure  # False: where it starts is not known (its first answer is a reload)
        self._guard = threading.Lock()

    def _take(self) -> tuple[list[Change | None], bool, bool]:
        with self._guard:
            self._cursor, entries, lost, looked = self.log._read(self._cursor, self._own)
            if not self._sure:
                lost, self._sure = True, looked
            return entries, lost, looked

    def poll(self) -> Change | None:
        """The memories others changed since this reader's last look, as one ``Change``
        (``Change.reload()`` when which is not known), ``None`` when none did (or none was seen
        yet: our own commit in progress defers a look to the next one)."""
        return self.looked()[1]

    def looked(self) -> tuple[bool, Change | None]:
        """(whether the file was looked at now — not while our own commit is being accounted
        for —, :meth:`poll`'s answer): ``(True, None)`` vouches that no memory changed."""
        entries, lost, looked = self._take()
        if lost:
            return looked, Change.reload()
        return looked, compose([c for c in entries if c is not None])

    def moved(self) -> bool:
        """Whether anyone else committed since this reader's last look (any table)."""
        entries, lost, _looked = self._take()
        return lost or bool(entries)


_open: dict[str, list[weakref.ref[FeedLog]]] = {}
#: Commits made by this process's stores, per file: commit counter -> (the store, its Change).
_claims: dict[str, OrderedDict[int, tuple[int, Change | None]]] = {}
_open_lock = threading.Lock()
#: Claims kept per file (a store that looks less often than this many commits reads the feed).
KEEP_CLAIMS = 4096


def _key(path: str | Path) -> str:
    return str(Path(path).expanduser().resolve())


def register(path: str | Path, log: FeedLog) -> None:
    """``log`` is a feed of ``path`` while a store holds it open (see :func:`log_for`)."""
    with _open_lock:
        _open.setdefault(_key(path), []).append(weakref.ref(log))


def unregister(path: str | Path, log: FeedLog) -> None:
    with _open_lock:
        held = [ref for ref in _open.get(_key(path), []) if ref() is not None and ref() is not log]
        if held:
            _open[_key(path)] = held
        else:
            _open.pop(_key(path), None)
            _claims.pop(_key(path), None)


def log_for(path: str | Path) -> FeedLog | None:
    """A feed of ``path`` if a store of this process holds it open (the longest open one: a job's
    store, opened and closed meanwhile, does not take the window's place)."""
    with _open_lock:
        for ref in _open.get(_key(path), []):
            if (log := ref()) is not None:
                return log
        return None


def claim(path: str | Path, counter: int, owner: object, change: Change | None) -> None:
    """A store of this process made the commit that brings ``path``'s commit counter to
    ``counter``: the other stores of the file hear it as ``change`` (its initiator kept; None:
    what the log reads, as :func:`initiator`'s), not as another program's."""
    with _open_lock:
        if len(_open.get(_key(path), [])) < 2:
            return  # no other store of the file here to tell
        claims = _claims.setdefault(_key(path), OrderedDict())
        claims[counter] = (id(owner), change, initiator())
        while len(claims) > KEEP_CLAIMS:
            claims.popitem(last=False)


def unclaim(path: str | Path, counter: int, owner: object) -> None:
    """The commit :func:`claim` announced did not happen."""
    with _open_lock:
        claims = _claims.get(_key(path), {})
        if claims.get(counter, (None,))[0] == id(owner):
            del claims[counter]


def claimed(path: str | Path, after: int | None, upto: int | None, reader: object
            ) -> list[tuple[Change | None, Initiator | None]] | None:
    """(change, initiator) of this process's other stores' commits, every one after counter
    ``after`` up to ``upto``, in order; None when another program made any of them."""
    if after is None or upto is None or upto <= after or upto - after > KEEP_CLAIMS:
        return None
    with _open_lock:
        claims = _claims.get(_key(path), {})
        found = [claims.get(counter) for counter in range(after + 1, upto + 1)]
    if any(c is None or c[0] == id(reader) for c in found):
        return None
    return [(c[1], c[2]) for c in found if c is not None]


def heard_as(ours: list[tuple[Change | None, Initiator | None]], logged: Change | None) -> Change | None:
    """One ``Change`` for commits this process's other stores made (:func:`claimed`): theirs when
    each noted one, else what the log read (``logged``), said as theirs."""
    if all(change is not None for change, _ in ours):
        return compose([change for change, _ in ours if change is not None])
    who = next((i for _, i in reversed(ours) if i is not None), None) or next(
        (c.initiator for c, _ in reversed(ours) if c is not None), None)
    if logged is None or not logged or who is None:
        return logged
    return logged.but(initiator=who)


_acting = threading.local()


@contextlib.contextmanager
def initiated(who: Initiator) -> Iterator[None]:
    """This thread's writes meanwhile, on any store, are ``who``'s (a job, a sync, an operation
    that spans several transactions such as a delete in chunks)."""
    before = getattr(_acting, "who", None)
    _acting.who = who
    try:
        yield
    finally:
        _acting.who = before


def initiator() -> Initiator | None:
    """Whose writes this thread is making (:func:`initiated`), None when not said."""
    return getattr(_acting, "who", None)


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


__all__ = ["KEEP", "KEEP_CLAIMS", "FeedLog", "FeedReader", "claim", "claimed", "compose", "heard_as", "initiated",
           "initiator", "log_for", "register", "unclaim", "unregister"]
