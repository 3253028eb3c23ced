"""Find and replace across memories: previewed first, then one statement, one undo step.

The text is found as written (case-sensitive, no patterns: what SQLite's ``replace()`` does), in
the memories named; each changed memory gets ``updated_at`` now and ``sync_status`` pending (the
sync rule). ``ora-desktop undo`` (or Ctrl+Z in the window) puts every text back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidValue
from ..rawsql import all_rows
from ..records import Change, ChangeKind, Initiator
from ..writes import IDS_JSON
from . import journal
from .edits import SYNC_COLUMNS, Written

if TYPE_CHECKING:
    from ..store import Store

#: How many changed memories a preview shows (it counts them all).
PREVIEW_ROWS = 200
AROUND = 40  # characters shown each side of the first match


@dataclass(frozen=True, slots=True)
class ReplacePreview:
    """One memory a replace would change: where the text first stands, before and after."""

    id: str
    matches: int
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class ReplacePlan:
    """What :func:`replace_text` would do."""

    find: str
    replacement: str
    memories: int  # how many memories hold the text
    matches: int  # how many times it stands in them
    preview: tuple[ReplacePreview, ...]


def _check(find: str, replacement: str) -> None:
    if not isinstance(find, str) or find == "":
        raise InvalidValue("find", "give the text to find (it cannot be empty)")
    if not isinstance(replacement, str):
        raise InvalidValue("replacement", f"{replacement!r} is not text")


def _holding(store: Store, ids: Iterable[str] | None, find: str) -> list[tuple[str, str]]:
    """(id, content) of the memories (``ids``, or every one for ``None``) whose content holds ``find``."""
    if ids is None:
        where, params = "1", [find]
    else:
        where, params = f"id IN {IDS_JSON}", [json.dumps(list(dict.fromkeys(ids))), find]
    return [(r[0], r[1]) for r in all_rows(
        store, f"SELECT id, content FROM memories WHERE {where} AND instr(content, ?) > 0 ORDER BY rowid", params)]


def plan_replace(store: Store, ids: Iterable[str] | None, find: str, replacement: str) -> ReplacePlan:
    """Which of ``ids`` (every memory for ``None``) hold ``find``, and the first place in each as
    it reads before and after."""
    _check(find, replacement)
    held = _holding(store, ids, find)
    preview = []
    for memory_id, content in held[:PREVIEW_ROWS]:
        at = content.index(find)
        start, end = max(0, at - AROUND), at + len(find) + AROUND
        before = content[start:end]
        preview.append(ReplacePreview(memory_id, content.count(find), before,
                                      before.replace(find, replacement)))
    matches = sum(content.count(find) for _, content in held)
    return ReplacePlan(find, replacement, len(held), matches, tuple(preview))


def replace_text(store: Store, ids: Iterable[str] | None, find: str, replacement: str, *,
                 initiator: Initiator = Initiator.USER, journal_it: bool = True) -> Written:
    """Replace ``find`` by ``replacement`` in the content of those of ``ids`` (every memory for
    ``None``) that hold it: one statement in one transaction, journalled as one step."""
    _check(find, replacement)
    with store.write():
        held = [memory_id for memory_id, _ in _holding(store, ids, find)]
        if not held:
            return Written(Change(), None)
        before = journal.capture(store, held, ["content", *SYNC_COLUMNS])
        changed = store.replace_content(held, find, replacement).changed
        change = Change(changed=changed, source="replace", kind=ChangeKind.EDITED, initiator=initiator)
        count = f"{len(changed):,} memor{'y' if len(changed) == 1 else 'ies'}"
        label = f"replace {find[:30]!r} with {replacement[:30]!r} in {count}"
        entry = journal.record(store, change, label, journal.Undo(rows=before)) if journal_it else None
    return Written(change, entry)
