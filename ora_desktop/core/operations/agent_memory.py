"""What an agent does with its memory: remember, recall, search, context, touch, important,
get, list, update, supersede, link, forget, undelete — each a validated call into the
:class:`~ora_desktop.core.Store` or the journalled operations of :mod:`.edits`.

These are the operations the MCP server exposes as tools (and any other face may call). They
hold the rules a face would otherwise be tempted to repeat: ids must exist before anything
changes (related ids included), counts and budgets are whole numbers in range, an identical
memory is not stored twice, a forget is recoverable. Every write is journalled with who made it
(``actor``: ``library`` unless the face says otherwise, e.g. ``mcp:claude-code``), so
``ora-desktop undo --list`` shows it and a person can take it back. Errors are
:class:`~ora_desktop.core.OraError` subclasses whose message names the value and what is wrong;
a refused call changes nothing.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .. import timestamps
from ..errors import Conflict, InvalidValue, NotFound
from ..listing import SORTABLE, Cursor, ListQuery
from ..records import Change, Initiator, Memory
from ..sametext import identical_live, normalized
from ..validation import check_content, check_id, check_type
from . import edits, links, pins
from .edits import require_ids

if TYPE_CHECKING:
    from ..context import ContextBundle
    from ..search.results import SearchResult
    from ..store import Store

#: Largest ``limit`` a recall, important, list or search call may ask for.
MAX_LIMIT = 1000
#: Largest context budget, in tokens (a generous model window).
MAX_BUDGET = 1_000_000
#: Largest ``hops`` for the related-memory expansion of a context.
MAX_HOPS = 5
#: Who an agent's write is journalled as when the face does not say (a library call).
LIBRARY = "library"
#: Search modes; :data:`DEFAULT_MODE` stays the default whether or not the file has vectors.
SEARCH_MODES = ("lexical", "semantic", "hybrid")
DEFAULT_MODE = "lexical"
#: Cosine below which a memory is not about the query at all, in the semantic and hybrid modes
#: (measured on the paraphrase set of tests/benchmarks/meaning_data.py, see docs/mcp.md).
MEANING_FLOOR = 0.33
#: A new memory whose vector is this close to an existing one names it as its closest match
#: (the ``duplicates`` default: restatements group, different facts do not).
NEAR_DUPLICATE = 0.80
#: Columns ``list`` may sort by.
LIST_SORTS = ("created_at", "updated_at", "importance", "health_score", "last_accessed_at", "access_count",
              "expires_at")
ProgressFn = Callable[[int, int], None]
_TAGS_LINE = re.compile(r"^Tags: .*$\n?", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Remembered:
    """The memory as stored (or the identical one already there), and what changed.

    ``already``: an identical memory existed, nothing was added. ``closest``: (id, cosine) of
    the nearest existing memory when a near duplicate was stored anyway (vectors needed)."""

    memory: Memory
    change: Change
    entry: int | None = None
    already: bool = False
    closest: tuple[str, float] | None = None


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
    entry: int | None = None


@dataclass(frozen=True, slots=True)
class Relinked:
    """The result of a supersede or link: which memories changed."""

    change: Change
    entry: int | None = None


@dataclass(frozen=True, slots=True)
class Updated:
    """One memory after an update (``pinned``: its pin state when the update set it)."""

    memory: Memory
    change: Change
    entry: int | None = None
    pinned: bool | None = None


@dataclass(frozen=True, slots=True)
class Undeleted:
    """Memories brought back from the trash; ``note``: an undo, redo or restore in chunks stopped
    part-way before (its process ended), taken back first (:mod:`.chunked_undo`)."""

    restored: tuple[Memory, ...]
    change: Change
    entry: int | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing; ``cursor`` continues it (``None``: that was the last page)."""

    memories: list[Memory]
    cursor: str | None


@dataclass(frozen=True, slots=True)
class Found:
    """A search's answer: hits best first with scores from 0 to 1, the mode used, and notes."""

    result: SearchResult
    mode: str
    notes: tuple[str, ...]


def whole_number(value: Any, field: str, low: int = 1, high: int | None = None) -> int:
    """``value`` as an int from ``low`` to ``high``, or ``InvalidValue`` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(field, f"{value!r} is not a whole number")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high:,}" if high is not None else f"of {low} or more"
        raise InvalidValue(field, f"{value} must be a whole number {bound}")
    return value


def text(value: Any, field: str) -> str:
    """``value`` if it is text that can be stored (valid Unicode: no lone surrogates)."""
    if not isinstance(value, str):
        raise InvalidValue(field, f"{value!r} is not text")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidValue(field, f"holds {value[exc.start]!r} at position {exc.start}, which is not a "
                                  "character (a lone surrogate)") from None
    return value


def id_list(ids: str | Iterable[str], field: str = "ids") -> list[str]:
    """Validated ids, duplicates dropped, order kept; an empty list is refused."""
    if isinstance(ids, str):
        ids = [ids]
    checked = list(dict.fromkeys(check_id(text(i, field), field) for i in ids))
    if not checked:
        raise InvalidValue(field, "give at least one memory id")
    return checked


def existing_ids(store: Store, ids: Iterable[str], field: str) -> list[str]:
    """``ids`` checked and present in the file; ``NotFound`` naming ``field`` and every missing id."""
    wanted = id_list(ids, field)
    found = store.get_many(wanted)
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFound(f"{field}: no memory with id {', '.join(repr(i) for i in missing)} in {store.path} "
                       "(nothing changed)")
    return wanted


def with_tags(content: str, tags: Iterable[str] | None) -> str:
    """``content`` whose ``Tags:`` line (what the tag extractor reads) lists ``tags``; an empty
    list removes the line, ``None`` leaves the content as it is."""
    if tags is None:
        return content
    if isinstance(tags, str):
        raise InvalidValue("tags", "give a list of tags, e.g. ['jwt', 'error=ENOENT']")
    clean: list[str] = []
    for tag in tags:
        tag = text(tag, "tags").strip()
        if not tag or "," in tag or "\n" in tag or len(tag) > 200:
            raise InvalidValue("tags", f"{tag!r} must be a non-empty tag of at most 200 characters without "
                                       "commas or line breaks")
        clean.append(tag)
    body = _TAGS_LINE.sub("", content).rstrip("\n")
    clean = list(dict.fromkeys(clean))
    return f"{body}\nTags: {', '.join(clean)}" if clean else body


# ----------------------------------------------------------------------------- writes
def remember(store: Store, content: str, type: str = "fact", importance: int = 5, *,
             related: Iterable[str] | None = None, expires_at: str | None = None,
             tags: Iterable[str] | None = None, copy: bool = False, actor: str = LIBRARY) -> Remembered:
    """Store a new memory (the seed's insert); every value is checked before any SQL runs.

    A live memory with the same text (case, spacing and its ``Tags:`` line aside) is returned
    instead, nothing added (``already``), unless ``copy``. When the file has vectors, the
    nearest existing memory at or above :data:`NEAR_DUPLICATE` is named in ``closest`` (the new
    one is stored anyway).
    """
    content = with_tags(check_content(text(content, "content")), tags)
    fields: dict[str, Any] = {"type": check_type(type), "importance": whole_number(importance, "importance", 1, 10)}
    if related:
        fields["related_to"] = existing_ids(store, related, "related")
    if expires_at:
        fields["expires_at"] = text(expires_at, "expires_at")
    store._require_writable()
    if not copy:  # the same text is the same memory, whatever its Tags line
        same = identical_live(store, _TAGS_LINE.sub("", content), lambda t: normalized(_TAGS_LINE.sub("", t)),
                              more_after=True)
        if same is not None:
            return Remembered(store.get(same), Change(), already=True)
    closest = nearest_memory(store, content)
    done = edits.add(store, content, initiator=Initiator.EXTERNAL, actor=actor, **fields)
    return Remembered(done.memory, done.change, done.entry, closest=closest)


def nearest_memory(store: Store, content: str) -> tuple[str, float] | None:
    """(id, cosine) of the existing memory nearest ``content`` if at least :data:`NEAR_DUPLICATE`
    and the file has vectors (never builds them); ``None`` otherwise."""
    from ..search.semantic import has_vectors

    try:
        if not has_vectors(store):
            return None
        from ..search.vectors import best, get_vectors

        vectors = get_vectors(store.path)
        _, mids = vectors.snapshot()
        if not len(mids):
            return None
        rows, scores = best(vectors.cosines(vectors.provider.embed([content])[0]), 1)
    except Exception:  # noqa: BLE001 - a hint only: a model or sidecar problem must not refuse the write
        return None
    for row, cosine in zip(rows.tolist(), scores.tolist(), strict=True):
        memory_id = mids[row] if row < len(mids) else None
        if memory_id and cosine >= NEAR_DUPLICATE and store.find(memory_id) is not None:
            return memory_id, float(cosine)
    return None


def update(store: Store, memory_id: str, *, content: str | None = None, type: str | None = None,
           importance: int | None = None, expires_at: str | None = None, related: Iterable[str] | None = None,
           tags: Iterable[str] | None = None, version: str | None = None, pin: bool | None = None,
           actor: str = LIBRARY) -> Updated:
    """Change a memory in place, validated like ``ora-desktop edit`` (the sync rule applies).

    ``expires_at`` ``""`` clears the expiry, ``related`` ``[]`` clears the links; ``tags``
    rewrites the content's ``Tags:`` line. With ``version`` (a memory's ``version``), a memory
    changed since is refused (``Conflict``, nothing changed). ``pin`` True pins the memory
    (first in every context), False unpins it (:mod:`.pins`: its own undo, not journalled), in
    the same transaction as the edit.
    """
    memory_id = check_id(text(memory_id, "id"))
    fields: dict[str, Any] = {}
    if content is not None:
        fields["content"] = check_content(text(content, "content"))
    if type is not None:
        fields["type"] = check_type(type)
    if importance is not None:
        fields["importance"] = whole_number(importance, "importance", 1, 10)
    if expires_at is not None:
        fields["expires_at"] = text(expires_at, "expires_at") or None
    if related is not None:
        fields["related_to"] = existing_ids(store, related, "related") if related else None
    if tags is not None:
        base = fields.get("content") or store.get(memory_id).content
        fields["content"] = check_content(with_tags(base, tags))
    if version is not None:
        version = text(version, "version")
    if pin is not None and not isinstance(pin, bool):
        raise InvalidValue("pin", f"{pin!r} is not true or false")
    if not fields and pin is None:
        raise InvalidValue("update", "nothing to change: give content, type, importance, expires_at, related, tags "
                                     "or pin")
    with store.write():
        done = (edits.edit(store, memory_id, fields, expected_version=version, initiator=Initiator.EXTERNAL,
                           actor=actor) if fields else None)
        if pin is not None:
            if done is None and version is not None and store.get(memory_id).version != version:
                raise Conflict(memory_id, f"{store.path}: memory {memory_id!r} was changed since that version was read "
                                          "(nothing changed)")
            (pins.pin(store, memory_id, by=actor, initiator=Initiator.EXTERNAL) if pin
             else pins.unpin(store, memory_id, initiator=Initiator.EXTERNAL))
    if done is None:
        return Updated(store.get(memory_id), Change(changed=frozenset([memory_id])), None, pin)
    return Updated(done.memory, done.change, done.entry, pin)


def touch(store: Store, ids: str | Iterable[str]) -> Touched:
    """Record an access on each memory (count +1, last access now, health +0.1, capped at 1).

    Usage, not an edit: not journalled (a person's undo never takes back an agent's reading)."""
    wanted = id_list(ids)
    require_ids(store, wanted)
    change = store.touch_many(wanted)
    found = store.get_many(wanted)
    return Touched(tuple(found[i] for i in wanted if i in found), change)


def forget(store: Store, ids: str | Iterable[str], reason: str = "forgotten", *, actor: str = LIBRARY) -> Forgotten:
    """Delete memories recoverably: their full rows go to the trash first (never purged here).

    Every id must exist, or nothing is deleted. ``trash_ids`` are what ``undelete`` takes.
    """
    wanted = id_list(ids)
    done = edits.delete(store, wanted, reason=text(reason, "reason"), initiator=Initiator.EXTERNAL, actor=actor)
    return Forgotten(done.removed, done.trash_ids, done.change, done.entry)


def undelete(store: Store, ids: str | Iterable[str], *, actor: str = LIBRARY) -> Undeleted:
    """Bring forgotten memories back by id (the most recently deleted copy of each)."""
    wanted = id_list(ids)
    done = edits.restore_latest(store, wanted, initiator=Initiator.EXTERNAL, actor=actor)
    found = store.get_many(done.restored)
    return Undeleted(tuple(found[i] for i in done.restored if i in found), done.change, done.entry, done.note)


def supersede(store: Store, old_id: str, new_id: str, *, actor: str = LIBRARY) -> Relinked:
    """Mark ``old_id`` as replaced by ``new_id`` (both must exist; a cycle, or an ``old_id``
    already superseded by another memory, is refused)."""
    old_id, new_id = check_id(text(old_id, "old_id"), "old_id"), check_id(text(new_id, "new_id"), "new_id")
    done = edits.supersede(store, old_id, new_id, initiator=Initiator.EXTERNAL, actor=actor)
    return Relinked(done.change, done.entry)


def link(store: Store, a: str, b: str, *, mutual: bool = True, remove: bool = False, actor: str = LIBRARY,
         type: str | None = None) -> Relinked:
    """Relate two memories through ``related_to`` (both ways unless ``mutual=False``), or unlink.

    With ``type`` (:data:`..links.LINK_TYPES` or a few words), the typed link ``a --type--> b`` is
    added or removed instead (:mod:`.links`: one way by nature, its own undo, not journalled)."""
    if type is not None:
        if not mutual:
            raise InvalidValue("one_way", "a typed link already points one way (id --type--> other_id); leave it out")
        done_typed = (links.remove_link if remove else links.add_link)(
            store, text(a, "id"), text(b, "other_id"), text(type, "type"), initiator=Initiator.EXTERNAL)
        return Relinked(done_typed.change if done_typed.done else Change())
    a, b = check_id(text(a, "id"), "id"), check_id(text(b, "other_id"), "other_id")
    require_ids(store, [a, b])
    done = edits.link(store, a, b, mutual=mutual, remove=remove, initiator=Initiator.EXTERNAL, actor=actor)
    return Relinked(done.change, done.entry)


# ----------------------------------------------------------------------------- reads
def recall(store: Store, type: str, limit: int = 20) -> list[Memory]:
    """The seed's recall: memories of ``type`` with health above 0.3, most important then newest
    (superseded and expired memories left out)."""
    return store.recall(check_type(type), whole_number(limit, "limit", 1, MAX_LIMIT))


def important(store: Store, limit: int = 50) -> list[Memory]:
    """The seed's extraction rule: importance >= 7, or facts with health >= 0.5 (current memories),
    as a list (the faces that call this show every one)."""
    return list(store.important(whole_number(limit, "limit", 1, MAX_LIMIT)))


def search(store: Store, query: str, limit: int = 20, mode: str = DEFAULT_MODE, *,
           progress: ProgressFn | None = None, as_of: str | None = None) -> Found:
    """The query language over this file, best first, in ``mode`` (:data:`SEARCH_MODES`; the
    default stays lexical whether or not vectors exist). Scores run from 0 to 1 in every mode:
    lexical, the blend of BM25 with importance, health and recency; semantic, the cosine
    similarity; hybrid, the fused rank score divided by its best possible value (1: first on
    both lists). By meaning, memories below :data:`MEANING_FLOOR` are left out, so a query
    nothing is about returns nothing.

    FTS5 syntax is never passed through: the query language reads it as plain words, and
    anything it ignored is listed in the notes.

    ``as_of`` (a date or time, :func:`.as_of.parse_when`) searches the memories as they were then,
    as far as the undo journal knows (:mod:`.as_of`; words matched as plain text, lexical only);
    the notes say what the history could not cover.
    """
    text(query, "query")
    if mode not in SEARCH_MODES:
        raise InvalidValue("mode", f"{mode!r} is not one of {', '.join(SEARCH_MODES)}")
    limit = whole_number(limit, "limit", 1, MAX_LIMIT)
    if as_of is not None:
        return _search_as_of(store, query, limit, mode, text(as_of, "as_of"))
    from .searching import search_file  # the search engine loads with the first search, not the server

    _build_first(store, progress)
    if mode == "lexical":
        result = search_file(store, query, limit, mode="lexical")
    else:
        from ..search.semantic import HYBRID_K

        result = search_file(store, query, limit, mode=mode, min_similarity=MEANING_FLOOR, progress=progress)
        if mode == "hybrid":
            result = replace(result, hits=[replace(h, score=min(1.0, h.score * (HYBRID_K + 1))) for h in result.hits])
        else:
            result = replace(result, hits=[replace(h, score=max(0.0, min(1.0, h.score))) for h in result.hits])
    notes = tuple(dict.fromkeys([*result.warnings, *([result.note] if result.note else [])]))
    return Found(result, mode, notes)


def _search_as_of(store: Store, query: str, limit: int, mode: str, when_text: str) -> Found:
    from ..search.results import SearchResult
    from .as_of import parse_when, search_as_of

    when = parse_when(when_text)
    if mode != "lexical":
        raise InvalidValue("as_of", f"a search as of a past time matches words as plain text; leave out mode {mode!r}")
    answer = search_as_of(store, query, when, limit)
    covered = (f"as of {timestamps.to_sql(when)} UTC: {answer.memories:,} memories then (as the undo journal "
               "rebuilds them), words matched as plain text")
    result = SearchResult(query=query, hits=list(answer.hits), fallback=True, note=covered, warnings=answer.notes)
    return Found(result, mode, tuple(dict.fromkeys([covered, *answer.notes])))


def pinned(store: Store) -> frozenset[str]:
    """The ids pinned in ``store`` (:mod:`..pins`: first in every context)."""
    return frozenset(pins.pinned_ids(store))


def context(store: Store, query: str, token_budget: int = 2000, *, hops: int = 1,
            progress: ProgressFn | None = None) -> ContextBundle:
    """Important, relevant and recent memories for ``query``, never more than ``token_budget`` tokens."""
    text(query, "query")
    budget = whole_number(token_budget, "token_budget", 1, MAX_BUDGET)
    _build_first(store, progress)
    from ..context import build_context

    return build_context(store, query, budget, hops=whole_number(hops, "hops", 0, MAX_HOPS))


def _build_first(store: Store, progress: ProgressFn | None) -> None:
    """Build a missing search index now, reporting ``progress`` (the search would wait for it
    anyway, silently); an index already there is left to the search to refresh."""
    from ..search import ensure_index
    from ..search.index import get_index

    if progress is not None and not get_index(store.path).usable()[0]:
        ensure_index(store.path, progress)


def memory(store: Store, memory_id: str) -> Memory:
    """The memory with this id; ``NotFound`` naming it otherwise."""
    return store.get(check_id(text(memory_id, "id")))


def list_memories(store: Store, *, types: Sequence[str] = (), importance_min: int | None = None,
                  importance_max: int | None = None, sort: str = "created_at", descending: bool = True,
                  superseded: bool = False, expired: bool | None = None, limit: int = 20,
                  cursor: str | None = None) -> Page:
    """One page of memories, newest first by default (filters and sort as ``ora-desktop list``);
    ``cursor`` is the previous page's, and must come from a listing in the same order."""
    for name in types:
        check_type(name)
    for field, value in (("importance_min", importance_min), ("importance_max", importance_max)):
        if value is not None:
            whole_number(value, field, 1, 10)
    if sort not in LIST_SORTS or sort not in SORTABLE:
        raise InvalidValue("sort", f"{sort!r} is not one of {', '.join(LIST_SORTS)}")
    limit = whole_number(limit, "limit", 1, MAX_LIMIT)
    query = ListQuery(types=tuple(types), importance_min=importance_min, importance_max=importance_max,
                      superseded="show" if superseded else "hide", expired=expired, order_by=sort,
                      descending=bool(descending), limit=limit)
    if cursor is not None:
        query = query.with_(after=_read_cursor(text(cursor, "cursor"), sort, bool(descending)))
    memories = store.list(query)
    token = None
    if len(memories) == limit:
        at = store.cursor_for(memories[-1], sort)
        raw = json.dumps([sort, bool(descending), at.value, at.rowid]).encode()
        token = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return Page(memories, token)


def _read_cursor(token: str, sort: str, descending: bool) -> Cursor:
    try:
        value = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, TypeError):
        value = None
    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[3], int)):
        raise InvalidValue("cursor", f"{token!r} is not a cursor returned by list")
    if value[:2] != [sort, descending]:
        raise InvalidValue("cursor", f"that cursor continues a listing sorted by {value[0]} "
                                     f"({'descending' if value[1] else 'ascending'}); ask in that order")
    return Cursor(value[2], value[3])


def ids_starting(store: Store, prefix: str, limit: int = 100) -> list[str]:
    """Ids beginning with ``prefix``, in id order, at most ``limit`` (what a client completes)."""
    prefix = text(prefix, "value")
    query = ListQuery(superseded="show", order_by="id", descending=False, limit=whole_number(limit, "limit"),
                      id_prefix=prefix)
    return [m.id for m in store.list(query)]
