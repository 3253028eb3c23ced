"""Quick reads answered on the event loop, without a worker thread.

The SDK runs a plain (synchronous) tool function on a worker thread: a hand-off there and back
that cost ``get`` or ``important`` more than the read itself. The tools that only read a
bounded number of rows (``get``, ``important``, ``recall``, ``list``) are ``async`` and call
:func:`read` instead: on a file small enough that such a read stays short (:data:`QUICK_BYTES`),
the read runs right on the loop, on the loop thread's own connection (a store keeps one
connection per thread, so no connection is shared between threads). Anything else — a large
file, an agent of a site not opened yet, and every long call (search, context, index builds) —
keeps the worker thread, so the loop is never held up by a long call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

if TYPE_CHECKING:
    from ..core import Store
    from .agents import Agents

T = TypeVar("T")

#: Files up to this size (about 23,000 demo memories) answer bounded reads on the loop: recall,
#: the slowest of them, takes 3-5 ms on 10,000 memories and 26 ms on 45,000 (15 MB) on a loaded
#: 2-core machine, so past this size it goes back to a worker thread.
QUICK_BYTES = 8 * 1024 * 1024


def is_small(store: Store) -> bool:
    """Whether ``store``'s file is small enough for a bounded read on the loop (a ``stat``: no
    descriptor of the file is opened, so no SQLite lock is dropped)."""
    try:
        return os.stat(store.path).st_size <= QUICK_BYTES
    except OSError:
        return False


async def read(agents: Agents, agent: str | None, reading: Callable[[Store], T], *, keyed: bool = False) -> T:
    """``reading(store)`` for ``agent``'s store: on the loop when the store is open and the read
    is short (``keyed``: by primary key, short on any file; else a bounded read on a small
    file), on a worker thread otherwise."""
    if agents.is_open(agent):
        store = agents.get(agent)
        if keyed or is_small(store):
            return reading(store)
    return await anyio.to_thread.run_sync(lambda: reading(agents.get(agent)))
