"""The MCP tools: each a schema with descriptions around one call into
:mod:`ora_desktop.core.operations.agent_memory` (no rule of its own).

A refused call (bad value, unknown id, read-only file, locked file) becomes an MCP error
result whose text names the problem; the server goes on answering.
"""

# No ``from __future__ import annotations``: the SDK reads these signatures to build schemas.
import contextlib
import shlex
from collections.abc import Iterator
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from ..core import OraError, Store
from ..core.operations import agent_memory as ops
from ..core.schema import MEMORY_TYPES
from . import shapes

READING_TOOLS = ("recall", "search", "context", "important")
WRITING_TOOLS = ("remember", "touch", "supersede", "link", "forget")

TYPES = ", ".join(MEMORY_TYPES)
MemoryId = Annotated[str, Field(description="a memory id, as returned by remember, recall or search")]
IdList = Annotated[list[str], Field(description="memory ids (at least one); every id must exist")]
Limit = Annotated[int, Field(description="at most this many memories (1 to 1000)")]

_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


@contextlib.contextmanager
def refused() -> Iterator[None]:
    """Turn the engine's refusals into tool errors whose text is the engine's own message."""
    try:
        yield
    except OraError as exc:
        raise ToolError(str(exc)) from exc
    except (ValueError, OSError) as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def add_reading_tools(server: MCPServer, store: Store) -> None:
    """recall, search, context, important: they never change the file."""

    @server.tool(annotations=_READ, description=(
        "The agent's recall: memories of one type whose health is above 0.3, most important first, "
        "then newest. Use it to load what you know of a kind (facts, preferences...) at the start of a task."))
    def recall(
        type: Annotated[str, Field(description=f"memory type: one of {TYPES}")],
        limit: Limit = 20,
    ) -> Annotated[CallToolResult, shapes.MemoriesOut]:
        with refused():
            found = ops.recall(store, type, limit)
        return shapes.memories_result(found, f"No {type} memories with health above 0.3.")

    @server.tool(annotations=_READ, description=(
        "Full-text search of this agent's memories, best first (stemmed words, BM25 blended with "
        "importance, health and recency). Query language: words, prefix*, \"exact phrase\", -excluded, "
        "a OR b, and filters such as type:fact importance:>=7 health:<0.3 tag:error=TypeError is:expired. "
        "Anything else is read as plain words; ignored parts are listed as notes."))
    def search(
        query: Annotated[str, Field(description="what to look for, in the query language")],
        limit: Limit = 20,
    ) -> Annotated[CallToolResult, shapes.SearchOut]:
        with refused():
            found = ops.search(store, query, limit)
        return shapes.search_result(found)

    @server.tool(annotations=_READ, description=(
        "Context for your next turn within a token budget (4 characters per token): the important "
        "memories, those relevant to the question (keyword hits and their related memories) and the "
        "most recent ones, each memory once, never more than the budget."))
    def context(
        query: Annotated[str, Field(description="the current message, question or topic")],
        token_budget: Annotated[int, Field(description="at most this many tokens (1 to 1,000,000)")] = 2000,
        hops: Annotated[int, Field(description="related_to hops to follow from keyword hits (0 to 5)")] = 1,
    ) -> Annotated[CallToolResult, shapes.ContextOut]:
        with refused():
            bundle = ops.context(store, query, token_budget, hops=hops)
        return shapes.context_result(bundle)

    @server.tool(annotations=_READ, description=(
        "The important memories: importance 7 or more, or facts with health 0.5 or more, most "
        "important first (what a parent agent keeps from a finished task)."))
    def important(limit: Annotated[int, Field(description="at most this many (1 to 1000)")] = 50,
                  ) -> Annotated[CallToolResult, shapes.MemoriesOut]:
        with refused():
            found = ops.important(store, limit)
        return shapes.memories_result(found, "No important memories yet.")


def add_writing_tools(server: MCPServer, store: Store) -> None:
    """remember, touch, supersede, link, forget: each one transaction, validated before SQL."""

    @server.tool(annotations=_WRITE, description=(
        "Store a new memory. Keep one idea per memory; say how much it matters (importance 1-10) so "
        "recall ranks it. Returns the stored memory with its new id."))
    def remember(
        content: Annotated[str, Field(description="the memory text (not empty, at most 16 MiB)")],
        type: Annotated[str, Field(description=f"one of {TYPES}")] = "fact",
        importance: Annotated[int, Field(description="1 (forgettable) to 10 (critical)")] = 5,
        related: Annotated[list[str] | None, Field(description="ids of related memories")] = None,
        expires_at: Annotated[str | None, Field(description=(
            "when it stops being true: a span from now ('7d', '3h', '2w', '30m'), a date ('2026-12-31') or a "
            "time ('2026-12-31 12:00:00' UTC, or ISO 8601 with an offset); a bare number is refused"))] = None,
    ) -> Annotated[CallToolResult, shapes.RememberOut]:
        with refused():
            done = ops.remember(store, content, type, importance, related=related, expires_at=expires_at)
        return shapes.result(f"Remembered {shapes.memory_line(done.memory, full=False)}",
                             {"memory": shapes.memory_out(done.memory)})

    @server.tool(annotations=_WRITE, description=(
        "Record that you used memories: access count +1, last access now, health +0.1 (at most 1.0). "
        "Used memories stay healthy and keep being recalled."))
    def touch(ids: IdList) -> Annotated[CallToolResult, shapes.MemoriesOut]:
        with refused():
            done = ops.touch(store, ids)
        text = "\n".join(f"Touched [{m.id}]: accessed {m.access_count} times, health {m.health_score:.2f}"
                         for m in done.memories)
        return shapes.result(text, {"count": len(done.memories),
                                    "memories": [shapes.memory_out(m) for m in done.memories]})

    @server.tool(annotations=_WRITE, description=(
        "Mark an outdated memory as replaced by a newer one (remember the new one first). Superseded "
        "memories drop out of search and context; the chain is kept."))
    def supersede(
        old_id: Annotated[str, Field(description="the outdated memory")],
        new_id: Annotated[str, Field(description="the memory that replaces it")],
    ) -> Annotated[CallToolResult, shapes.ChangeOut]:
        with refused():
            done = ops.supersede(store, old_id, new_id)
        return shapes.result(f"[{old_id}] is now superseded by [{new_id}]", shapes.change_out(done.change))

    @server.tool(annotations=_WRITE, description=(
        "Relate two memories (their related_to lists, both ways unless one_way), or remove the link. "
        "Related memories come along in context."))
    def link(
        id: MemoryId,
        other_id: Annotated[str, Field(description="the memory to relate it to")],
        one_way: Annotated[bool, Field(description="only change id's related_to")] = False,
        remove: Annotated[bool, Field(description="remove the link instead of adding it")] = False,
    ) -> Annotated[CallToolResult, shapes.ChangeOut]:
        with refused():
            done = ops.link(store, id, other_id, mutual=not one_way, remove=remove)
        verb = "Unlinked" if remove else "Linked"
        text = (f"{verb} [{id}] and [{other_id}]" if done.change
                else f"Nothing to do: [{id}] and [{other_id}] were already {verb.lower()}")
        return shapes.result(text, shapes.change_out(done.change))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False), description=(
        "Forget memories that are wrong or no longer useful. Recoverable: the rows are kept in the "
        "file's trash and a person can restore them ('ora-desktop undelete'). Every id must exist, "
        "or nothing is forgotten."))
    def forget(
        ids: IdList,
        reason: Annotated[str, Field(description="why (kept with the trash row)")] = "forgotten by the agent (MCP)",
    ) -> Annotated[CallToolResult, shapes.ForgetOut]:
        with refused():
            done = ops.forget(store, ids, reason=reason)
        restore = f"ora-desktop undelete --db {shlex.quote(str(store.path))} {' '.join(map(str, done.trash_ids))}"
        return shapes.forget_result(done, restore)
