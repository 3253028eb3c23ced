"""Bulk writes in short transactions: each holds the file's write lock briefly.

An agent writing to the same file waits for our write lock up to its busy timeout (SQLite's usual
5 s, often less) and then fails with "database is locked". A job or bulk operation touching
thousands of rows therefore writes in chunks, each its own ``BEGIN IMMEDIATE`` transaction of
single SQL statements, sized as it goes so that one holds the lock about :data:`TARGET` seconds
and never much more than :data:`LOCK_BUDGET`. What the chunks must share to stay one step (a trash
batch, a resumable mark in an ``ora_desktop_*`` table) is the caller's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .store import Store

LOCK_BUDGET = 0.25  # seconds: the longest one chunk may hold the write lock
TARGET = 0.1  # what the sizing aims at (a commit's fsync and a slow disk fit in the rest)
FIRST = 256  # rows (or rowids) in the first chunk, before anything is measured
SMALLEST, LARGEST = 16, 200_000
# Between two chunks the lock is left free this long, so a writer waiting on SQLite's busy handler
# gets in first (back-to-back chunks would leave it gaps of microseconds until its busy timeout
# ran out). The handler sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 ms, then 100 ms, between
# tries: a writer that began waiting during one chunk (held at most ~0.22 s) has waited less than
# 228 ms when it ends, so it tries again within 50 ms, inside the gap.
GAP = 0.06

T = TypeVar("T")


@dataclass
class Sizer:
    """How many rows the next chunk takes, from how long the last ones held the lock.

    A chunk's hold is modelled as a fixed part (``COMMIT``'s sync, a scan every chunk needs) plus
    a part per row, estimated from the last two chunks of different sizes. The next chunk aims at
    :data:`TARGET`, or at twice the fixed part when that is larger (so chunks do not shrink to
    nothing when the fixed part dominates), never above 60 % of :data:`LOCK_BUDGET`.
    """

    size: int = FIRST
    longest: float = 0.0  # the longest a chunk held the lock so far (seconds)
    chunks: int = 0
    holds: list[float] = field(default_factory=list)
    _points: list[tuple[int, float]] = field(default_factory=list)

    def took(self, seconds: float, rows: int) -> None:
        """Record a chunk of ``rows`` that held the lock ``seconds``; size the next one."""
        self.chunks += 1
        self.longest = max(self.longest, seconds)
        self.holds.append(seconds)
        if rows <= 0:
            return
        if self._points and self._points[-1][0] == rows:
            self._points[-1] = (rows, seconds)
        else:
            self._points = [*self._points[-1:], (rows, seconds)]
        per_row, fixed = self._fit()
        goal = min(LOCK_BUDGET * 0.6, max(TARGET, 2 * fixed))
        want = max(goal - fixed, goal / 4) / per_row
        self.size = int(min(LARGEST, max(SMALLEST, min(want, self.size * 2))))

    def _fit(self) -> tuple[float, float]:
        """(seconds per row, fixed seconds per chunk) from the last two chunks."""
        rows, seconds = self._points[-1]
        plain = max(seconds, 1e-5) / rows
        if len(self._points) == 2:
            (n1, t1), (n2, t2) = self._points
            per_row = (t2 - t1) / (n2 - n1)
            fixed = t2 - per_row * n2
            if per_row > plain / 10 and 0 <= fixed < seconds:
                return per_row, fixed
        return plain, 0.0


#: The sizer of the latest chunked write in this process (benchmarks and tests read ``longest``).
last_sizer = Sizer()


def new_sizer() -> Sizer:
    """A fresh :class:`Sizer`, also published as :data:`last_sizer`."""
    global last_sizer
    last_sizer = Sizer()
    return last_sizer


def slices(keys: Sequence[T], sizer: Sizer) -> Iterator[Sequence[T]]:
    """``keys`` in consecutive slices of the sizer's current size (re-read before each slice)."""
    at = 0
    while at < len(keys):
        part = keys[at:at + sizer.size]
        at += len(part)
        yield part


def timed_write(store: Store, sizer: Sizer, rows: Callable[[], int]) -> int:
    """Run ``rows()`` in one write transaction of ``store`` and tell ``sizer`` how long it held the
    lock (from the moment it had it to after ``COMMIT``); returns what ``rows()`` returned, the
    number of rows the chunk covered. After a first chunk, the lock is left free for
    :data:`GAP` before the next one is taken."""
    if sizer.chunks:
        time.sleep(GAP)
    with store.write():
        start = time.perf_counter()
        count = rows()
    sizer.took(time.perf_counter() - start, count)
    return count

