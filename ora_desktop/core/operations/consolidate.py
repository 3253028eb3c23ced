"""Consolidation: clusters of old, low-health memories on one topic become one summary memory.

Candidates are live memories created at least ``min_age_days`` ago whose health is below
``max_health``. Their vectors are grouped like near duplicates, at the looser
:data:`TOPIC_THRESHOLD` (one topic, not one fact); groups of at least ``min_size`` become a
cluster. Each cluster gets an **extractive** summary: the sentences of its members nearest the
cluster's centre in meaning (at most :data:`SUMMARY_SENTENCES`, no two saying the same thing),
in the order of their memories' importance. The summary is a new memory (the members' most common
type, their highest importance, ``related_to`` = the members' ids) that supersedes every member.
Nothing is deleted; :func:`undo_consolidation` puts the members back and trashes the summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from .. import timestamps
from ..rawsql import all_rows
from ..records import Change, Memory
from .duplicates import _components, similar_pairs

if TYPE_CHECKING:
    import numpy as np

    from ..embeddings import Provider
    from ..store import Store

TOPIC_THRESHOLD = 0.70
SUMMARY_SENTENCES = 3
SAME_SENTENCE = 0.92
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Cluster:
    """Memories on one topic and the summary that would replace them."""

    ids: tuple[str, ...]
    summary: str
    type: str
    importance: int


@dataclass(frozen=True, slots=True)
class ConsolidateResult:
    """Clusters found; on a real run, the summary memories written (one per cluster)."""

    clusters: tuple[Cluster, ...]
    summaries: tuple[str, ...]
    candidates: int
    change: Change


def find_clusters(store: Store, *, min_age_days: float = 30, max_health: float = 0.5, min_size: int = 3,
                  threshold: float = TOPIC_THRESHOLD, provider: Provider | None = None,
                  cancel: object = None, now: datetime | None = None) -> tuple[list[Cluster], int]:
    """(clusters with their extractive summaries, how many memories were candidates)."""

    from ..search.semantic import ensure_vectors

    cutoff = timestamps.to_sql((now or timestamps.now()) - timedelta(days=float(min_age_days)))
    live = "superseded_by IS NULL AND " if "superseded_by" in store.columns else ""
    ids = [r[0] for r in all_rows(store,
        f"SELECT id FROM memories WHERE {live}health_score < ? AND julianday(created_at) <= julianday(?) "
        "ORDER BY rowid", (float(max_health), cutoff))]
    if len(ids) < min_size:
        return [], len(ids)
    vectors = ensure_vectors(store.path, cancel=cancel, provider=provider)
    held, matrix = vectors.vectors_of(ids)
    groups = [members for members, _ in _components(similar_pairs(matrix, threshold), len(held))
              if len(members) >= min_size]
    records = store.get_many([held[m] for members in groups for m in members])
    clusters = []
    for members in groups:
        memories = sorted((records[held[m]] for m in members if held[m] in records),
                          key=lambda m: (-(m.importance or 0), m.id))
        centre = matrix[members].mean(axis=0)
        summary = extractive_summary(memories, centre, vectors.provider)
        kinds = Counter(m.type or "fact" for m in memories)
        clusters.append(Cluster(tuple(m.id for m in memories), summary, kinds.most_common(1)[0][0],
                                max(m.importance or 0 for m in memories) or 5))
    return clusters, len(ids)


def extractive_summary(memories: Sequence[Memory], centre: np.ndarray, provider: Provider,
                       sentences: int = SUMMARY_SENTENCES) -> str:
    """The members' sentences nearest ``centre`` (no two near-identical), in member order."""
    import numpy as np

    found: list[tuple[int, int, str]] = []  # (member index, sentence index, text)
    for i, memory in enumerate(memories):
        for j, part in enumerate(p.strip() for p in _SENTENCE.split(memory.content)):
            if part:
                found.append((i, j, part))
    if not found:
        return ""
    vectors = provider.embed([text for _, _, text in found])
    scores = vectors @ (centre / (np.linalg.norm(centre) or 1.0))
    chosen: list[int] = []
    for k in np.argsort(-scores, kind="stable"):
        if all(float(vectors[k] @ vectors[c]) < SAME_SENTENCE for c in chosen):
            chosen.append(int(k))
        if len(chosen) == sentences:
            break
    parts = [found[k][2] for k in sorted(chosen, key=lambda k: found[k][:2])]
    return " ".join(p if p[-1] in ".!?" else f"{p}." for p in parts)


def consolidate(store: Store, *, dry_run: bool = True, progress: Callable[[int, int], None] | None = None,
                **options: object) -> ConsolidateResult:
    """Find clusters (see :func:`find_clusters` for ``options``); unless ``dry_run``, write one
    summary per cluster that supersedes its members (one transaction per cluster)."""
    clusters, candidates = find_clusters(store, **options)  # type: ignore[arg-type]
    if dry_run or not clusters:
        return ConsolidateResult(tuple(clusters), (), candidates, Change())
    written: list[str] = []
    for number, cluster in enumerate(clusters):
        with store.write():
            summary = store.add(cluster.summary, cluster.type, cluster.importance, related_to=list(cluster.ids))
            for memory_id in cluster.ids:
                store.supersede(memory_id, summary.id)
        written.append(summary.id)
        if progress:
            progress(number + 1, len(clusters))
    ids = frozenset(i for c in clusters for i in c.ids)
    return ConsolidateResult(tuple(clusters), tuple(written), candidates,
                             Change(added=frozenset(written), changed=ids, source="consolidate"))


def undo_consolidation(store: Store, summary_ids: Sequence[str]) -> Change:
    """Put back the members each summary superseded and move the summaries to the trash."""
    restored: set[str] = set()
    with store.write():
        for summary_id in summary_ids:
            summary = store.get(summary_id)
            for memory_id in summary.related_to:
                member = store.find(memory_id)
                if member is not None and member.superseded_by == summary_id:
                    store.update(memory_id, superseded_by=None)
                    restored.add(memory_id)
        store.delete(list(summary_ids), "undo consolidation")
    return Change(changed=frozenset(restored), removed=frozenset(summary_ids), source="undo consolidation")
