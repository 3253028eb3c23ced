"""Duplicates: finding memories that say the same thing (merging them is :mod:`.merge`).

* **exact** groups: live memories whose text is equal once case and whitespace are normalized
  (:mod:`ora_desktop.core.sametext`);
* **near** groups: live memories whose vectors (:mod:`ora_desktop.core.search.vectors`) have a
  cosine similarity at or above ``threshold`` with the group's leader (its most important
  member; never joined through chains of intermediate memories), and whose similarity stands
  out: at least :data:`MARGIN` above what each of the two has with its :data:`NEIGHBOURS`-th
  nearest memory (its background). Texts written from one small vocabulary are all alike to a
  bag-of-words model; a restatement is alike to its fact far more than to anything else. A
  group's ``similarity`` is the lowest of its members' similarities to the leader. Exact copies
  take part once (their first member).

Up to :data:`EXACT_PAIRS_LIMIT` memories every pair is compared. Above that, pairs are
compared inside cells: ``sqrt(2n)`` centroids drawn (seeded) from the vectors, each memory
compared with the members of its nearest and second-nearest cell — the usual inverted-file
shortcut: a pair split across cells whose centroids are both farther than two others can be
missed, never an unrelated pair reported.

:data:`DEFAULT_THRESHOLD` was chosen with the bundled model on the labelled set of
``tests/benchmarks/meaning_data.py`` (``make bench ARGS=meaning_quality``): 40 facts, their
restatements, 8 hard negatives (shared words, different facts) and 3,000 distractors. At 0.80,
35 of 40 restatements are grouped and no group mixes two facts or a fact with a distractor;
0.70 already groups a fact with a distractor, 0.85 groups only 27 of 40. Restatements score
0.52-0.99 (median 0.90); unrelated labelled pairs at most 0.44, hard negatives at most 0.47.
The threshold alone grouped 2,000 random texts drawn from a 60-word vocabulary into 70 groups
(141 memories); with :data:`MARGIN` 0.15 none is grouped and still 35 of 40 restatements are
(0.10 let 5 random pairs through).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue
from ..rawsql import all_rows
from ..sametext import normalized

if TYPE_CHECKING:
    import numpy as np

    from ..embeddings import Provider
    from ..store import Store

ProgressFn = Callable[[int, int], None]
DEFAULT_THRESHOLD = 0.80
#: How far a near pair's similarity must stand above each member's background (module doc).
MARGIN = 0.15
EXACT_PAIRS_LIMIT = 6000
#: Each memory is compared with its this-many nearest memories (per cell searched): a file of
#: templated memories where thousands are alike must not hold millions of pairs. A leader's group
#: can therefore hold at most NEIGHBOURS + 1 members; the rest of a large family forms further groups.
NEIGHBOURS = 8
BLOCK = 2048


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Memories that say the same thing: ``kind`` ``"exact"`` or ``"near"``; ``ids`` most
    important first; ``similarity`` 1.0 for exact groups, the weakest link for near ones."""

    kind: str
    similarity: float
    ids: tuple[str, ...]
    importance: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "similarity": round(self.similarity, 4), "ids": list(self.ids)}


@dataclass(frozen=True, slots=True)
class DuplicatesResult:
    """Groups, most important first, and what was compared."""

    groups: tuple[DuplicateGroup, ...]
    threshold: float
    scanned: int

    def as_json(self) -> dict[str, Any]:
        return {"groups": [g.as_json() for g in self.groups]}


def find_duplicates(store: Store, threshold: float = DEFAULT_THRESHOLD, *, near: bool = True,
                    provider: Provider | None = None, progress: ProgressFn | None = None,
                    cancel: object = None) -> DuplicatesResult:
    """Exact and near duplicate groups among the live memories of ``store`` (see the module doc).

    ``near=False`` skips the vectors (exact copies only). Vectors are built or refreshed first
    (``progress``/``cancel`` as for :func:`~ora_desktop.core.search.semantic.ensure_vectors`).
    """
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise InvalidValue("threshold", f"{threshold!r} is not a number") from None
    if not 0.0 < threshold <= 1.0:
        raise InvalidValue("threshold", f"{threshold} is not between 0 (excluded) and 1")
    live_sql = "superseded_by IS NULL" if "superseded_by" in store.columns else "1"
    importance_col = "importance" if "importance" in store.columns else "0"
    rows = all_rows(store, f"SELECT id, content, {importance_col} FROM memories WHERE {live_sql} ORDER BY rowid")
    importance = {str(r[0]): (r[2] if isinstance(r[2], int) else 0) for r in rows}
    by_text: dict[str, list[str]] = {}
    for memory_id, content, _ in rows:
        if isinstance(content, str) and content.strip():
            by_text.setdefault(normalized(content), []).append(str(memory_id))
    groups = [DuplicateGroup("exact", 1.0, _ranked(ids, importance), max(importance[i] for i in ids))
              for ids in by_text.values() if len(ids) > 1]
    if near:
        import numpy as np

        from ..search.semantic import ensure_vectors

        vectors = ensure_vectors(store.path, progress, cancel, provider)
        matrix, mids = vectors.snapshot()
        copies = {i for ids in by_text.values() for i in ids[1:]}
        chosen = [row for row, mid in enumerate(mids) if mid is not None and mid in importance and mid not in copies]
        background = np.full(len(chosen), -1.0)
        pairs = [(i, j, sim) for i, j, sim in similar_pairs(matrix[chosen], threshold, background)
                 if sim - max(background[i], background[j]) >= MARGIN]
        ids = [mids[row] for row in chosen]
        rank = sorted(range(len(ids)), key=lambda k: (-importance[ids[k]], k))  # leaders: most important
        for members, weakest in _components(pairs, len(chosen), rank):
            member_ids = [ids[i] for i in members]
            groups.append(DuplicateGroup("near", weakest, _ranked(member_ids, importance),
                                         max(importance[i] for i in member_ids)))
    groups.sort(key=lambda g: (-g.importance, -len(g.ids), -g.similarity, g.ids[0]))
    return DuplicatesResult(tuple(groups), threshold, len(rows))


def _ranked(ids: Sequence[str], importance: dict[str, int]) -> tuple[str, ...]:
    return tuple(sorted(ids, key=lambda i: -importance.get(i, 0)))


def similar_pairs(matrix: np.ndarray, threshold: float,
                  background: np.ndarray | None = None) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j for rows of ``matrix`` (unit float rows, or the vector sidecar's
    int8 codes, decoded a block at a time) at or above ``threshold``. ``background``, if given
    (one float per row), receives each row's similarity to its ``NEIGHBOURS``-th nearest row
    (-1 when it has fewer to compare with)."""
    import numpy as np  # here, not at import: the CLI starts without it

    n = len(matrix)
    if n < 2:
        return []
    if n <= EXACT_PAIRS_LIMIT:
        return _unique_pairs(_pairs_within(matrix, np.arange(n), np.arange(n), threshold, None, background))
    cells = int(math.sqrt(2 * n))
    rng = np.random.default_rng(20240515)
    centroids = _unit(matrix[np.sort(rng.choice(n, cells, replace=False))])
    first = np.empty(n, dtype=np.int64)
    second = np.empty(n, dtype=np.int64)
    for start in range(0, n, 65536):
        scores = _unit(matrix[start:start + 65536]) @ centroids.T
        top = np.argpartition(-scores, 1, axis=1)[:, :2]
        best = np.take_along_axis(scores, top, axis=1)
        swap = best[:, 1] > best[:, 0]
        first[start:start + len(top)] = np.where(swap, top[:, 1], top[:, 0])
        second[start:start + len(top)] = np.where(swap, top[:, 0], top[:, 1])
    order_first = np.argsort(first, kind="stable")
    order_second = np.argsort(second, kind="stable")
    starts_first = np.searchsorted(first[order_first], np.arange(cells + 1))
    starts_second = np.searchsorted(second[order_second], np.arange(cells + 1))
    found: list[np.ndarray] = []
    for cell in range(cells):
        own = order_first[starts_first[cell]:starts_first[cell + 1]]
        if not len(own):
            continue
        near = np.concatenate((own, order_second[starts_second[cell]:starts_second[cell + 1]]))
        _pairs_within(matrix, own, near, threshold, found, background)
    return _unique_pairs(found)


def _pairs_within(matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray, threshold: float,
                  found: list[np.ndarray] | None = None,
                  background: np.ndarray | None = None) -> list[np.ndarray]:
    """Pairs of ``rows`` x ``cols`` (matrix row numbers) at or above ``threshold``, appended to
    ``found`` as ``(k, 3)`` float64 arrays of (i, j, cosine) with i < j; each row's background
    (its ``NEIGHBOURS``-th nearest, itself being the first) into ``background``."""
    import numpy as np

    found = [] if found is None else found
    right = _unit(matrix[cols])
    for start in range(0, len(rows), BLOCK):
        left_rows = rows[start:start + BLOCK]
        scores = _unit(matrix[left_rows]) @ right.T
        k = NEIGHBOURS + 1  # + itself
        if scores.shape[1] > k:  # each memory's nearest few only: memory stays O(n), not O(n^2)
            top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            scores = np.take_along_axis(scores, top, axis=1)
            if background is not None:
                background[left_rows] = np.maximum(background[left_rows], scores.min(axis=1))
        else:
            top = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
        a, b = np.nonzero(scores >= threshold)
        i, j = left_rows[a], cols[top[a, b]]
        keep = i != j
        if keep.any():
            i, j, s = i[keep], j[keep], scores[a[keep], b[keep]]
            found.append(np.column_stack((np.minimum(i, j), np.maximum(i, j), s)))
    return found


def _unit(block: np.ndarray) -> np.ndarray:
    """Rows as unit float32 vectors (int8 codes of the vector sidecar are decoded)."""
    if block.dtype.kind == "f":
        return block
    from ..search.vectors import unit

    return unit(block)


def _unique_pairs(found: list[np.ndarray]) -> list[tuple[int, int, float]]:
    import numpy as np

    if not found:
        return []
    pairs = np.concatenate(found)
    _, first = np.unique(pairs[:, 0] * (2 ** 31) + pairs[:, 1], return_index=True)
    pairs = pairs[np.sort(first)]
    return [(int(i), int(j), float(s)) for i, j, s in pairs]


def _components(pairs: list[tuple[int, int, float]], n: int,
                rank: Sequence[int] | None = None) -> list[tuple[list[int], float]]:
    """Groups around a leader: taking nodes in ``rank`` order (default: index), each node not
    yet grouped gathers its ungrouped neighbours. Every member is then itself similar to the
    leader — no chains of "a is like b, b is like c" joining memories that are not alike.
    Each group comes with its lowest similarity to the leader."""
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for i, j, s in pairs:
        neighbours.setdefault(i, []).append((j, s))
        neighbours.setdefault(j, []).append((i, s))
    taken: set[int] = set()
    groups: list[tuple[list[int], float]] = []
    for leader in (rank if rank is not None else range(n)):
        if leader in taken or leader not in neighbours:
            continue
        members = sorted(((j, s) for j, s in neighbours[leader] if j not in taken), key=lambda m: -m[1])[:NEIGHBOURS]
        if not members:
            continue
        taken.add(leader)
        taken.update(j for j, _ in members)
        groups.append(([leader, *sorted(j for j, _ in members)], min(1.0, min(s for _, s in members))))
    return groups
