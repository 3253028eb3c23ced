"""Pin and unpin memories: pinned ones always come first in an agent's context.

``pin(store, ids)`` / ``unpin(store, ids)`` write the plain ``ora_desktop_pins`` table
(:mod:`ora_desktop.core.pins`) in one ``BEGIN IMMEDIATE`` transaction; every id must name a
memory of the file, else nothing changes. Pinning is its own undo (``unpin`` reverses ``pin``),
so these steps are not written to the undo journal. Every face calls these two functions: the
CLI (``pin``/``unpin``), the window's pin toggle, and the MCP server.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import marks, timestamps
from ..errors import InvalidValue, NotFound
from ..pins import TABLE, pinned_ids
from ..rawsql import all_rows, run_sql
from ..records import Change, ChangeKind, Initiator
from ..validation import check_id

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True, slots=True)
class Pinned:
    """What a pin or unpin did: ``done`` ids changed state, ``already`` were so before."""

    path: str
    action: str  # pinned | unpinned
    done: tuple[str, ...]
    already: tuple[str, ...]
    change: Change


def _wanted(ids: str | Iterable[str]) -> list[str]:
    wanted = [ids] if isinstance(ids, str) else list(dict.fromkeys(ids))
    if not wanted:
        raise InvalidValue("ids", "name at least one memory")
    return [check_id(i) for i in wanted]


def _require(store: Store, ids: list[str]) -> None:
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {', '.join(map(repr, missing[:5]))} (nothing changed)")


def pin(store: Store, ids: str | Iterable[str], *, by: str | None = None,
        initiator: Initiator = Initiator.USER) -> Pinned:
    """Pin memories (already pinned ones are left as they were)."""
    wanted = _wanted(ids)
    store._require_writable()  # noqa: SLF001 (refuse before anything else)
    with store.write():
        _require(store, wanted)
        store.create_engine_tables(TABLE)
        before = set(_present(store, wanted))
        new = [i for i in wanted if i not in before]
        stamp = timestamps.now_sql()
        store.db.cursor().executemany(f"INSERT INTO {TABLE} (memory_id, pinned_at, pinned_by) VALUES (?, ?, ?)",
                                      [(i, stamp, by) for i in new])
        marks.made(store, marks.PIN, new)
        change = _emit(store, new, initiator)
    return Pinned(str(store.path), "pinned", tuple(new), tuple(i for i in wanted if i in before), change)


def unpin(store: Store, ids: str | Iterable[str], *, initiator: Initiator = Initiator.USER) -> Pinned:
    """Unpin memories (ids that were not pinned are reported in ``already``; unknown ids refused)."""
    wanted = _wanted(ids)
    store._require_writable()  # noqa: SLF001
    with store.write():
        _require(store, wanted)
        present = set(_present(store, wanted)) if store.has_table(TABLE) else set()
        gone = [i for i in wanted if i in present]
        if gone:
            run_sql(store, f"DELETE FROM {TABLE} WHERE memory_id IN (SELECT value FROM json_each(?))",
                    (_json(gone),))
            marks.removed(store, marks.PIN, gone)  # sync compares it with a pin made elsewhere
        change = _emit(store, gone, initiator)
    return Pinned(str(store.path), "unpinned", tuple(gone), tuple(i for i in wanted if i not in present), change)


def is_pinned(store: Store, memory_id: str) -> bool:
    """Whether ``memory_id`` is pinned in ``store``."""
    return bool(store.has_table(TABLE) and _present(store, [memory_id]))


def _present(store: Store, ids: list[str]) -> list[str]:
    rows = all_rows(store, f"SELECT memory_id FROM {TABLE} WHERE memory_id IN (SELECT value FROM json_each(?))",
                    (_json(ids),))
    return [str(r[0]) for r in rows]


def _json(ids: list[str]) -> str:
    return json.dumps(ids)


def _emit(store: Store, ids: list[str], initiator: Initiator) -> Change:
    change = Change(changed=frozenset(ids), source="pin", kind=ChangeKind.EDITED, initiator=initiator)
    return store._emit(change) if ids else change  # noqa: SLF001 (listeners repaint the pin mark)


__all__ = ["Pinned", "is_pinned", "pin", "pinned_ids", "unpin"]
