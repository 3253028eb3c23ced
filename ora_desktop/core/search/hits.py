"""A search hit built from a memory, its score and matched spans: one maker for every engine
(full text, the LIKE fallback, meaning and hybrid), so hits look the same whoever found them."""

from __future__ import annotations

from pathlib import Path

from ..home import location
from ..records import Memory
from .highlight import snippet
from .results import Hit, Span


def make_hit(memory: Memory, score: float, spans: list[Span], bm25: float | None, path: Path,
             snippet_chars: int, source: str, where: tuple[str | None, str | None] | None = None) -> Hit:
    text, inside, marked = snippet(memory.content, spans, snippet_chars)
    site, agent = where or location(path)
    return Hit(
        memory=memory, score=score, snippet=marked, snippet_text=text, snippet_spans=inside,
        spans=tuple(spans), bm25=bm25, expired=memory.is_expired(), superseded=memory.is_superseded,
        path=path, site=site, agent=agent, source=source,
    )
