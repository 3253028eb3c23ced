"""Conversation memory for agents (the context-database seed ``000_…``).

An agent hands :class:`ConversationMemory` its message list and context size. When estimated
usage passes the window, the oldest user/assistant messages are pruned until usage is at or
below ``prune_target`` (75%) of the window, always keeping at least ``min_keep`` (6) of the most
recent messages (system messages are never pruned). Pruned messages are archived as
``conversation`` memories through the store, in one transaction; if the archive fails they
stay in history (nothing is lost) and the failure is reported. On each new user message the
archived messages relevant to it are returned as an ephemeral block that is not added to
history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import Store

Message = dict  # {"role": "user" | "assistant" | "system" | ..., "content": str}


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What a prune did: messages archived (and removed), and an error if archiving failed."""

    archived: tuple[Message, ...] = ()
    memory_ids: tuple[str, ...] = ()
    tokens_before: int = 0
    tokens_after: int = 0
    error: str | None = None

    def __bool__(self) -> bool:
        return bool(self.archived)


@dataclass(frozen=True, slots=True)
class Recall:
    """Archived messages relevant to a new user message, as an ephemeral system message."""

    messages: tuple[str, ...] = ()
    memory_ids: tuple[str, ...] = ()
    block: Message | None = field(default=None)

    def __bool__(self) -> bool:
        return bool(self.messages)


class ConversationMemory:
    """Keeps an agent's message history within its context window, archiving what it prunes."""

    def __init__(self, store: Store, context_window: int, messages: Iterable[Mapping] = (), *,
                 prune_target: float = 0.75, min_keep: int = 6,
                 tokenizer: Callable[[str], int] | None = None, recall_limit: int = 5,
                 recall_budget: int | None = None, session: str | None = None) -> None:
        raise NotImplementedError
