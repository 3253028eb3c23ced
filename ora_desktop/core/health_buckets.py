"""The health buckets: the one rule for which tenth of the 0-1 health range a memory falls in.

Health 0.0 up to (not including) 0.1 is bucket ``"0.0-0.1"``, and so on; 1.0 belongs to the last
bucket ``"0.9-1.0"``; values outside 0-1 (a foreign writer's) are clamped into the first or last
bucket; a missing health is ``"unknown"``. Facet counts (SQL), the charts, the search facets and
a ticked bucket's filter all use this module, so they cannot disagree.
"""

from __future__ import annotations

HEALTH_BUCKETS: tuple[str, ...] = ("0.0-0.1", "0.1-0.2", "0.2-0.3", "0.3-0.4", "0.4-0.5",
                                   "0.5-0.6", "0.6-0.7", "0.7-0.8", "0.8-0.9", "0.9-1.0")
UNKNOWN = "unknown"


def bucket_index(health: float | None) -> int | None:
    """The bucket's position in :data:`HEALTH_BUCKETS` (``None`` when health is missing); the same
    comparisons as :func:`bucket_sql` and :func:`bucket_filter` (no ``health * 10`` rounding)."""
    if health is None:
        return None
    value = float(health)
    for i in range(len(HEALTH_BUCKETS) - 1):
        if value < (i + 1) / 10:
            return i
    return len(HEALTH_BUCKETS) - 1


def bucket_label(health: float | None) -> str:
    """The bucket's label, or ``"unknown"`` when health is missing."""
    index = bucket_index(health)
    return UNKNOWN if index is None else HEALTH_BUCKETS[index]


def bucket_sql(column: str) -> str:
    """SQL for :func:`bucket_index` of ``column`` (-1 when it is NULL), for ``GROUP BY``."""
    steps = " ".join(f"WHEN {column} < {(i + 1) / 10:.1f} THEN {i}" for i in range(len(HEALTH_BUCKETS) - 1))
    return f"CASE WHEN {column} IS NULL THEN -1 {steps} ELSE {len(HEALTH_BUCKETS) - 1} END"


def bucket_filter(label: str) -> str:
    """The query-language value selecting one bucket (what a ticked facet types):
    ``<0.1``, ``0.3..<0.4``, ``>=0.9``, or ``none`` for the unknown bucket."""
    if label == UNKNOWN:
        return "none"
    if label not in HEALTH_BUCKETS:
        from .errors import InvalidValue

        raise InvalidValue("health", f"{label!r} is not a health bucket ({', '.join(HEALTH_BUCKETS)})")
    i = HEALTH_BUCKETS.index(label)
    if i == 0:
        return "<0.1"
    if i == len(HEALTH_BUCKETS) - 1:
        return f">={i / 10:.1f}"
    return f"{i / 10:.1f}..<{(i + 1) / 10:.1f}"


def bucket_bounds(label: str) -> tuple[float, float]:
    """(low, high) health of a bucket: low <= health < high, except that the last bucket
    includes 1.0. Raises ``KeyError`` for a label that is not a bucket."""
    if label not in HEALTH_BUCKETS:
        raise KeyError(label)
    low, high = (float(part) for part in label.split("-"))
    return low, high
