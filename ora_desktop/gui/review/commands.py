"""Review marks and flags as journalled steps of the file (Ctrl+Z takes a mark back)."""

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

    def run(self, store: Store) -> rv.ReviewWrite:
        return rv.journalled(store, self.reviewer, self.text(), self.work)
