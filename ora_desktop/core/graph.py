"""Supersession chains and ``related_to`` links, cycle-safe and tolerant of dangling ids."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from .errors import Conflict, InvalidValue, NotFound
from .records import Chain, Change, Memory, Neighbors
from .supersession import EDGES_SQL, EdgeCache, edges_kept, file_version

if TYPE_CHECKING:
    from .store import Store

MAX_CHAIN = 10000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


#: The supersession edges of the chain ending at ``?`` (its head): every (older, newer) pair whose
#: newer memory is reachable backwards from the head. A cycle stops, since UNION keeps each id once.
_CHAIN_EDGES = """
WITH RECURSIVE edges(old, new) AS MATERIALIZED (
    SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL AND superseded_by != ''
), back(id) AS (
    SELECT ? UNION SELECT edges.old FROM edges JOIN back ON edges.new = back.id
)
SELECT old, new FROM edges WHERE new IN (SELECT id FROM back)
"""

#: The edges out of the rows an :class:`~.supersession.EdgeIndex` found, as the file holds them
#: now: (older rowid, older id, newer rowid, newer id), the newer one found by its id.
_FOUND_EDGES = """
SELECT o.rowid, o.id, n.rowid, n.id FROM memories AS o CROSS JOIN memories AS n ON n.id = o.superseded_by
WHERE o.rowid IN (SELECT value FROM json_each(?)) AND o.superseded_by != ''
"""


class GraphMixin:
    """Methods of :class:`~ora_desktop.core.store.Store` for chains and links."""

    def supersede(self: Store, old_id: str, new_id: str) -> Change:
        """Mark ``old_id`` as superseded by ``new_id`` (both must exist; no cycles)."""
        if old_id == new_id:
            raise InvalidValue("superseded_by", "a memory cannot supersede itself")
        self._require_writable()
        with self.write():
            found = self.get_many([old_id, new_id])
            for memory_id in (old_id, new_id):
                if memory_id not in found:
                    raise NotFound(f"{self.path}: no memory with id {memory_id!r}")
            successor = found[old_id].superseded_by
            if successor and successor != new_id:
                # Re-pointing would silently drop the successor from the chain.
                chain, _, _ = self._forward(successor)
                live = chain[-1].id if chain else successor
                current = f"{successor!r}" + (f" (and the current memory of its chain is {live!r})"
                                              if live != successor else "")
                raise Conflict(old_id, f"{self.path}: {old_id!r} is already superseded by {current}; supersede "
                                       f"{live!r} instead, or clear what supersedes {old_id!r} first (nothing changed)")
            # Refuse a cycle: walking forward from new must not reach old.
            for member in self._forward(new_id)[0]:
                if member.id == old_id:
                    raise InvalidValue(
                        "superseded_by",
                        f"{new_id!r} is already superseded (via its chain) by {old_id!r}: that would be a cycle",
                    )
            self._update_where("id = ?", [old_id], {"superseded_by": new_id})
        return self._emit(Change(changed=frozenset({old_id}), source="supersede"))

    def _forward(self: Store, memory_id: str) -> tuple[list[Memory], bool, str | None]:
        """Walk ``superseded_by`` from a memory: (members oldest first, cycle?, dangling id)."""
        seen: set[str] = set()
        members: list[Memory] = []
        current: str | None = memory_id
        while current and len(members) < MAX_CHAIN:
            if current in seen:
                return members, True, None
            seen.add(current)
            memory = self.find(current)
            if memory is None:
                return members, False, current
            members.append(memory)
            current = memory.superseded_by
        return members, False, None

    def chain(self: Store, memory_id: str) -> Chain:
        """The whole supersession chain around a memory, newest first.

        The newest memory (the one nothing supersedes) is ``live``. A cycle or a dangling
        ``superseded_by`` is reported in the result, never followed forever.
        """
        start = self.get(memory_id)
        forward, cycle, dangling = self._forward(start.id)
        head = forward[-1]
        older_of: dict[str, list[str]] = {}
        for old, new in self._edges_into(head):
            older_of.setdefault(str(new), []).append(str(old))
        levels: list[list[str]] = []
        seen = {head.id}
        frontier = [head.id]
        while frontier and len(seen) < MAX_CHAIN:
            level = []
            for newer in frontier:
                for old in older_of.get(newer, ()):
                    if old in seen:
                        cycle = True
                        continue
                    seen.add(old)
                    level.append(old)
            levels.append(level)
            frontier = level
        found = self.get_many(i for level in levels for i in level)
        ordered: list[Memory] = [head]
        for level in levels:  # within a level, newest first (as time, then by rowid)
            members = [found[i] for i in level if i in found]
            members.sort(key=lambda m: (m.created_at is not None, m.created_at or _EPOCH, m.rowid or 0), reverse=True)
            ordered.extend(members)
        live = None if (cycle or dangling) else head
        return Chain(tuple(ordered), live, cycle, (dangling,) if dangling else ())

    def _edges_into(self: Store, head: Memory) -> list[tuple]:
        """Every (older, newer) edge of the chain ending at ``head``, found backwards from it.

        The store keeps the file's edges in an :class:`~.supersession.EdgeIndex` for the file's
        current version (one scan per version), so a chain costs a few lookups by key. Inside a
        write transaction (whose changes no version shows), without a version, or when an edge
        the index found is not in the file any more (a write since the version was read), SQLite
        follows the edges itself in one scan of the file, as it did for every chain before.
        """
        edges = None if self.db.in_transaction() else self._indexed_edges_into(head)
        if edges is None:
            edges = self._fetch_all(_CHAIN_EDGES, (head.id,))
        return edges

    def _indexed_edges_into(self: Store, head: Memory) -> list[tuple] | None:
        if self.immutable:  # its connection sees the file as of its last reopen
            self._follow_file()
            version: tuple | None = ("immutable", self._stamp)
        else:
            version = file_version(self.path)
        if version is None:
            return None
        cache: EdgeCache = self.__dict__.setdefault("_edge_cache", EdgeCache())
        reader = self.__dict__.get("_edge_reader")
        if reader is None:  # (before the first scan: every commit after it is heard, ours included)
            reader = self.__dict__.setdefault("_edge_reader", self._feed_log.reader(own=True))
        index = cache.get(version, lambda: self._one(EDGES_SQL), lambda: edges_kept(*reader.looked()))
        row = self._one("SELECT rowid FROM memories WHERE id = ?", (head.id,))  # as of this version
        if row is None:
            return None
        found = index.walk_back(row[0], MAX_CHAIN)
        if not found:
            return []
        rows = self._fetch_all(_FOUND_EDGES, (json.dumps(list(found)),))
        if len(rows) != len(found) or any(found.get(older) != newer for older, _, newer, _ in rows):
            return None
        return [(old, new) for _, old, _, new in rows]

    def live_version(self: Store, memory_id: str) -> Memory | None:
        """The newest memory of ``memory_id``'s chain (itself if not superseded)."""
        forward, cycle, dangling = self._forward(memory_id)
        if not forward:
            return None
        return forward[-1]

    def link(self: Store, a: str, b: str, mutual: bool = True) -> Change:
        """Add ``b`` to ``a``'s ``related_to`` (and ``a`` to ``b``'s when ``mutual``)."""
        return self._relink(a, b, mutual, add=True)

    def unlink(self: Store, a: str, b: str, mutual: bool = True) -> Change:
        """Remove ``b`` from ``a``'s ``related_to`` (and ``a`` from ``b``'s when ``mutual``)."""
        return self._relink(a, b, mutual, add=False)

    def _relink(self: Store, a: str, b: str, mutual: bool, add: bool) -> Change:
        if a == b:
            raise InvalidValue("related_to", "a memory cannot be linked to itself")
        self._require_writable()
        changed: set[str] = set()
        with self.write():
            found = self.get_many([a, b])
            for memory_id in (a, b):
                if memory_id not in found and (add or memory_id == a):
                    raise NotFound(f"{self.path}: no memory with id {memory_id!r}")
            pairs = [(a, b)] + ([(b, a)] if mutual and b in found else [])
            for source, target in pairs:
                memory = found[source]
                if memory.related_malformed:
                    raise InvalidValue(
                        "related_to", f"memory {source!r} holds malformed related_to; fix it before linking"
                    )
                ids = list(memory.related_to)
                if add and target not in ids:
                    ids.append(target)
                elif not add and target in ids:
                    ids.remove(target)
                else:
                    continue
                self._update_where("id = ?", [source], {"related_to": json.dumps(ids) if ids else None})
                changed.add(source)
        return self._emit(Change(changed=frozenset(changed), source="link" if add else "unlink"))

    def neighbors(self: Store, memory_id: str, hops: int = 1) -> Neighbors:
        """Memories reachable over ``related_to`` within ``hops``; dangling ids are reported."""
        return self.neighbors_of(self.get(memory_id), hops)

    def neighbors_of(self: Store, origin: Memory, hops: int = 1) -> Neighbors:
        """:meth:`neighbors` of a memory the caller has read already (it is not read again)."""
        found: list[tuple[Memory, int]] = []
        seen = {origin.id}
        dangling: list[str] = []
        malformed: list[str] = [origin.id] if origin.related_malformed else []
        frontier = list(origin.related_to)
        for depth in range(1, max(0, hops) + 1):
            wanted = [i for i in dict.fromkeys(frontier) if i not in seen]
            if not wanted:
                break
            rows = self.get_many(wanted)
            frontier = []
            for memory_id_ in wanted:
                seen.add(memory_id_)
                memory = rows.get(memory_id_)
                if memory is None:
                    dangling.append(memory_id_)
                    continue
                found.append((memory, depth))
                if memory.related_malformed:
                    malformed.append(memory.id)
                frontier.extend(memory.related_to)
        return Neighbors(origin.id, tuple(found), tuple(dangling), tuple(malformed))
