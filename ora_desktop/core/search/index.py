"""The sidecar full-text index of one memory file (DESIGN contract 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .results import IndexState

ProgressFn = Callable[[int, int], None]


def fts5_available() -> bool:
    """Whether this SQLite has FTS5 (and ``ORA_DESKTOP_NO_FTS5`` is not set)."""
    raise NotImplementedError


def sidecar_path(db_path: str | Path) -> Path:
    """Where the index of ``db_path`` lives: ``<cache>/search/<file_key>.fts.db``."""
    raise NotImplementedError


def index_state(db_path: str | Path) -> IndexState:
    """Whether the index is built, how many rows it holds, whether the file changed since
    (cheap: file stats), and build progress when this process is building it."""
    raise NotImplementedError


def ensure_index(db_path: str | Path, progress: ProgressFn | None = None, cancel: object = None,
                 rebuild: bool = False) -> IndexState:
    """Build the index if missing (or ``rebuild``), else bring it up to date incrementally.

    ``progress(done, total)`` is called while building; ``cancel`` (an Event or a callable
    returning True) stops a build, leaving no partial index (the returned state says
    ``built=False, reason='cancelled'``).
    """
    raise NotImplementedError


def drop_index(db_path: str | Path) -> bool:
    """Delete the sidecar of ``db_path`` (nothing is lost: it is rebuilt on the next search)."""
    raise NotImplementedError


class BuildTask:
    """A background build of one index (a thread): ``progress``, ``cancel()``, ``wait()``.

    ``on_progress(done, total)`` and ``on_done(state)`` are called from the worker thread;
    a GUI forwards them to its own thread.
    """

    def __init__(self, db_path: str | Path, on_progress: ProgressFn | None = None,
                 on_done: Callable[[IndexState], None] | None = None, rebuild: bool = False) -> None:
        raise NotImplementedError
