"""A memory's neighbourhood: ``related_to`` links and supersession chains to N hops, as a graph.

``neighbourhood(store, memory_id, hops)`` walks outward from one memory over five kinds of
edge — its ``related_to`` ids, the memories that list it in theirs (links pointing in), what
supersedes it (``superseded_by``), what it supersedes, and typed links either way
(:mod:`ora_desktop.core.links`: ``supports``, ``contradicts`` …, carried as the edge's
``label``) — and returns nodes (with their
distance) and edges a view can draw. Ids that name no memory become *dangling* nodes; edges on a
supersession cycle, and loops of three or more one-way ``related_to`` links, are marked (two-way
links are ordinary and never make a loop). The walk is bounded (``max_nodes``) and never follows
a cycle forever.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..links import typed_links
from ..rawsql import all_rows
from ..records import Memory
from ..store import Store

MAX_HOPS = 6
MAX_NODES = 300
RELATED = "related"
SUPERSEDED = "superseded_by"
TYPED = "typed"


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A memory in the neighbourhood (``memory`` is ``None`` for a dangling id)."""

    id: str
    depth: int
    memory: Memory | None

    @property
    def dangling(self) -> bool:
        return self.memory is None


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """``source`` → ``target``: ``related`` (source lists target in ``related_to``),
    ``superseded_by`` (source is replaced by target) or ``typed`` (a typed link; ``label`` is its
    type: source ``contradicts`` target)."""

    source: str
    target: str
    kind: str
    cycle: bool = False  # on a supersession cycle, or a related_to loop of three or more
    label: str = ""


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """Nodes (origin first, then by distance) and edges around ``origin``."""

    origin: str
    hops: int
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    cycles: tuple[tuple[str, ...], ...] = ()  # supersession cycles within the neighbourhood
    malformed: tuple[str, ...] = ()  # nodes whose related_to is not a JSON array
    truncated: bool = False  # stopped at max_nodes

    @property
    def dangling(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.dangling)

    def node(self, memory_id: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.id == memory_id), None)


def neighbourhood(store: Store, memory_id: str, hops: int = 2, max_nodes: int = MAX_NODES) -> Neighbourhood:
    """The graph around ``memory_id`` within ``hops`` (1 to 6) edges; raises ``NotFound``."""
    hops = max(1, min(MAX_HOPS, int(hops)))
    origin = store.get(memory_id)
    older_of: dict[str, list[str]] = {}  # new id -> ids it supersedes (one scan, as Store.chain does)
    if "superseded_by" in store.columns:
        for old, new in all_rows(store, "SELECT id, superseded_by FROM memories "
                                        "WHERE superseded_by IS NOT NULL AND superseded_by != ''"):
            older_of.setdefault(str(new), []).append(str(old))
    found: dict[str, GraphNode] = {origin.id: GraphNode(origin.id, 0, origin)}
    edges: dict[tuple[str, str, str], GraphEdge] = {}
    labels: dict[tuple[str, str, str], str] = {}  # a typed edge's key -> its type
    frontier = [origin]
    truncated = False
    for depth in range(1, hops + 1):
        wanted: list[str] = []
        pending: list[tuple[str, str, str]] = []
        pointing_in = _listing(store, [m.id for m in frontier])
        for memory in frontier:
            for target, kind, reverse in [*_out(memory, older_of),
                                          *((i, RELATED, True) for i in pointing_in.get(memory.id, ()))]:
                pending.append((target, kind, memory.id) if reverse else (memory.id, kind, target))
                if target not in found:
                    wanted.append(target)
        for link in typed_links(store, [m.id for m in frontier]):
            kind = f"{TYPED}:{link.type}"
            labels[(link.source, link.target, kind)] = link.type
            pending.append((link.source, kind, link.target))
            wanted += [i for i in (link.source, link.target) if i not in found]
        wanted = list(dict.fromkeys(wanted))
        if len(found) + len(wanted) > max_nodes:
            wanted, truncated = wanted[:max(0, max_nodes - len(found))], True
        rows = store.get_many(wanted)
        frontier = []
        for target in wanted:
            memory = rows.get(target)
            found[target] = GraphNode(target, depth, memory)
            if memory is not None:
                frontier.append(memory)
        for source, kind, target in pending:
            if source in found and target in found:
                edges.setdefault((source, target, kind), GraphEdge(source, target, kind))
        if not frontier or truncated:
            break
    # Edges among nodes at the last depth were not walked: add those between found memories.
    for node in found.values():
        if node.memory is not None and node.depth == hops:
            for target, kind, reverse in _out(node.memory, older_of):
                source, target = (target, node.id) if reverse else (node.id, target)
                if source in found and target in found:
                    edges.setdefault((source, target, kind), GraphEdge(source, target, kind))
    last = [n.id for n in found.values() if n.memory is not None and n.depth == hops]
    for link in typed_links(store, last) if last else ():
        kind = f"{TYPED}:{link.type}"
        if link.source in found and link.target in found:
            labels[(link.source, link.target, kind)] = link.type
            edges.setdefault((link.source, link.target, kind), GraphEdge(link.source, link.target, kind))
    # A supersession cycle is a loop of superseded_by among the memories found (the walk follows
    # chains both ways, so a cycle within reach is found whole, without another scan of the file).
    on_cycle, groups = _loops((e for e in edges.values() if e.kind == SUPERSEDED), min_size=2)
    one_way = (e for e in edges.values()
               if e.kind == RELATED and (e.target, e.source, RELATED) not in edges)
    loops, _ = _loops(one_way, min_size=3)
    cycles = tuple(_around(group, found) for group in groups)
    marked = [GraphEdge(e.source, e.target, TYPED, False, labels[key]) if key in labels else
              GraphEdge(e.source, e.target, e.kind,
                        (e.source, e.target) in (on_cycle if e.kind == SUPERSEDED else loops))
              for key, e in edges.items()]
    nodes = sorted(found.values(), key=lambda n: n.depth)
    malformed = tuple(n.id for n in nodes if n.memory is not None and n.memory.related_malformed)
    return Neighbourhood(origin.id, hops, tuple(nodes), tuple(marked), cycles, malformed, truncated)


def _out(memory: Memory, older_of: dict[str, list[str]]) -> list[tuple[str, str, bool]]:
    """(other id, edge kind, whether the edge points at ``memory``) for each edge of a memory."""
    out = [(i, RELATED, False) for i in memory.related_to if i != memory.id]
    if memory.superseded_by and memory.superseded_by != memory.id:
        out.append((memory.superseded_by, SUPERSEDED, False))
    out += [(old, SUPERSEDED, True) for old in older_of.get(memory.id, ()) if old != memory.id]
    return out


def _listing(store: Store, ids: list[str]) -> dict[str, list[str]]:
    """id -> the memories whose ``related_to`` lists it (links pointing in), for ``ids`` (one scan)."""
    if not ids or "related_to" not in store.columns:
        return {}
    rows = all_rows(store,
        "SELECT j.value, m.id FROM memories AS m, "
        "json_each(CASE WHEN json_valid(m.related_to) THEN m.related_to ELSE '[]' END) AS j "
        "WHERE m.related_to LIKE '[%' AND j.value IN (SELECT value FROM json_each(?)) AND j.value != m.id",
        [json.dumps(ids)])
    out: dict[str, list[str]] = {}
    for target, source in rows:
        out.setdefault(str(target), []).append(str(source))
    return out


def _around(group: list[str], found: dict[str, GraphNode]) -> tuple[str, ...]:
    """The members of a supersession cycle in chain order, from the smallest id."""
    members, current = [], min(group)
    while current not in members:
        members.append(current)
        memory = found[current].memory
        current = memory.superseded_by if memory is not None and memory.superseded_by in group else members[0]
    return tuple(members)


def _loops(edges: Iterable[GraphEdge], min_size: int) -> tuple[set[tuple[str, str]], list[list[str]]]:
    """(edges inside a strongly connected group of ``min_size`` or more memories, those groups).
    For related_to a mutual pair A ↔ B is an ordinary two-way link, not a loop (``min_size=3``).
    Iterative Tarjan: deep graphs do not hit recursion limits."""
    graph: dict[str, list[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge.target)
        graph.setdefault(edge.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    group: dict[str, int] = {}
    sizes: list[int] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            for i in range(child, len(graph[node])):
                nxt = graph[node][i]
                if nxt not in index:
                    work.append((node, i + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                members = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group[top] = len(sizes)
                    members.append(top)
                    if top == node:
                        break
                sizes.append(len(members))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    inside = {(s, t) for s, targets in graph.items() for t in targets
              if group[s] == group[t] and sizes[group[s]] >= min_size}
    members: dict[int, list[str]] = {}
    for node, number in group.items():
        if sizes[number] >= min_size:
            members.setdefault(number, []).append(node)
    return inside, list(members.values())
