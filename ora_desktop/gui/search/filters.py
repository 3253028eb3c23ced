"""Quick filters and facet choices, turned into a ``ListQuery`` (no Qt here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core import ListQuery
from ...core.timefilter import any_of, bucket_bounds

#: name -> (label, tooltip, ListQuery changes)
QUICK_FILTERS: dict[str, tuple[str, str, dict]] = {
    "expiring": ("Expiring soon", "Expires within the next 7 days", {"expiring_within_days": 7.0}),
    "low_health": ("Low health", "Health at or below 0.3: recall no longer returns it", {"health_max": 0.3}),
    "dirty": ("Dirty", "Changed since the last sync", {"dirty": True}),
    "superseded": ("Superseded", "Replaced by a newer memory", {"superseded": "only"}),
    "at_risk": ("At risk", "Important (7 or more) but decaying (health below 0.5)",
                {"importance_min": 7, "health_max": 0.5}),
}


@dataclass
class FilterState:
    """What the person picked: quick filters and facet values (tags go into the search text)."""

    quick: set[str] = field(default_factory=set)
    facets: dict[str, set[str]] = field(default_factory=dict)

    def clear(self) -> None:
        self.quick.clear()
        self.facets.clear()

    def toggle_facet(self, group: str, value: str, on: bool) -> None:
        values = self.facets.setdefault(group, set())
        if on:
            values.add(value)
        else:
            values.discard(value)
        if not values:
            del self.facets[group]

    def tag_terms(self) -> list[str]:
        """``tag:kind=value`` words for the chosen tag facets."""
        out = []
        for group, values in sorted(self.facets.items()):
            if group.startswith("tag:"):
                kind = group[4:]
                out.extend(f'tag:{kind}={_quote(v)}' for v in sorted(values))
        return out

    def query(self, base: ListQuery) -> ListQuery:
        """``base`` narrowed by the quick filters and the (non-tag) facets."""
        query = base
        for name in sorted(self.quick):
            query = query.with_(**QUICK_FILTERS[name][2])
        extra = list(query.extra_where)
        for group, values in sorted(self.facets.items()):
            chosen = sorted(values)
            if group == "type":
                query = query.with_(types=tuple(chosen))
            elif group == "sync":
                query = query.with_(sync_statuses=tuple(chosen))
            elif group == "importance":
                numbers = tuple(int(v) for v in chosen if v.lstrip("-").isdigit())
                extra.append((f"importance IN ({','.join('?' * len(numbers))})", numbers))
            elif group == "health":
                clauses, params = [], []
                for bucket in chosen:
                    if bucket == "unknown":
                        clauses.append("health_score IS NULL")
                        continue
                    low, high = (float(x) for x in bucket.split("-"))
                    clauses.append("(health_score >= ? AND health_score < ?)" if high < 1.0
                                   else "(health_score >= ? AND health_score <= ?)")
                    params.extend((low, high))
                extra.append((" OR ".join(clauses), tuple(params)))
            elif group == "created":
                extra.append(any_of([bucket_bounds(label) for label in chosen]))
        return query.with_(extra_where=tuple(extra))


def _quote(value: str) -> str:
    return f'"{value}"' if any(c.isspace() for c in value) else value
