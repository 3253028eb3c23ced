"""Typed links: add or remove ``A --type--> B``, list a memory's links both ways, and find
contradictions between two live memories.

``add_link`` / ``remove_link`` write the plain ``ora_desktop_links`` table
(:mod:`ora_desktop.core.links`) in one ``BEGIN IMMEDIATE`` transaction, after checking both ids
and the type (nothing changes on bad input). The seed's ``related_to`` is left as it is: a typed
link says how two memories relate, ``related_to`` stays the untyped set agents read. Removing a
link is the undo of adding one, so these steps are not written to the undo journal.
``links_of`` lists both kinds, each with its direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import marks, timestamps
from ..errors import InvalidValue, NotFound
from ..links import CONTRADICTS, LINK_TYPES, TABLE, TypedLink, check_type, typed_links
from ..rawsql import run_sql
from ..records import Change, ChangeKind, Initiator, Memory
from ..validation import check_id
from .neighbourhood import RELATED, _listing

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True, slots=True)
class LinkWrite:
    """What an add or remove did (``done`` False: it was already so)."""

    path: str
    link: TypedLink
    action: str  # added | removed
    done: bool
    change: Change


@dataclass(frozen=True, slots=True)
class LinkView:
    """One link of a memory: the memory at the other end (``None``: not in this file), the link's
    type (``related`` for the seed's untyped ``related_to``) and ``direction``: ``out`` (this
    memory --type--> other) or ``in`` (other --type--> this memory)."""

    other_id: str
    type: str
    direction: str
    other: Memory | None

    def describe(self, memory_id: str) -> str:
        return (f"{memory_id} {self.type} {self.other_id}" if self.direction == "out"
                else f"{self.other_id} {self.type} {memory_id}")


def _ends(store: Store, source: str, target: str) -> tuple[str, str]:
    source, target = check_id(source, "id"), check_id(target, "other_id")
    if source == target:
        raise InvalidValue("other_id", f"{source!r} cannot be linked to itself")
    found = store.get_many([source, target])
    missing = [i for i in (source, target) if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {', '.join(map(repr, missing))} (nothing changed)")
    return source, target


def add_link(store: Store, source: str, target: str, type: str, *,
             initiator: Initiator = Initiator.USER) -> LinkWrite:
    """Record ``source --type--> target`` (already there: nothing changes, ``done`` False)."""
    kind = check_type(type)
    store._require_writable()  # noqa: SLF001 (refuse before anything else)
    with store.write():
        source, target = _ends(store, source, target)
        store.create_engine_tables(TABLE)
        cursor = run_sql(store, f"INSERT OR IGNORE INTO {TABLE} (source, target, type, created_at) "
                                "VALUES (?, ?, ?, ?)", (source, target, kind, timestamps.now_sql()))
        done = cursor.rowcount > 0
        if done:
            marks.made(store, marks.LINK, [marks.link_key(source, target, kind)])
        change = _emit(store, (source, target), done, initiator)
    return LinkWrite(str(store.path), TypedLink(source, target, kind), "added", done, change)


def remove_link(store: Store, source: str, target: str, type: str, *,
                initiator: Initiator = Initiator.USER) -> LinkWrite:
    """Remove ``source --type--> target`` (not there: nothing changes, ``done`` False)."""
    kind = check_type(type)
    store._require_writable()  # noqa: SLF001
    with store.write():
        source, target = _ends(store, source, target)
        done = False
        if store.has_table(TABLE):
            cursor = run_sql(store, f"DELETE FROM {TABLE} WHERE source = ? AND target = ? AND type = ?",
                             (source, target, kind))
            done = cursor.rowcount > 0
        if done:  # sync compares it with the same link made elsewhere
            marks.removed(store, marks.LINK, [marks.link_key(source, target, kind)])
        change = _emit(store, (source, target), done, initiator)
    return LinkWrite(str(store.path), TypedLink(source, target, kind), "removed", done, change)


def links_of(store: Store, memory_id: str) -> list[LinkView]:
    """Every link of ``memory_id``: typed ones both ways, then ``related_to`` both ways (``NotFound``)."""
    memory = store.get(check_id(memory_id))
    pairs: list[tuple[str, str, str]] = []
    for link in typed_links(store, [memory.id]):
        if link.source == memory.id:
            pairs.append((link.target, link.type, "out"))
        if link.target == memory.id:
            pairs.append((link.source, link.type, "in"))
    pairs += [(other, RELATED, "out") for other in memory.related_to if other != memory.id]
    pairs += [(other, RELATED, "in") for other in _listing(store, [memory.id]).get(memory.id, ())]
    found = store.get_many(other for other, _t, _d in pairs)
    return [LinkView(other, kind, direction, found.get(other)) for other, kind, direction in dict.fromkeys(pairs)]


def contradictions(store: Store, limit: int | None = None) -> list[tuple[Memory, Memory]]:
    """Pairs (A, B) where A contradicts B and both are live (neither superseded nor expired)."""
    links = [link for link in typed_links(store) if link.type == CONTRADICTS]
    found = store.get_many({i for link in links for i in (link.source, link.target)})
    now = timestamps.now()

    def live(memory: Memory | None) -> bool:
        return memory is not None and not memory.is_superseded and not memory.is_expired(now)

    pairs = [(found[link.source], found[link.target]) for link in links
             if live(found.get(link.source)) and live(found.get(link.target))]
    return pairs if limit is None else pairs[:limit]


def _emit(store: Store, ids: tuple[str, str], done: bool, initiator: Initiator) -> Change:
    change = Change(changed=frozenset(ids), source="typed link", kind=ChangeKind.LINKED, initiator=initiator)
    return store._emit(change) if done else Change()  # noqa: SLF001 (the graph and the desk redraw)


__all__ = ["LINK_TYPES", "LinkView", "LinkWrite", "add_link", "contradictions", "links_of", "remove_link"]
