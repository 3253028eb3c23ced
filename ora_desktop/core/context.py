"""Context for an agent's next turn, assembled under a token budget.

``build_context(store, query, token_budget)`` (also ``store.context(...)``) returns, first,
the **pinned** memories (:mod:`ora_desktop.core.pins`; oldest pin first, as Letta's core memory
blocks), which take what they need of the budget before anything else (the section is there only
when the file has pins); then three sections, in this order, each within its share of what the
pinned ones left:

* **important** — the seed's extraction rule (importance >= 7, or facts with health >= 0.5),
  most important first;
* **relevant** — keyword hits for ``query`` plus their ``related_to`` neighbours up to ``hops``
  away, merged by reciprocal rank fusion; a superseded memory is replaced by the newest of its
  chain;
* **recent** — the most recently added memories.

A memory appears once (in the first section that takes it). Budget a section leaves unused
passes to the next. The rendered ``text`` never exceeds ``token_budget`` tokens as counted by
``tokenizer`` (default: 4 characters per token, rounded up). Memories are touched (access
stats) only when ``touch=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from . import timestamps
from .errors import InvalidValue, OraError
from .listing import ListQuery
from .pins import pinned_ids
from .records import Memory
from .search.words import STOPWORDS, any_word_query, content_groups, keywords

if TYPE_CHECKING:
    from .search import ParsedQuery
    from .store import Store

Tokenizer = Callable[[str], int]
DEFAULT_SHARES = {"important": 0.25, "relevant": 0.55, "recent": 0.20}
#: context() embeds a file without vectors itself up to this size (seconds); larger files need
#: ``ora-desktop embed`` (or a search by meaning) first, so an agent's call never waits minutes.
BUILD_VECTORS_UP_TO = 20_000


__all__ = ["STOPWORDS", "ContextBundle", "ContextItem", "ContextSection", "build_context", "keywords"]


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` at 4 characters per token, rounded up (the seed's estimate)."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One memory placed in the context: its rendered line and what it cost."""

    memory: Memory
    text: str
    tokens: int
    reason: str  # pinned | important | keyword | meaning | neighbor | recent
    score: float = 0.0
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ContextSection:
    name: str  # pinned | important | relevant | recent
    title: str
    items: tuple[ContextItem, ...]
    budget: int
    tokens: int
    #: Candidates of this section that did not fit the budget (not placed in any section), each
    #: with the line and the tokens it would have cost.
    left_out: tuple[ContextItem, ...] = ()

    @property
    def memories(self) -> list[Memory]:
        return [item.memory for item in self.items]


@dataclass(frozen=True, slots=True)
class ContextBundle:
    """The assembled context: sections, their rendered ``text``, and its token count."""

    query: str
    token_budget: int
    sections: tuple[ContextSection, ...]
    text: str
    tokens: int
    notes: tuple[str, ...] = field(default=())

    @property
    def memories(self) -> list[Memory]:
        return [m for section in self.sections for m in section.memories]

    def section(self, name: str) -> ContextSection | None:
        return next((s for s in self.sections if s.name == name), None)

    @property
    def left_out(self) -> list[ContextItem]:
        """Every candidate left out for budget, section by section."""
        return [item for section in self.sections for item in section.left_out]


def build_context(store: Store, query: str, token_budget: int = 2000, *, hops: int = 1,
                  shares: dict[str, float] | None = None, tokenizer: Tokenizer | None = None,
                  touch: bool = False, include_expired: bool = False, relevant_limit: int = 20,
                  recent_limit: int = 20, important_limit: int = 50) -> ContextBundle:
    """Assemble context for ``query`` within ``token_budget`` tokens (see the module doc).

    ``shares`` overrides the budget split (``important``, ``relevant``, ``recent``; normalised
    to sum to 1). ``hops`` bounds the ``related_to`` expansion of keyword hits. With
    ``touch=True`` every memory placed is touched (access count, last access, health).
    """
    count = tokenizer or estimate_tokens
    budget = max(0, int(token_budget))
    split = _shares(shares)
    notes: list[str] = []
    now = timestamps.now()

    def usable(memory: Memory) -> bool:
        return not memory.is_superseded and (include_expired or not memory.is_expired(now))

    candidates = {
        "pinned": _pinned(store, usable),
        # Superseded memories are left out before the limit (the store's one rule), expired ones after.
        "important": [(m, "important", 0.0) for m in store.important(important_limit, superseded="hide")
                      if usable(m)],
        "relevant": _relevant(store, query, relevant_limit, hops, usable, notes),
        "recent": [(m, "recent", 0.0) for m in store.list(ListQuery(order_by="rowid", limit=recent_limit * 2))
                   if usable(m)][:recent_limit],
    }
    placed: set[str] = set()
    skipped: dict[str, tuple[str, ContextItem]] = {}  # left out for budget: id -> (first section, item)
    blocks: list[str] = []
    sections: list[ContextSection] = []
    allowance_left = 0.0
    rest = budget  # what the pinned memories leave to the shared sections
    for name in SECTION_ORDER:
        if name == "pinned" and not candidates[name]:
            continue
        before = count(_join(blocks)) if blocks else 0
        if name == "pinned":
            cap = budget
        else:
            allowance_left += rest * split[name]
            cap = min(budget, before + int(allowance_left))
        title = TITLES[name].format(query=_short(query))
        items: list[ContextItem] = []
        lines: list[str] = []
        # With the default estimate no line longer than 4 characters a token fits: only that much
        # of a memory's text is normalised (a 10 MB memory costs what the budget holds).
        room = cap * 4 + 4 if tokenizer is None else None
        for memory, reason, score in candidates[name]:
            if memory.id in placed:
                continue
            content = flat(memory.content, room)
            line = render(memory, reason, content)
            trial = _join([*blocks, _block(title, [*lines, line])])
            truncated = False
            if count(trial) > cap:
                line = _fit(memory, reason, title, blocks, lines, cap, count, content)
                if line is None:
                    if memory.id not in skipped:
                        full = render(memory, reason)
                        skipped[memory.id] = (name, ContextItem(memory, full, count(full), reason, score))
                    continue
                truncated = True
            lines.append(line)
            placed.add(memory.id)
            items.append(ContextItem(memory, line, count(line), reason, score, truncated))
        if lines:
            blocks.append(_block(title, lines))
        spent = (count(_join(blocks)) if blocks else 0) - before
        if name == "pinned":
            rest = max(0, budget - spent)
            sections.append(ContextSection(name, title, tuple(items), budget, spent))
            continue
        allowance_left = max(0.0, allowance_left - spent)
        sections.append(ContextSection(name, title, tuple(items), int(rest * split[name]), spent))
    text = _join(blocks)
    sections = [replace(section, left_out=tuple(item for first, item in skipped.values()
                                                if first == section.name and item.memory.id not in placed))
                for section in sections]
    if touch and placed:
        store.touch_many(list(placed))
    return ContextBundle(query=query, token_budget=budget, sections=tuple(sections), text=text,
                         tokens=count(text) if text else 0, notes=tuple(notes))


SECTION_ORDER = ("pinned", "important", "relevant", "recent")
TITLES = {"pinned": "## Pinned memories", "important": "## Important memories",
          "relevant": "## Relevant to: {query}", "recent": "## Recent memories"}
MIN_TRUNCATED_CHARS = 40




def _shares(shares: dict[str, float] | None) -> dict[str, float]:
    merged = dict(DEFAULT_SHARES)
    if shares:
        for key, value in shares.items():
            if key not in merged:
                raise InvalidValue("shares", f"{key!r} is not a shared section ({', '.join(DEFAULT_SHARES)})")
            merged[key] = max(0.0, float(value))
    total = sum(merged.values()) or 1.0
    return {"pinned": 1.0} | {k: v / total for k, v in merged.items()}


def _pinned(store: Store, usable: Callable[[Memory], bool]) -> list[tuple[Memory, str, float]]:
    """The pinned memories, oldest pin first; a superseded one stands for the newest of its chain."""
    ids = pinned_ids(store)
    found = store.get_many(ids)
    out: list[tuple[Memory, str, float]] = []
    seen: set[str] = set()
    for memory_id in ids:
        memory = found.get(memory_id)
        if memory is not None and memory.is_superseded:
            memory = store.live_version(memory.id) or memory
        if memory is None or memory.id in seen or not usable(memory):
            continue
        seen.add(memory.id)
        out.append((memory, "pinned", 0.0))
    return out


def _short(query: str, limit: int = 60) -> str:
    query = " ".join(str(query).split())
    return query if len(query) <= limit else query[: limit - 1] + "…"


def flat(text: str, room: int | None = None) -> str:
    """``text`` on one line (whitespace runs made one space); with ``room``, only its first
    ``room + 1`` characters or fewer (whitespace is normalised in a prefix, never the whole text:
    the prefix of a normalised text is the normalised prefix)."""
    if room is None or len(text) <= room:
        return " ".join(text.split())
    take = room + 64
    while True:
        head = " ".join(text[:take].split())
        if len(head) > room or take >= len(text):
            return head[:room + 1]
        take *= 2


def render(memory: Memory, reason: str, content: str | None = None) -> str:
    """One memory as a context line: ``- [ID] type, importance N: content`` (one line; the id
    lets a model touch, update or supersede what it was given)."""
    text = " ".join((memory.content if content is None else content).split())
    label = f"{memory.type or 'memory'}, importance {memory.importance}"
    if reason == "neighbor":
        label += ", related"
    if memory.is_expired():
        label += ", expired"
    return f"- [{memory.id}] {label}: {text}"


def _block(title: str, lines: list[str]) -> str:
    return "\n".join([title, *lines])


def _join(blocks: list[str]) -> str:
    return "\n\n".join(blocks)


def _fit(memory: Memory, reason: str, title: str, blocks: list[str], lines: list[str], cap: int,
         count: Tokenizer, content: str) -> str | None:
    """The longest truncation of ``memory`` (its text on one line: ``content``, or as much of it
    as can fit) that keeps the text within ``cap`` (or None).

    Gallops up from the shortest truncation before bisecting, so a 10 MB memory costs what the
    budget can hold, not a bisection over megabytes (each step renders and counts the text).
    """
    low, high, best = MIN_TRUNCATED_CHARS, len(content) - 1, None

    def fits(chars: int) -> str | None:
        line = render(memory, reason, content[:chars].rstrip() + "…")
        return line if count(_join([*blocks, _block(title, [*lines, line])])) <= cap else None

    probe = low
    while probe < high:
        line = fits(probe)
        if line is None:
            high = probe - 1
            break
        best, low = line, probe + 1
        probe *= 2
    while low <= high:
        mid = (low + high) // 2
        line = fits(mid)
        if line is not None:
            best, low = line, mid + 1
        else:
            high = mid - 1
    return best


def recall_queries(query: str) -> tuple[ParsedQuery, ParsedQuery | None]:
    """(strict, loose) forms of ``query`` for recall. Strict: every content word must match
    (stop words such as "why", "did", "the" dropped; a path such as ``src/app.ts`` is one
    phrase); loose: any of them may (BM25 ranks memories sharing more, and rarer, words first).
    Filters are kept in both. Loose is None when it would be the same search."""
    from .search import parse_query

    parsed = parse_query(query)
    groups = content_groups(parsed)
    if not groups:
        return parsed, None
    strict = replace(parsed, groups=groups)
    return strict, any_word_query(strict)


def _relevant(store: Store, query: str, limit: int, hops: int, usable: Callable[[Memory], bool],
              notes: list[str]) -> list[tuple[Memory, str, float]]:
    """Keyword and meaning hits (hybrid) and their related_to neighbours (newest of each chain), fused by RRF."""
    from .search import search
    from .search.ranking import fused_order

    if not str(query).strip():
        return []
    strict, loose = recall_queries(query)
    # The context renders the memories themselves: no snippets, spans or facets are computed.
    result = search(store, strict, limit=limit, any_word=False, snippets=False, facets=False)
    hits = list(result.hits)
    if loose is not None and len(hits) < limit:  # too few memories hold every word: any word
        # (the memories in hand are not read again: one may hold megabytes)
        seen = {h.memory.id for h in hits}
        hits += search(store, loose, limit=limit, snippets=False, facets=False, exclude=seen).hits[:limit - len(hits)]
    if result.note:
        notes.append(result.note)
    notes.extend(result.warnings)
    found: dict[str, tuple[Memory, str]] = {}
    keyword: list[str] = []
    for hit in hits:
        if usable(hit.memory):
            found[hit.memory.id] = (hit.memory, "keyword")
            keyword.append(hit.memory.id)
    # Hybrid retrieval: memories near the query in meaning, fused with the keyword hits (exact
    # matches first, then weighted RRF: the rule of search's hybrid mode).
    meaning = _by_meaning(store, strict, limit, usable, found, notes)
    exact: list[str] = []
    if meaning:
        from .search.semantic import exact_matches, fuse

        lexical = [h for h in hits if h.memory.id in found]
        keyword = [key for key, _, _ in fuse(lexical, meaning, strict)]
        exact = exact_matches(lexical, strict)
    neighbours: list[str] = []
    if hops > 0:
        for memory_id in keyword:
            try:
                reached = store.neighbors_of(found[memory_id][0], hops)
            except OraError:
                continue
            for memory, _depth in sorted(reached.found, key=lambda pair: pair[1]):
                if memory.is_superseded:
                    memory = store.live_version(memory.id) or memory
                if memory.is_superseded or not usable(memory) or memory.id in neighbours:
                    continue
                found.setdefault(memory.id, (memory, "neighbor"))
                neighbours.append(memory.id)
    fused = fused_order([keyword, neighbours])
    fused = [item for item in fused if item[0] in exact] + [item for item in fused if item[0] not in exact]
    return [(found[key][0], found[key][1], score) for key, score in fused]


def _by_meaning(store: Store, parsed: ParsedQuery, limit: int, usable: Callable[[Memory], bool],
                found: dict[str, tuple[Memory, str]], notes: list[str]) -> list[tuple[str, float]]:
    """(id, score) of the memories nearest ``parsed`` in meaning, best first (the vectors are
    refreshed first, or built when the file is small); empty, with a note, where search by
    meaning is unavailable."""
    from .search.semantic import has_vectors, search_by_meaning

    try:
        if not has_vectors(store) and _more_than(store, BUILD_VECTORS_UP_TO):
            notes.append(f"relevant memories by keyword only: no vectors for these {BUILD_VECTORS_UP_TO:,}+ "
                         "memories yet ('ora-desktop embed' builds them)")
            return []
        result = search_by_meaning(store, parsed, limit, mode="semantic", snippets=False,
                                   known={key: memory for key, (memory, _) in found.items()})
    except OraError as exc:
        notes.append(f"relevant memories by keyword only: {exc}")
        return []
    out: list[tuple[str, float]] = []
    for hit in result.hits:
        if usable(hit.memory):
            found.setdefault(hit.memory.id, (hit.memory, "meaning"))
            out.append((hit.memory.id, hit.score))
    return out


def _more_than(store: Store, count: int) -> bool:
    """Whether the file holds more than ``count`` memories (counting no further than that: a
    full count of a million rows took longer than the rest of a context)."""
    from .rawsql import all_rows

    return all_rows(store, "SELECT count(*) FROM (SELECT 1 FROM memories LIMIT ?)", (count + 1,))[0][0] > count
