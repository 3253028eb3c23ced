"""What every maintenance job gets (:class:`JobContext`) and returns (:class:`Outcome`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .. import timestamps
from ..config import Config
from ..connection import CANCEL_CHECK_STEPS
from ..errors import OraError
from ..home import OraHome
from ..rawsql import run_sql
from ..records import Change

if TYPE_CHECKING:
    from ..store import Store

Progress = Callable[[int, int], None]
PROGRESS_OPS = CANCEL_CHECK_STEPS  # SQLite VM steps between cancel checks inside a long statement


class Cancelled(OraError):
    """Raised inside a job when its ``cancel`` event is set; the runner reports ``cancelled``."""


class CancelledPartWay(Cancelled):
    """A job writing in chunks was cancelled after some of them: the message says what stays
    and what finishes the job; the runner reports it as it is."""


@dataclass
class JobContext:
    """Everything a job function gets: the file, the options and the callbacks."""

    path: Path
    dry_run: bool = False
    progress: Progress | None = None
    cancel: threading.Event | None = None
    home: OraHome = field(default_factory=OraHome)
    config: Config = field(default_factory=Config.defaults)
    repair: bool = False
    now: datetime | None = None  # tests pin the clock; None = the real time

    def check_cancel(self) -> None:
        """Raise :class:`Cancelled` if the caller asked to stop."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled(f"{self.path}: cancelled")

    def step(self, done: int, total: int) -> None:
        """Report progress, then honour a cancel request."""
        if self.progress is not None:
            self.progress(done, total)
        self.check_cancel()

    @contextlib.contextmanager
    def interruptible(self, store: Store) -> Iterator[None]:
        """Let a cancel request abort a long SQL statement on ``store`` (this thread's connection).

        SQLite rolls the statement (and peewee the transaction) back, so nothing half-done stays;
        the job then ends ``cancelled``.
        """
        if self.cancel is None:
            yield
            return
        cancel = self.cancel
        conn = store.db.connection()
        conn.set_progress_handler(lambda: 1 if cancel.is_set() else 0, PROGRESS_OPS)
        try:
            yield
        except Cancelled:
            raise
        except OraError as exc:
            # SQLite reports "interrupted", and rolls the whole transaction back itself (peewee's
            # own rollback then finds none: "no transaction is active").
            if cancel.is_set():
                raise Cancelled(f"{self.path}: cancelled; the unfinished change was rolled back") from exc
            raise
        finally:
            conn.set_progress_handler(None, 0)

    @property
    def clock(self) -> datetime:
        """The job's "now" (aware UTC)."""
        return self.now or timestamps.now()

    @property
    def now_sql(self) -> str:
        """The job's "now" in SQLite's format, for ``julianday(?)`` comparisons."""
        return timestamps.to_sql(self.clock)

    @property
    def site(self) -> str:
        """The site slug: the name of the folder holding the file."""
        return self.path.parent.name

    @property
    def agent(self) -> str:
        name = self.path.name
        return name[: -len(".site.db")] if name.endswith(".site.db") else self.path.stem


@dataclass
class Outcome:
    """What a job function returns (the runner adds times and the outcome)."""

    counts: dict[str, int] = field(default_factory=dict)
    message: str = ""
    would_change: list[tuple[str, str]] = field(default_factory=list)
    #: How many would change when that is more than ``would_change`` lists (a preview is capped).
    would_change_total: int | None = None
    #: The job's own result record, for callers that want more than counts (e.g. a SyncResult).
    detail: object | None = None
    #: ``"ok"``, or ``"problems"`` when the job finished but found the file damaged (check).
    outcome: str = "ok"
    #: What the job changed, when it knows the ids (default: the runner reports a reload).
    change: Change | None = None
    #: The file whose memories the job changed, when not the one it ran on (promote writes the parent).
    changed_path: Path | None = None




def summary(memory_id: str, content: str | None, detail: str = "", width: int = 60) -> tuple[str, str]:
    """A ``(memory id, one-line summary)`` pair for dry-run listings."""
    text = " ".join(str(content or "").split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return (str(memory_id), f"{detail}: {text}" if detail else text)


def read_state(store: Store, key: str) -> str | None:
    """A value from the file's ``ora_desktop_state`` table (``None`` if absent; never creates it)."""
    if not store.has_table("ora_desktop_state"):
        return None
    row = run_sql(store, "SELECT value FROM ora_desktop_state WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def write_state(store: Store, key: str, value: str) -> None:
    """Set a value in ``ora_desktop_state`` (call inside the job's write transaction)."""
    run_sql(store, "INSERT OR REPLACE INTO ora_desktop_state (key, value) VALUES (?, ?)", (key, value))
