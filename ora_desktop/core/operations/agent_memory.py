"""What an agent does with its memory: remember, recall, search, context, touch, important,
supersede, link, forget — each a validated call into the :class:`~ora_desktop.core.Store`.

These are the operations the MCP server exposes as tools (and any other face may call). They
hold the rules a face would otherwise be tempted to repeat: ids must exist before anything
changes, counts and budgets are whole numbers of 1 or more, a forget is recoverable and says
how to bring the rows back. Errors are :class:`~ora_desktop.core.OraError` subclasses whose
message names the value and what is wrong; a refused call changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..context import ContextBundle, build_context
from ..errors import InvalidValue, NotFound
from ..records import Change, Initiator, Memory
from ..validation import check_id
from .searching import search_file

if TYPE_CHECKING:
    from ..search.results import SearchResult
    from ..store import Store

#: Largest ``limit`` a recall, important or search call may ask for.
MAX_LIMIT = 1000
#: Largest context budget, in tokens (a generous model window).
MAX_BUDGET = 1_000_000
#: Largest ``hops`` for the related-memory expansion of a context.
MAX_HOPS = 5


@dataclass(frozen=True, slots=True)
class Remembered:
    """The memory as stored, and what changed."""

    memory: Memory
    change: Change


@dataclass(frozen=True, slots=True)
class Touched:
    """The memories after their access was recorded, in the order asked."""

    memories: tuple[Memory, ...]
    change: Change


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What a recoverable delete removed and the trash rows that bring it back."""

    removed: tuple[Memory, ...]
    trash_ids: tuple[int, ...]
    change: Change


@dataclass(frozen=True, slots=True)
class Relinked:
    """The result of a supersede or link: which memories changed."""

    change: Change


def whole_number(value: Any, field: str, low: int = 1, high: int | None = None) -> int:
    """``value`` as an int from ``low`` to ``high``, or ``InvalidValue`` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(field, f"{value!r} is not a whole number")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high:,}" if high is not None else f"of {low} or more"
        raise InvalidValue(field, f"{value} must be a whole number {bound}")
    return value


def id_list(ids: str | Iterable[str], field: str = "ids") -> list[str]:
    """Validated ids, duplicates dropped, order kept; an empty list is refused."""
    if isinstance(ids, str):
        ids = [ids]
    checked = list(dict.fromkeys(check_id(i, field) for i in ids))
    if not checked:
        raise InvalidValue(field, "give at least one memory id")
    return checked


def require_ids(store: Store, ids: Sequence[str]) -> dict[str, Memory]:
    """The memories with these ids; ``NotFound`` naming every missing id (nothing changed)."""
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {', '.join(repr(i) for i in missing)} (nothing changed)")
    return found


# ----------------------------------------------------------------------------- writes
def remember(store: Store, content: str, type: str = "fact", importance: int = 5, *,
             related: Iterable[str] | None = None, expires_at: str | None = None) -> Remembered:
    """Store a new memory (the seed's insert); every value is checked before any SQL runs."""
    fields: dict[str, Any] = {}
    if related:
        fields["related_to"] = list(related)
    if expires_at:
        fields["expires_at"] = expires_at
    memory = store.add(content, type, importance, **fields)
    return Remembered(memory, Change(added=frozenset({memory.id}), source="add",
                                              initiator=Initiator.EXTERNAL))


def touch(store: Store, ids: str | Iterable[str]) -> Touched:
    """Record an access on each memory (count +1, last access now, health +0.1, capped at 1)."""
    wanted = id_list(ids)
    require_ids(store, wanted)
    change = store.touch_many(wanted)
    found = store.get_many(wanted)
    return Touched(tuple(found[i] for i in wanted if i in found), change)


def forget(store: Store, ids: str | Iterable[str], reason: str = "forgotten") -> Forgotten:
    """Delete memories recoverably: their full rows go to the trash first (never purged here).

    Every id must exist, or nothing is deleted. ``trash_ids`` are what ``undelete`` takes.
    """
    wanted = id_list(ids)
    require_ids(store, wanted)
    with store.write():  # one transaction: no other writer can add trash rows before we read ours
        removed = store.delete(wanted, reason=reason)
        trash_ids = tuple(sorted(store.batch_rows(removed.batch).values()))
    return Forgotten(tuple(removed), trash_ids, removed.change.but(initiator=Initiator.EXTERNAL))


def supersede(store: Store, old_id: str, new_id: str) -> Relinked:
    """Mark ``old_id`` as replaced by ``new_id`` (both must exist; a cycle is refused)."""
    return Relinked(store.supersede(check_id(old_id, "old_id"), check_id(new_id, "new_id")))


def link(store: Store, a: str, b: str, *, mutual: bool = True, remove: bool = False) -> Relinked:
    """Relate two memories through ``related_to`` (both ways unless ``mutual=False``), or unlink."""
    a, b = check_id(a, "id"), check_id(b, "other_id")
    return Relinked(store.unlink(a, b, mutual=mutual) if remove else store.link(a, b, mutual=mutual))


# ----------------------------------------------------------------------------- reads
def recall(store: Store, type: str, limit: int = 20) -> list[Memory]:
    """The seed's recall: memories of ``type`` with health above 0.3, most important then newest."""
    return store.recall(type, whole_number(limit, "limit", 1, MAX_LIMIT))


def important(store: Store, limit: int = 50) -> Sequence[Memory]:
    """The seed's extraction rule: importance >= 7, or facts with health >= 0.5."""
    return store.important(whole_number(limit, "limit", 1, MAX_LIMIT))


def search(store: Store, query: str, limit: int = 20) -> SearchResult:
    """The query language over this file, best first: the same search the CLI's ``search`` runs
    (by words and meaning once the file's vectors exist, by words until then).

    FTS5 syntax is never passed through: the query language reads it as plain words, and
    anything it ignored is listed in ``warnings``.
    """
    if not isinstance(query, str):
        raise InvalidValue("query", f"{query!r} is not text")
    return search_file(store, query, whole_number(limit, "limit", 1, MAX_LIMIT))


def context(store: Store, query: str, token_budget: int = 2000, *, hops: int = 1) -> ContextBundle:
    """Important, relevant and recent memories for ``query``, never more than ``token_budget`` tokens."""
    if not isinstance(query, str):
        raise InvalidValue("query", f"{query!r} is not text")
    budget = whole_number(token_budget, "token_budget", 1, MAX_BUDGET)
    return build_context(store, query, budget, hops=whole_number(hops, "hops", 0, MAX_HOPS))


def memory(store: Store, memory_id: str) -> Memory:
    """The memory with this id; ``NotFound`` naming it otherwise."""
    return store.get(check_id(memory_id))
