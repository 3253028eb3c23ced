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

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .context import estimate_tokens
from .errors import InvalidValue, OraError

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


MESSAGE_OVERHEAD = 4  # tokens per message for role and separators
PRUNABLE = ("user", "assistant")
class ConversationMemory:
    """Keeps an agent's message history within its context window, archiving what it prunes.

    ``messages`` is the live history (a list of ``{"role", "content"}`` dicts). Usage is
    estimated as the tokens of every message's content plus :data:`MESSAGE_OVERHEAD` each.
    """

    def __init__(self, store: Store, context_window: int, messages: Iterable[Mapping] = (), *,
                 prune_target: float = 0.75, min_keep: int = 6,
                 tokenizer: Callable[[str], int] | None = None, recall_limit: int = 5,
                 recall_budget: int | None = None, session: str | None = None,
                 importance: int = 3) -> None:
        if context_window <= 0:
            raise InvalidValue("context_window", "must be a positive number of tokens")
        if not 0 < prune_target <= 1:
            raise InvalidValue("prune_target", "must be above 0 and at most 1 (a share of the window)")
        if min_keep < 0:
            raise InvalidValue("min_keep", "must not be negative")
        self.store = store
        self.context_window = int(context_window)
        self.prune_target = float(prune_target)
        self.min_keep = int(min_keep)
        self.count = tokenizer or estimate_tokens
        self.recall_limit = recall_limit
        self.recall_budget = recall_budget if recall_budget is not None else max(1, self.context_window // 10)
        self.session = session or uuid.uuid4().hex[:12]
        self.importance = importance
        self.messages: list[Message] = [dict(m) for m in messages]
        self.last_prune: PruneResult = PruneResult()
        self._archived = 0

    # ------------------------------------------------------------------ usage
    def message_tokens(self, message: Mapping) -> int:
        return self.count(str(message.get("content", ""))) + MESSAGE_OVERHEAD

    def tokens(self) -> int:
        """Estimated tokens of the whole history."""
        return sum(self.message_tokens(m) for m in self.messages)

    @property
    def over_window(self) -> bool:
        return self.tokens() > self.context_window

    # ------------------------------------------------------------------ pruning
    def add(self, role: str, content: str) -> PruneResult:
        """Append a message, then prune if the window is exceeded."""
        self.messages.append({"role": role, "content": content})
        return self.prune()

    def prune(self) -> PruneResult:
        """If usage passes the window, archive and remove the oldest user/assistant messages
        until usage is at most ``prune_target`` of the window, keeping the last ``min_keep``.
        A user message goes with the assistant reply that follows it (the seed prunes pairs)."""
        before = self.tokens()
        if before <= self.context_window:
            self.last_prune = PruneResult(tokens_before=before, tokens_after=before)
            return self.last_prune
        target = self.context_window * self.prune_target
        protected = max(0, len(self.messages) - self.min_keep)
        chosen: list[int] = []
        usage = before
        for i, message in enumerate(self.messages[:protected]):
            pairs_reply = (message.get("role") == "assistant" and chosen and chosen[-1] == i - 1
                           and self.messages[i - 1].get("role") == "user")
            if usage <= target and not pairs_reply:  # a pruned question takes its answer along
                break
            if message.get("role") in PRUNABLE:
                chosen.append(i)
                usage -= self.message_tokens(message)
        if not chosen:
            self.last_prune = PruneResult(tokens_before=before, tokens_after=before)
            return self.last_prune
        pruned = [self.messages[i] for i in chosen]
        try:
            ids = self._archive(pruned)
        except (OraError, OSError) as exc:
            self.last_prune = PruneResult(tokens_before=before, tokens_after=before,
                                          error=f"archiving pruned messages failed, kept in history: {exc}")
            return self.last_prune
        drop = set(chosen)
        self.messages = [m for i, m in enumerate(self.messages) if i not in drop]
        self.last_prune = PruneResult(archived=tuple(pruned), memory_ids=tuple(ids), tokens_before=before,
                                      tokens_after=self.tokens())
        return self.last_prune

    def _archive(self, pruned: list[Message]) -> list[str]:
        items, ids = [], []
        for message in pruned:
            self._archived += 1
            memory_id = f"conv-{self.session}-{uuid.uuid4().hex[:8]}-{self._archived}"
            ids.append(memory_id)
            items.append({
                "id": memory_id, "type": "conversation", "importance": self.importance,
                "content": f"{message.get('role', 'user')}: {message.get('content', '')}",
            })
        self.store.add_many(items)
        return ids

    # ------------------------------------------------------------------ recall
    def on_user_message(self, content: str) -> Recall:
        """Add a user message (pruning if needed) and return the archived messages relevant
        to it as an ephemeral block (``recall.block``) that is NOT added to history."""
        self.add("user", content)
        return self.recall(content)

    def recall(self, text: str) -> Recall:
        """Archived conversation memories relevant to ``text``, within ``recall_budget``."""
        from .search import ParsedQuery, search
        from .search.words import keyword_terms

        terms = keyword_terms(text)
        if not terms:
            return Recall()
        query = ParsedQuery(text=text, groups=(terms,), types=("conversation",))
        in_history = {f"{m.get('role')}: {m.get('content')}" for m in self.messages}
        result = search(self.store, query, limit=self.recall_limit * 3)
        header = "Relevant earlier conversation (archived; not part of the history):"
        lines: list[str] = []
        ids: list[str] = []
        used = self.count(header)
        for hit in result.hits:
            content = hit.memory.content
            if content in in_history:
                continue
            line = "- " + " ".join(content.split())
            cost = self.count(line) + 1
            if used + cost > self.recall_budget:
                continue
            lines.append(line)
            ids.append(hit.memory.id)
            used += cost
            if len(lines) >= self.recall_limit:
                break
        if not lines:
            return Recall()
        block = {"role": "system", "content": "\n".join([header, *lines])}
        return Recall(messages=tuple(lines), memory_ids=tuple(ids), block=block)

    def prompt(self, recall: Recall | None = None) -> list[Message]:
        """The messages to send: the history, with ``recall.block`` just before the last user
        message (a copy; the history itself is unchanged)."""
        messages = [dict(m) for m in self.messages]
        if recall and recall.block:
            last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages))
            messages.insert(last_user, dict(recall.block))
        return messages
