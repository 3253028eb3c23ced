"""Review marks and flags as undo commands on the window's stack (Ctrl+Z takes a mark back)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core import Store
from ...core.operations import review as rv
from ..curate.commands import StoreCommand


class ReviewCommand(StoreCommand):
    """A mark, mark-all, flag or unflag; undo puts the reviewer's marks back as they were."""

    def __init__(self, curator: Any, path: Path, reviewer: str, text: str,
                 work: Callable[[Store], rv.ReviewWrite]) -> None:
        super().__init__(curator, path, text)
        self.reviewer = reviewer
        self.work = work
        self.before: tuple[tuple, ...] | None = None

    def run_redo(self, store: Store) -> rv.ReviewWrite:
        if self.before is None:
            self.before = rv.snapshot(store, self.reviewer)
        return self.work(store)

    def run_undo(self, store: Store) -> rv.ReviewWrite:
        return rv.restore(store, self.reviewer, self.before or ())
