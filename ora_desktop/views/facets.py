"""Facet counts that follow an edit: each edited memory leaves its old values and joins its new ones.

Rows repainted in place leave a view's facet counts recountable without a scan of the file:
:func:`shift_facets` moves each edited row from its old values to its new ones, and counts a new
row in and a removed one out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from ..core import timestamps
from ..core.facets import order_group
from ..core.health_buckets import bucket_label
from ..core.records import Memory
from ..core.timefilter import age_bucket


def shift_facets(groups: Mapping[str, Mapping[str, int]], before: Sequence[Memory | None],
                 after: Sequence[Memory | None], now: datetime | None = None) -> dict[str, dict[str, int]] | None:
    """Facet counts as a view shows them (group -> value -> count: ``type``, ``sync``,
    ``importance``, ``health``, ``created``, ``tag:*``) after the counted memories ``before`` were
    edited into ``after`` (the same memories, in the same order, still counted), without counting
    every row again: each edited memory leaves its old value of every group and joins its new one.
    ``None`` in ``before`` is a memory newly counted (added), in ``after`` one no longer counted.

    ``None`` when only counting again can tell: a content edit (the tag groups come from the
    content), other memories, a sync status the counts do not hold yet, or counts that were not
    of these memories.
    """
    if len(before) != len(after):
        return None
    now = now or timestamps.now()
    moves: dict[str, Counter] = {group: Counter() for group in _VALUE_OF}
    for old, new in zip(before, after, strict=True):
        if old is None and new is None:
            return None
        if old is None or new is None:
            if any(group.startswith("tag") for group in groups):
                return None  # tags come from the content: counted, not shifted
        elif old.id != new.id or old.content != new.content:
            return None
        for group, value_of in _VALUE_OF.items():
            was = None if old is None else value_of(old, now)
            is_now = None if new is None else value_of(new, now)
            if was != is_now:
                if was is not None:
                    moves[group][was] -= 1
                if is_now is not None:
                    moves[group][is_now] += 1
    shifted = {group: dict(values) for group, values in groups.items()}
    for group, moved in moves.items():
        if not any(moved.values()):
            continue
        if group not in shifted:
            return None
        values = shifted[group]
        for value, n in moved.items():
            if group == "sync" and n > 0 and value not in values:
                return None  # a fresh count places a new status by its name
            values[value] = values.get(value, 0) + n
            if values[value] < 0:
                return None
        shifted[group] = order_group(group, values)
    return shifted


_VALUE_OF = {
    "type": lambda m, _now: str(m.type),
    "sync": lambda m, _now: str(m.sync_status),
    "importance": lambda m, _now: str(m.importance),
    "health": lambda m, _now: bucket_label(m.health_score),
    "created": lambda m, now: age_bucket(m.created_at, now),
}
