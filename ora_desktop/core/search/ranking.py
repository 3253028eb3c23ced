"""How hits are ordered: one blended score, and reciprocal rank fusion for merged lists.

The blended score of a memory for a query is::

    score = w_rel * relevance + w_imp * (importance - 1) / 9 + w_health * health
            + w_rec * 0.5 ** (age_days / half_life_days)

where ``relevance = bm25 / best_bm25`` over the candidates of this query (FTS5's ``bm25`` is
negative, lower is better, so the best match has relevance 1.0 and weaker ones fall towards 0),
``importance`` is the seed's 1-10 scale, ``health`` the seed's 0-1 score and ``age_days`` is
measured from the memory's last update (or creation). Every component lies in [0, 1], so the
weights read as shares of the score.

Defaults and why: relevance 0.60 — a search must first find what was typed, so no other
component can lift a weak match over a clearly better one; importance 0.20 — the agent's own
judgement of what matters (a 10 beats a 1 by 0.2, i.e. about a third of a full relevance
step); recency 0.12 with a 30-day half-life — among similar matches the newer fact is usually
the current one; health 0.08 — memories that are used stay healthy, but health already tracks
recency of access so it gets the smallest share. Only the best ``candidates`` BM25 matches
are blended (2x the limit, at least 100), so an unrelated but important memory never
outranks a match.

Reciprocal rank fusion (Cormack et al., k=60) merges rankings that have no comparable scores
— several files, or keyword hits and graph neighbours: ``rrf(d) = sum(1 / (k + rank_i(d)))``
with ranks starting at 1.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .. import timestamps
from ..records import Memory

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Weights:
    """Tunable weights of the blended score (see the module docstring for the defaults)."""

    relevance: float = 0.60
    importance: float = 0.20
    recency: float = 0.12
    health: float = 0.08
    half_life_days: float = 30.0


DEFAULT_WEIGHTS = Weights()


def relevance(bm25: float | None, best: float | None) -> float:
    """BM25 normalised against the best candidate: 1.0 for the best, towards 0 for weaker."""
    if bm25 is None or best is None or best >= 0:
        return 0.0 if bm25 is None else 1.0
    return max(0.0, min(1.0, bm25 / best))


def recency(memory: Memory, now: datetime | None = None, half_life_days: float = 30.0) -> float:
    """0.5 ** (age in days / half-life), from ``updated_at`` (or ``created_at``); 0 if unknown."""
    stamp = memory.updated_at or memory.created_at
    if stamp is None:
        return 0.0
    age = max(0.0, ((now or timestamps.now()) - stamp).total_seconds() / 86400.0)
    return 0.5 ** (age / max(half_life_days, 1e-9))


def blend(memory: Memory, rel: float, weights: Weights = DEFAULT_WEIGHTS, now: datetime | None = None) -> float:
    """The blended score of one memory given its normalised relevance (0-1)."""
    stamp = memory.updated_at or memory.created_at
    age = None if stamp is None else ((now or timestamps.now()) - stamp).total_seconds() / 86400.0
    return score(rel, memory.importance, memory.health_score, age, weights)


def score(rel: float, importance: object, health: object, age_days: float | None,
          weights: Weights = DEFAULT_WEIGHTS) -> float:
    """The blended score from raw values (``age_days`` None when the memory has no date)."""
    imp = importance if isinstance(importance, (int, float)) else 5
    heal = health if isinstance(health, (int, float)) else 0.0
    fresh = 0.0 if age_days is None else 0.5 ** (max(0.0, age_days) / max(weights.half_life_days, 1e-9))
    return (
        weights.relevance * rel
        + weights.importance * max(0.0, min(1.0, (imp - 1) / 9.0))
        + weights.health * max(0.0, min(1.0, heal))
        + weights.recency * fresh
    )


def rrf(rankings: Iterable[Sequence[Hashable]], k: int = RRF_K) -> dict[Hashable, float]:
    """Reciprocal rank fusion: key -> sum over rankings of 1 / (k + rank), rank from 1."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def fused_order(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K) -> list[tuple[Hashable, float]]:
    """Keys ordered by RRF score (ties keep first-seen order), with their scores."""
    scores = rrf(rankings, k)
    first_seen = {key: i for i, key in enumerate(dict.fromkeys(x for r in rankings for x in r))}
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))
