"""Answer now, index in the background: an agent's first search of a never-indexed file.

:func:`index_soon` starts the file's index build on a thread (one per file and process, shared
by every caller) and waits at most a few seconds for its words part: the index answers as soon
as the words are in place (:mod:`.build`). When the time is up the caller answers from a plain
scan (:mod:`.fallback`), its note saying that the index is being built and how far it got, and
the next search after the build uses the index. Whoever waits hears the build's progress.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .build import BuildTask
from .index import PROGRESS, get_index
from .sidecar import fts5_available

ProgressFn = Callable[[int, int], None]
#: How long a first search waits for the words part of a new index before a plain scan answers.
FIRST_ANSWER_SECONDS = 1.0
#: Files smaller than this (about 20,000 memories) build their words in well under that time: a
#: first search of one waits for the build as every later search does.
SMALL_FILE_BYTES = 8 << 20
POLL_SECONDS = 0.05

_tasks: dict[Path, BuildTask] = {}
_tasks_lock = threading.Lock()


def index_soon(path: Path, seconds: float | None = None, progress: ProgressFn | None = None) -> bool:
    """Whether a search of ``path`` may wait as usual (for a refresh, for tags).

    True when the index is built and no build of it runs in this process, or when the file is
    small (:data:`SMALL_FILE_BYTES`) and none runs: the search builds it first. Otherwise a build runs
    in the background (started here if none ran) and this waits up to ``seconds`` (default
    :data:`FIRST_ANSWER_SECONDS`) for its words part; False when the build still runs after
    that: the caller answers without waiting — from the words if they are in place, else from a
    plain scan. ``progress(done, total)`` hears the build while this waits.
    """
    index = get_index(path)
    if not fts5_available():
        return True  # the search answers by a scan, saying why
    key, progress_key = index.db_path, str(index.sidecar)
    with _tasks_lock:
        task = _tasks.get(key)
        if task is not None and task.done:
            del _tasks[key]
            task = None
        # A build by another thread of this process (the window, the MCP warm-up) is waited for too.
        if task is None and PROGRESS.get(progress_key) is None:
            if index.usable()[0] or _size(key) < SMALL_FILE_BYTES:
                return True
            task = _tasks[key] = BuildTask(key)
    deadline = time.monotonic() + (FIRST_ANSWER_SECONDS if seconds is None else seconds)
    heard = None
    while True:
        now = PROGRESS.get(progress_key)
        if progress is not None and now is not None and now != heard:
            heard = now
            progress(*now)
        finished = now is None and (task is None or task.done)
        if finished or index.usable()[0] or time.monotonic() >= deadline:
            return finished
        time.sleep(POLL_SECONDS)


def _size(path: Path) -> int:
    """The file's bytes with its write-ahead log's (stat only: no descriptor is opened)."""
    total = 0
    for name in (str(path), f"{path}-wal"):
        with contextlib.suppress(OSError):
            total += os.stat(name).st_size
    return total
