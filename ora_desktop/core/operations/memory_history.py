"""A memory's history, read from the file's undo journal (:mod:`.journal`).

``memory_history(store, id)`` lists, newest first, every journalled step that touched the memory —
when, who asked (user, job, import, sync, an agent through the library or MCP), what the step was —
and, for each column it changed, the value before and the value after (the value after is what
the next step found, or what the memory holds now). The journal keeps the last 50 steps of the
file and only journalled operations, so history covers that much: ``covers`` says how far back it
reaches, and a change made by another program's raw SQL shows as a difference nobody journalled
(``unexplained``: columns whose value now differs from what the newest step left).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..validation import check_id
from . import journal

if TYPE_CHECKING:
    from ..store import Store


#: The value after a step, when a program that does not journal its writes changed it since.
UNKNOWN = "(unknown: changed since by a program that does not journal its writes)"


@dataclass(frozen=True, slots=True)
class HistoryStep:
    """One journalled step that touched the memory: column -> (before, after) for what it changed
    (``created``: the step added the memory)."""

    entry: int
    at: datetime | None
    kind: str
    initiator: str
    label: str
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    created: bool = False
    #: Who: ``mcp:<client>``, ``library``, ``person`` or the job's initiator (the journal's ``who``).
    by: str = ""


@dataclass(frozen=True, slots=True)
class MemoryHistory:
    """The steps, newest first, and how far back the journal reaches."""

    memory_id: str
    steps: tuple[HistoryStep, ...]
    #: The oldest step the journal still holds (None: nothing journalled in this file).
    covers: datetime | None
    #: Whether the memory changed since the newest step that touched it, by something not journalled.
    unexplained: bool = False


def memory_history(store: Store, memory_id: str) -> MemoryHistory:
    """The journalled history of ``memory_id`` (``NotFound`` when it is not in the file)."""
    memory = store.get(check_id(memory_id))
    entries = journal.entries(store)
    mine = [e for e in entries  # newest first
            if memory.id in e.after or memory.id in e.undo.rows or memory.id in e.undo.added]
    now = journal.fingerprints(store, [memory.id])[memory.id]
    unexplained = bool(mine) and mine[0].after.get(memory.id) not in (None, now)
    # What the memory held after the step being read: now, unless something unjournalled wrote
    # since the newest step (then only what a later step recorded as its "before" is known).
    later: dict[str, Any] = ({c: UNKNOWN for c in _row(store, memory.id)} if unexplained
                             else _row(store, memory.id))
    steps: list[HistoryStep] = []
    for entry in mine:
        before = dict(entry.undo.rows.get(memory.id, {}))
        changes = {column: (value, later.get(column)) for column, value in before.items()
                   if value != later.get(column)}
        later.update(before)
        steps.append(HistoryStep(entry.id, entry.at, entry.kind.value, entry.initiator.value, entry.label, changes,
                                 memory.id in entry.undo.added, entry.who))
    covers = entries[-1].at if entries else None
    return MemoryHistory(memory.id, tuple(steps), covers, unexplained)


def _row(store: Store, memory_id: str) -> dict[str, Any]:
    cols = [c for c in store.columns if c != "id"]
    values = journal.capture(store, [memory_id], cols)
    return values.get(memory_id, {})


__all__ = ["UNKNOWN", "HistoryStep", "MemoryHistory", "memory_history"]
