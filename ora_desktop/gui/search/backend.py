"""What the search views show, from the core search call (no Qt here; runs on worker threads)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core import Memory, OraHome
from ...core.operations.search import SearchRequest, search_memories


@dataclass(frozen=True)
class EverywhereHit:
    memory: Memory
    path: Path
    where: str
    score: float | None = None


def search_everywhere(home: OraHome, request: SearchRequest, limit: int = 200) -> tuple[list[EverywhereHit], str]:
    """Search every agent of every site; each hit says where it lives. Returns (hits, note).

    Files that cannot be searched are named in the note (the engine reports them as warnings).
    """
    answer = search_memories(home, request.with_(scope="all", limit=limit, facets=False), wait=False)
    hits = [EverywhereHit(h.memory, Path(h.path), h.location, h.score) for h in answer.hits if h.path]
    return hits, "; ".join(answer.notes)
