"""Search as one request and one answer: what the library, the CLI, the window and MCP call.

A :class:`SearchRequest` holds everything a face knows: the typed text, the facet values and
quick filters ticked, the sort, the scope, the limit and the mode. Every filter becomes words
of the query language (:mod:`ora_desktop.core.search.query`) before anything runs —
:meth:`SearchRequest.query_text` is exactly what a person could type for the same answer — so
ticking the "fact" facet is ``type:fact``, applied by the engine before ranking and the limit,
and counts agree with results on a file of any size.

:func:`search_memories` answers with a :class:`SearchAnswer`: the row keys in rank (or sort)
order, how many matched, the terms, the notes to show, and (when asked) facet counts under the
same filters. Snippets and highlight spans are not computed for the thousand keys; a face asks
:meth:`SearchAnswer.spans` / :meth:`SearchAnswer.snippet` for the rows it shows.
"""

from __future__ import annotations

import threading
from array import array
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InvalidValue, OraError
from ..facets import age_facet, count_facets, order_group
from ..health_buckets import bucket_filter
from ..home import OraHome
from ..listing import ListQuery, resolve_pins
from ..pins import TABLE as PINS_TABLE
from ..records import Memory
from ..search.highlight import match_spans, snippet
from ..search.hits import make_hit
from ..search.query import ParsedQuery, parse_query
from ..search.results import Hit, Span
from ..search.words import any_word_query
from ..store import Store
from ..timefilter import AGE_BUCKETS

# The engine and the facet counter (and with them the index builder, the sidecar and filelock)
# are imported by the calls that run them: the window lists its first rows with this module,
# before any search or count.

RANK = "rank"  # sort by relevance (hits best first); without words, newest first
MODES = ("lexical", "semantic", "hybrid")
SCOPES = ("file", "all")
DEFAULT_LIMIT = 1000
#: Tag counts over more matching memories than this take seconds at 1M: skipped (said so in notes).
TAG_FACETS_UP_TO = 50_000
TAG_VALUES = 15

#: name -> (label, tooltip, the query-language words it adds)
QUICK_FILTERS: dict[str, tuple[str, str, str]] = {
    "expiring": ("Expiring", "Expires within the next 7 days", "expires:<7d -is:expired"),
    "low_health": ("Low health", "Health at or below 0.3: recall no longer returns it", "health:<=0.3"),
    "dirty": ("Dirty", "Changed since the last sync", "is:dirty"),
    "superseded": ("Superseded", "Replaced by a newer memory", "is:superseded"),
    "at_risk": ("At risk", "Important (7 or more) but decaying (health below 0.5)", "importance:>=7 health:<0.5"),
    "pinned": ("Pinned", "Pinned: always first in an agent's context", "is:pinned"),
}
#: Facet groups a tick can narrow by (plus ``tag:<kind>``).
FACET_GROUPS = ("type", "sync", "importance", "health", "created")


class Cancelled(OraError):
    """A newer request made this one obsolete; it stopped before finishing."""


def _quote(value: str) -> str:
    return f'"{value}"' if any(c.isspace() for c in value) else value


def _age_filter(label: str) -> str:
    for name, low, high in AGE_BUCKETS:
        if name == label:
            if not low:
                return f"<{high:g}d"
            return f">={low:g}d" if high is None else f"{low:g}d..<{high:g}d"
    raise InvalidValue("created", f"{label!r} is not one of {', '.join(b[0] for b in AGE_BUCKETS)}")


def facet_filter(group: str, values: tuple[str, ...] | list[str]) -> str:
    """The query-language words for facet ``group`` with ``values`` ticked (OR within a group,
    except tags, where each ticked tag must be present): ``type:fact,task``,
    ``health:<0.1,0.5..<0.6``, ``created:<1d``, ``tag:error=TypeError``."""
    chosen = sorted(values)
    if not chosen:
        return ""
    if group in ("type", "sync"):
        return f"{group}:{','.join(chosen)}"
    if group == "importance":
        return "importance:" + ",".join(v if v.lstrip("-").isdigit() else "none" for v in chosen)
    if group == "health":
        return "health:" + ",".join(bucket_filter(v) for v in chosen)
    if group == "created":
        return "created:" + ",".join(_age_filter(v) for v in chosen)
    if group.startswith("tag:"):
        return " ".join(f"tag:{group[4:]}={_quote(v)}" for v in chosen)
    raise InvalidValue("facet", f"{group!r} is not a facet ({', '.join(FACET_GROUPS)} or tag:KIND)")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """What to search for and how to list it (see the module docstring)."""

    text: str = ""
    #: Facet values ticked: (group, values) pairs, e.g. (("type", ("fact",)),).
    ticks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Names of :data:`QUICK_FILTERS` switched on.
    quick: tuple[str, ...] = ()
    sort: str = RANK
    descending: bool = True
    scope: str = "file"
    limit: int = DEFAULT_LIMIT
    mode: str = "lexical"
    #: Count facets in the same call (a face that counts them later passes False).
    facets: bool = True

    def with_(self, **changes: Any) -> SearchRequest:
        return replace(self, **changes)

    def filter_text(self, without: str | None = None) -> str:
        """The quick filters and ticks as query-language words (leaving out group ``without``)."""
        words = []
        for name in sorted(self.quick):
            if name not in QUICK_FILTERS:
                raise InvalidValue("quick", f"{name!r} is not one of {', '.join(QUICK_FILTERS)}")
            words.append(QUICK_FILTERS[name][2])
        words.extend(facet_filter(group, values) for group, values in sorted(self.ticks) if group != without)
        return " ".join(w for w in words if w)

    def query_text(self, without: str | None = None) -> str:
        """The typed text and every filter, as one query a person could type."""
        return " ".join(x for x in (self.text.strip(), self.filter_text(without)) if x)

    @property
    def has_words(self) -> bool:
        """Words to rank by (or tag/exclusion filters the sidecar answers): a ranked search."""
        parsed = parse_query(self.query_text())
        return bool(parsed.groups or parsed.excluded or parsed.tags or parsed.not_tags)


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """The answer to one :class:`SearchRequest`."""

    request: SearchRequest
    #: The query-language text that was searched (typed words plus every filter).
    query: str
    parsed: ParsedQuery
    #: Row keys (rowids) of the file's memories, best first (or in ``request.sort`` order).
    keys: array = field(default_factory=lambda: array("q"))
    #: Memory ids of ranked hits, best first (empty for a plain listing, which may be a million rows).
    ids: tuple[str, ...] = ()
    #: The blended score of each of ``ids`` (same order).
    scores: tuple[float, ...] = ()
    #: How many memories match (more than ``len(keys)`` when the limit cut the list; None: unknown).
    total: int | None = None
    terms: tuple[str, ...] = ()
    #: Sentences for the person: partial matches, fallback, ignored filters, skipped files.
    notes: tuple[str, ...] = ()
    #: Facet group -> value -> count under the same filters (``tag:<kind>`` groups too); None when not asked.
    facets: dict[str, dict[str, int]] | None = None
    ranked: bool = False
    #: "full-text", "like" (no index), "semantic", "hybrid" or "filter" (a plain listing).
    engine: str = "filter"
    #: Scope "all": hits from every file (with snippets); a file's keys mean nothing there.
    hits: tuple[Hit, ...] = ()

    @classmethod
    def listing(cls, request: SearchRequest, parsed: ParsedQuery, count: int) -> SearchAnswer:
        """The answer for a request without words whose ``count`` rows a face listed itself
        (through :func:`listing_query`), to count its facets with :func:`count_answer_facets`."""
        return cls(request=request, query=request.query_text(), parsed=parsed, total=count,
                   notes=parsed.warnings, engine="filter")

    def spans(self, text: str) -> list[Span]:
        """Where this search's words occur in ``text``, stem-aware as the index matched them
        (a search for ``running`` marks ``runs``). Cheap enough per painted row."""
        return match_spans(text, self.parsed) if self.parsed.groups else []

    def snippet(self, memory: Memory, chars: int = 160) -> tuple[str, tuple[Span, ...]]:
        """(snippet text, spans within it) for one memory, computed now."""
        text, inside, _ = snippet(memory.content, self.spans(memory.content), chars)
        return text, inside


def answer_hits(store: Store, answer: SearchAnswer, start: int = 0, stop: int | None = None,
                snippet_chars: int = 160) -> list[Hit]:
    """The hits at rows ``start:stop`` of ``answer``, with snippets and spans computed now (only
    for the rows asked: a face shows a screenful, the CLI its ``--limit``)."""
    from ..search import engine

    if answer.hits:
        return list(answer.hits[start:stop])
    keys = list(answer.keys[start:stop])
    score = dict(zip(answer.ids, answer.scores, strict=False))
    out = []
    for memory in store.by_rowids(keys):
        out.append(make_hit(memory, score.get(memory.id, 0.0), answer.spans(memory.content), None,
                                   engine.path_of(store), snippet_chars, "keyword" if answer.ranked else "filter"))
    return out


def listing_query(store: Store, request: SearchRequest, parsed: ParsedQuery | None = None) -> ListQuery:
    """The :class:`ListQuery` listing every memory the request's filters select, in its sort
    order (for a request without words; the filters come from the query language)."""
    parsed = parsed or parse_query(request.query_text())
    if parsed.tags or parsed.not_tags:
        raise InvalidValue("query", "tag: filters need the search index; search instead of listing")
    order = "created_at" if request.sort == RANK else request.sort
    return ListQuery(order_by=order, descending=request.descending, limit=None, superseded="show",
                     filters=resolve_pins(parsed, _pins(store, parsed)))


def _pins(store: Store, parsed: ParsedQuery) -> bool:
    """Whether ``parsed`` filters by pins and ``store`` holds them (``filter_sql``'s ``pins``)."""
    return parsed.pinned is not None and store.has_table(PINS_TABLE)


def _check(request: SearchRequest) -> None:
    if request.mode not in MODES:
        raise InvalidValue("mode", f"{request.mode!r} is not one of {', '.join(MODES)}")
    if request.scope not in SCOPES:
        raise InvalidValue("scope", f"{request.scope!r} is not one of {', '.join(SCOPES)}")


def _stopped(cancel: object) -> bool:
    return cancel is not None and bool(cancel.is_set() if isinstance(cancel, threading.Event) else cancel())  # type: ignore[operator]


def _stop(cancel: object) -> None:
    if _stopped(cancel):
        raise Cancelled("search cancelled: a newer one replaced it")


def search_memories(target: Store | OraHome, request: SearchRequest, cancel: object = None,
                    wait: bool = True) -> SearchAnswer:
    """Answer ``request`` for one file (``target`` a :class:`Store`) or, scope ``"all"``, for every
    agent under an :class:`OraHome` (or the store's home). Runs the engine once.

    ``cancel`` (an Event or a callable returning True) stops the work between steps with
    :class:`Cancelled`. ``wait=False``: while the full-text index is not built yet, a LIKE scan
    answers (a note says so) instead of building it first (the window builds it meanwhile).
    Never raises for what was typed; a file that cannot be read raises the ``OraError`` naming it.
    """
    from ..search.across import search_many

    _check(request)
    text = request.query_text()
    parsed = parse_query(text)
    if request.scope == "all":
        home = target if isinstance(target, OraHome) else OraHome.default()
        result = search_many(home, parsed, limit=request.limit, wait=wait)
        return SearchAnswer(request=request, query=text, parsed=parsed, ids=tuple(h.id for h in result.hits),
                            total=None, terms=tuple(result.terms), hits=tuple(result.hits), ranked=True,
                            notes=tuple(x for x in (result.note, *result.warnings) if x), engine="full-text")
    if not isinstance(target, Store):
        raise InvalidValue("target", "a search of one file needs an open Store")
    store = target
    _stop(cancel)
    if not (parsed.groups or parsed.excluded or parsed.tags or parsed.not_tags):
        query = listing_query(store, request, parsed)
        keys = store.row_keys(query)
        answer = SearchAnswer(request=request, query=text, parsed=parsed, keys=keys, total=len(keys),
                              notes=parsed.warnings, engine="filter")
    else:
        answer = _ranked(store, request, parsed, text, wait)
    _stop(cancel)
    if request.facets:
        answer = count_answer_facets(store, answer, cancel)
    return answer


def _ranked(store: Store, request: SearchRequest, parsed: ParsedQuery, text: str, wait: bool) -> SearchAnswer:
    from ..search import engine

    if request.mode == "lexical":
        result = engine.search(store, parsed, limit=request.limit, wait=wait, snippets=False, facets=False)
        kind = "like" if result.fallback else "full-text"
    else:
        from ..search.semantic import search_by_meaning

        result = search_by_meaning(store, parsed, request.limit, mode=request.mode)
        kind = request.mode
    if result.partial:  # the any-word form answered: highlight and count by it
        parsed = any_word_query(parsed) or parsed
    hits = [h for h in result.hits if h.memory.rowid is not None]
    keys = array("q", (h.memory.rowid for h in hits))
    ids = tuple(h.memory.id for h in hits)
    if request.sort != RANK and ids:
        keys = store.row_keys(ListQuery(ids=ids, order_by=request.sort, descending=request.descending,
                                        limit=None, superseded="show"))
    total = result.total if result.total is not None else (len(hits) if len(hits) < request.limit else None)
    notes = [result.note, *result.warnings]
    if total is not None and total > len(keys):
        notes.insert(0, f"Showing the best {len(keys):,} of {total:,} matches")
    return SearchAnswer(request=request, query=text, parsed=parsed, keys=keys, ids=ids, total=total,
                        scores=tuple(h.score for h in hits),
                        terms=tuple(result.terms), notes=tuple(n for n in notes if n), ranked=True, engine=kind,
                        facets=None)


def count_answer_facets(store: Store, answer: SearchAnswer, cancel: object = None) -> SearchAnswer:
    """``answer`` with facet counts for what it lists, under the same filters (tags included),
    and its ``total`` filled in from them when the engine did not know it.

    A ticked group counts as if nothing in it were ticked, so more of its values can be added
    (they combine with OR). With words, every memory that matches counts (not only the listed
    best ``limit``), so a count equals the total that ticking that value gives.
    """
    request = answer.request
    groups = _counts(store, answer.parsed, answer, cancel)
    total = answer.total
    if total is None and answer.ranked and answer.hits == ():
        total = sum(groups["type"].values())
    for group, _values in request.ticks:
        if group.startswith("tag:"):
            continue
        _stop(cancel)
        wider = parse_query(request.query_text(without=group))
        groups[group] = _counts(store, wider, None, cancel).get(group, {})
    _stop(cancel)
    groups.update(tag_groups(store, answer.parsed, total))
    notes = answer.notes
    if answer.total is None and total is not None and total > len(answer.keys):
        notes = (f"Showing the best {len(answer.keys):,} of {total:,} matches", *notes)
    return replace(answer, facets=groups, total=total, notes=notes)


def tag_groups(store: Store, parsed: ParsedQuery, total: int | None) -> dict[str, dict[str, int]]:
    """The ``tag:<kind>`` facet groups of the ``total`` memories ``parsed`` matches (none past
    :data:`TAG_FACETS_UP_TO`: tag counts over tens of thousands of memories take seconds at 1M;
    none while this process builds the file's index: they read it)."""
    if total is None or total > TAG_FACETS_UP_TO:
        return {}
    return {f"tag:{kind}": dict(sorted(values.items(), key=lambda kv: -kv[1])[:TAG_VALUES])
            for kind, values in _tag_counts(store, parsed).items()}


def _tag_counts(store: Store, parsed: ParsedQuery) -> dict[str, dict[str, int]]:
    from ..search import engine

    try:
        return engine.tag_facets(store, None if parsed.is_empty else parsed, limit=TAG_VALUES)
    except OraError:
        return {}


def _counts(store: Store, parsed: ParsedQuery, answer: SearchAnswer | None,
            cancel: object = None) -> dict[str, dict[str, int]]:
    """Type, sync, importance, health and created-age counts of what ``parsed`` selects."""
    from ..search.counting import Interrupted, match_facets

    ranked = bool(parsed.groups or parsed.excluded or parsed.tags or parsed.not_tags)
    if not ranked:
        query = ListQuery(limit=None, superseded="show", filters=resolve_pins(parsed, _pins(store, parsed)))
        if parsed.is_empty:
            query = ListQuery(limit=None)  # the seed indexes answer this from their covering scans
        facets = count_facets(store, query)
        ages = age_facet(store, query)
        return _groups(facets.types, facets.sync_statuses, facets.importance, facets.health_buckets, ages)
    listed = answer is not None and (
        (answer.total is not None and answer.total <= len(answer.keys))
        or answer.request.mode == "semantic")  # by meaning alone, the nearest listed are the matches
    if listed:
        # Every match is listed (or, by meaning, the nearest are the matches): count exactly those rows.
        query = ListQuery(ids=answer.ids, limit=None, superseded="show")
        facets = count_facets(store, query)
        return _groups(facets.types, facets.sync_statuses, facets.importance, facets.health_buckets,
                       age_facet(store, query))
    try:
        counted = match_facets(store, parsed, None if cancel is None else lambda: _stopped(cancel))
    except Interrupted:
        raise Cancelled("facet count cancelled: a newer search replaced it") from None
    if counted is None:  # no index to count every match with: count what is listed
        ids = answer.ids if answer is not None else ()
        query = ListQuery(ids=ids, limit=None, superseded="show")
        facets = count_facets(store, query)
        return _groups(facets.types, facets.sync_statuses, facets.importance, facets.health_buckets,
                       age_facet(store, query))
    return _groups(*counted)


def _groups(types: dict, syncs: dict, importance: dict, buckets: dict, ages: dict) -> dict[str, dict[str, int]]:
    counted = {"type": types, "sync": syncs, "importance": importance, "health": buckets, "created": ages}
    return {group: order_group(group, values) for group, values in counted.items()}

