"""A Markdown review document of memories: grouped by type, each with importance, health, sync
status, times and links, for reading in a diff or a browser (export only)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any

from ..records import row_to_memory
from ..schema import MEMORY_TYPES


def write(rows: Iterable[tuple[Any, ...]], out: IO[str]) -> int:
    """Write ``(site, agent, *MEMORY_COLUMNS)`` rows as Markdown; returns how many memories."""
    groups: dict[str, list[tuple[str, Any]]] = {}
    count = 0
    for site, agent, *values in rows:
        memory = row_to_memory((None, *values))
        groups.setdefault(memory.type or "untyped", []).append((f"{site}/{agent}", memory))
        count += 1
    out.write(f"# Memories ({count})\n")
    order = [t for t in MEMORY_TYPES if t in groups] + sorted(t for t in groups if t not in MEMORY_TYPES)
    for type_ in order:
        items = sorted(groups[type_], key=lambda p: (-(p[1].importance or 0), p[1].id))
        out.write(f"\n## {type_} ({len(items)})\n")
        for where, m in items:
            out.write(f"\n### {_inline(m.title) or '(empty)'}\n\n")
            health = "-" if m.health_score is None else f"{m.health_score:.2f}"
            facts = [f"`{m.id}`", where, f"importance {m.importance}", f"health {health}",
                     f"sync {m.sync_status}"]
            if m.created_at:
                facts.append(f"created {m.created_at:%Y-%m-%d %H:%M:%S}")
            if m.expires_at:
                facts.append(f"expires {m.expires_at:%Y-%m-%d %H:%M:%S}")
            out.write(" · ".join(facts) + "\n")
            if m.related_to:
                out.write("\nRelated: " + ", ".join(f"`{r}`" for r in m.related_to) + "\n")
            if m.superseded_by:
                out.write(f"\nSuperseded by `{m.superseded_by}`\n")
            out.write("\n" + "\n".join(f"> {line}" if line else ">" for line in m.content.splitlines()) + "\n")
    return count


def _inline(text: str) -> str:
    return text.replace("#", "\\#")[:120]
