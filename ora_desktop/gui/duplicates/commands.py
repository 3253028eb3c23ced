"""The merge of a duplicate group, one journalled step (runs on the Curator's worker thread)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core import Memory, Store
from ...core.operations.merge import MergeResult, merge_duplicates
from ..curate.commands import StoreCommand, memories

if TYPE_CHECKING:
    from ..curate.actions import Curator


class MergeGroupCommand(StoreCommand):
    """Keep one member (optionally with new text), supersede the rest; undo puts all back."""

    def __init__(self, curator: Curator, path: Path, members: Sequence[Memory], keep: str, text: str | None) -> None:
        super().__init__(curator, path, f"merge {memories(len(members))} into {keep}")
        self.ids, self.keep, self.merged_text = [m.id for m in members], keep, text
        # The members as the panel showed them: one changed since refuses the merge.
        self.versions = {m.id: m.version for m in members if m.version is not None}
        self.result: MergeResult | None = None

    def run(self, store: Store) -> Any:
        self.result = merge_duplicates(store, self.ids, keep=self.keep, text=self.merged_text,
                                       expected_versions=self.versions)
        return self.result.kept
