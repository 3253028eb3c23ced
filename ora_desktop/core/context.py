"""Context for an agent's next turn, assembled under a token budget.

``build_context(store, query, token_budget)`` (also ``store.context(...)``) returns three
sections, in this order, each within its share of the budget:

* **important** — the seed's extraction query (importance >= 7, or healthy facts);
* **relevant** — keyword hits for ``query`` plus their ``related_to`` neighbours up to ``hops``
  away, merged by reciprocal rank fusion; a superseded memory is replaced by the newest of its
  chain;
* **recent** — the most recently updated memories.

A memory appears once (in the first section that takes it). Budget a section leaves unused
passes to the next. The rendered ``text`` never exceeds ``token_budget`` tokens as counted by
``tokenizer`` (default: 4 characters per token, rounded up). Memories are touched (access
stats) only when ``touch=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .records import Memory

if TYPE_CHECKING:
    from .store import Store

Tokenizer = Callable[[str], int]
DEFAULT_SHARES = {"important": 0.25, "relevant": 0.55, "recent": 0.20}


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` at 4 characters per token, rounded up (the seed's estimate)."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One memory placed in the context: its rendered line and what it cost."""

    memory: Memory
    text: str
    tokens: int
    reason: str  # important | keyword | neighbor | recent
    score: float = 0.0
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class ContextSection:
    name: str  # important | relevant | recent
    title: str
    items: tuple[ContextItem, ...]
    budget: int
    tokens: int

    @property
    def memories(self) -> list[Memory]:
        return [item.memory for item in self.items]


@dataclass(frozen=True, slots=True)
class ContextBundle:
    """The assembled context: sections, their rendered ``text``, and its token count."""

    query: str
    token_budget: int
    sections: tuple[ContextSection, ...]
    text: str
    tokens: int
    notes: tuple[str, ...] = field(default=())

    @property
    def memories(self) -> list[Memory]:
        return [m for section in self.sections for m in section.memories]

    def section(self, name: str) -> ContextSection | None:
        return next((s for s in self.sections if s.name == name), None)


def build_context(store: Store, query: str, token_budget: int = 2000, *, hops: int = 1,
                  shares: dict[str, float] | None = None, tokenizer: Tokenizer | None = None,
                  touch: bool = False, include_expired: bool = False, relevant_limit: int = 20,
                  recent_limit: int = 20, important_limit: int = 50) -> ContextBundle:
    """Assemble context for ``query`` within ``token_budget`` tokens (see the module doc)."""
    raise NotImplementedError
