"""The MCP tools: each a strict schema with descriptions around one call into
:mod:`ora_desktop.core.operations.agent_memory` (no rule of its own).

Arguments are strict (``"7"`` is not a number, ``true`` is not a limit), bounded and enumerated
in the schema a model reads. A refused call (bad value, unknown id, read-only file, locked
file) becomes an MCP error result whose one sentence names the problem; the server goes on
answering. Every write is journalled as ``mcp:<client name>`` (the client's ``initialize``).
"""

# No ``from __future__ import annotations``: the SDK reads these signatures to build schemas.
import contextlib
import shlex
from collections.abc import Iterator
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from ..core import OraError, Store
from ..core.operations import agent_memory as ops
from ..core.operations.links import links_of
from ..core.operations.memory_history import memory_history
from . import quick, shapes
from .agents import Agents
from .notices import Notices, progress_of

READING_TOOLS = ("recall", "search", "context", "important", "get", "list", "links", "history")
WRITING_TOOLS = ("remember", "update", "touch", "supersede", "link", "forget", "undelete")

MemoryType = Literal["fact", "preference", "context", "task", "conversation"]
SearchMode = Literal["lexical", "semantic", "hybrid"]
SortColumn = Literal["created_at", "updated_at", "importance", "health_score", "last_accessed_at", "access_count",
                     "expires_at"]
IdText = Annotated[str, Field(strict=True, min_length=1, max_length=512)]
MemoryId = Annotated[str, Field(strict=True, min_length=1, max_length=512,
                                description="a memory id, as returned by remember, recall, list or search")]
IdList = Annotated[list[IdText], Field(strict=True, min_length=1, max_length=1000,
                                       description="memory ids (at least one); every id must exist")]
Limit = Annotated[int, Field(strict=True, ge=1, le=ops.MAX_LIMIT, description="at most this many (1 to 1000)")]
Importance = Annotated[int, Field(strict=True, ge=1, le=10, description="1 (forgettable) to 10 (critical)")]
ContentText = Annotated[str, Field(strict=True, min_length=1, max_length=16 * 1024 * 1024)]
Content = Annotated[ContentText, Field(description="the memory text: one idea (not empty)")]
ExpiryText = Annotated[
    Annotated[str, Field(strict=True, max_length=100, json_schema_extra={"format": "date-time"})]
    | Annotated[str, Field(strict=True, max_length=100, json_schema_extra={"format": "date"})]
    | Annotated[str, Field(strict=True, max_length=20, pattern=r"^\s*\d+\s*(min|[mhdwMHDW])\s*$")],
    Field(union_mode="left_to_right")]
EXPIRY = ("a span from now ('7d', '3h', '2w', '30m'), a date ('2026-12-31') or a time ('2026-12-31 12:00:00' "
          "UTC, or ISO 8601 with an offset); a bare number is refused")
Expiry = Annotated[ExpiryText | None, Field(description=f"when it stops being true: {EXPIRY}")]
TagText = Annotated[str, Field(strict=True, min_length=1, max_length=200)]
Tags = Annotated[list[TagText] | None, Field(strict=True, max_length=64, description=(
    "tags such as 'jwt' or 'error=ENOENT' (kind=value), found later with tag:jwt; written as the content's "
    "'Tags:' line"))]
Related = Annotated[list[IdText] | None, Field(strict=True, max_length=1000,
                                               description="ids of related memories (each must exist)")]

AgentArg = Annotated[str | None, Field(strict=True, max_length=200, description=(
    "which agent's memory: required when the server serves a whole site, else leave it out"))]

FIELDS = ("Each memory carries id, content, type, importance, health_score, access_count, last_accessed_at, "
          "created_at, updated_at, expires_at, related_to, superseded_by, sync_status, version and pinned "
          "(pinned memories come first in every context).")

_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
_DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)


@contextlib.contextmanager
def refused() -> Iterator[None]:
    """Turn the engine's refusals into tool errors whose text is the engine's own message."""
    try:
        yield
    except OraError as exc:
        raise ToolError(str(exc)) from exc
    except (ValueError, OSError) as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def actor_of(ctx: Context | None) -> str:
    """``mcp:<client name>`` from the client's ``initialize`` (``mcp:unknown`` without one)."""
    name = None
    with contextlib.suppress(AttributeError, LookupError, ValueError):
        params = ctx.request_context.session.client_params  # type: ignore[union-attr]
        name = params.client_info.name if params is not None else None
    return f"mcp:{name or 'unknown'}"


def add_reading_tools(server: MCPServer, agents: Agents, notices: Notices) -> None:
    """recall, search, context, important, get, list, links, history: they never change the file."""

    @server.tool(annotations=_READ, description=(
        "The agent's recall: current memories of one type (superseded and expired ones left out) whose "
        "health is above 0.3, most important first, then newest. Use it to load what you know of a kind "
        "at the start of a task. " + FIELDS))
    async def recall(
        type: Annotated[MemoryType, Field(description="memory type")],
        limit: Limit = 20,
        agent: AgentArg = None,
    ) -> Annotated[CallToolResult, shapes.MemoriesOut]:
        with refused():
            found, pinned = await quick.read(agents, agent, lambda store: (ops.recall(store, type, limit),
                                                                           ops.pinned(store)))
        return shapes.memories_result(found, f"No current {type} memories with health above 0.3.", pinned)

    @server.tool(annotations=_READ, description=(
        "Search this agent's memories, best first. mode 'lexical' (the default, whatever the file holds): "
        "stemmed words, BM25 blended with importance, health and recency; 'semantic': by meaning (cosine "
        "similarity); 'hybrid': both, fused by rank. Scores run from 0 to 1 in every mode; by meaning, "
        "nothing is returned for a query nothing is about. Query language: words, prefix*, \"exact "
        "phrase\", -excluded, a OR b, and filters such as type:fact importance:>=7 health:<0.3 "
        "tag:error=TypeError is:expired. Anything else is read as plain words; what was ignored or "
        "relaxed is listed as notes. The answer names the mode used."))
    def search(
        query: Annotated[str, Field(strict=True, max_length=10000, description="what to look for")],
        limit: Limit = 20,
        mode: Annotated[SearchMode, Field(description="lexical (default), semantic or hybrid")] = "lexical",
        as_of: Annotated[str | None, Field(strict=True, max_length=100, description=(
            "search the memories as they were then (a date, its end, or a time; UTC unless an offset is "
            "given), as far as the undo journal knows; the notes say what it could not cover"))] = None,
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.SearchOut]:
        with refused():
            store = agents.get(agent)
            found = ops.search(store, query, limit, mode, progress=progress_of(ctx), as_of=as_of)
            pinned = ops.pinned(store)
        return shapes.search_result(found, pinned)

    @server.tool(annotations=_READ, description=(
        "Context for your next turn within a token budget (4 characters per token): the important "
        "memories, those relevant to the question (keyword hits and their related memories) and the "
        "most recent ones, each memory once with its id, never more than the budget."))
    def context(
        query: Annotated[str, Field(strict=True, max_length=10000, description="the current message or topic")],
        token_budget: Annotated[int, Field(strict=True, ge=1, le=ops.MAX_BUDGET,
                                           description="at most this many tokens (1 to 1,000,000)")] = 2000,
        hops: Annotated[int, Field(strict=True, ge=0, le=ops.MAX_HOPS,
                                   description="related_to hops to follow from keyword hits (0 to 5)")] = 1,
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.ContextOut]:
        with refused():
            store = agents.get(agent)
            bundle = ops.context(store, query, token_budget, hops=hops, progress=progress_of(ctx))
        return shapes.context_result(bundle)

    @server.tool(annotations=_READ, description=(
        "The important current memories: importance 7 or more, or facts with health 0.5 or more, most "
        "important first (superseded and expired ones left out)."))
    async def important(
        limit: Annotated[int, Field(strict=True, ge=1, le=ops.MAX_LIMIT,
                                    description="at most this many (1 to 1000)")] = 50,
        agent: AgentArg = None,
    ) -> Annotated[CallToolResult, shapes.MemoriesOut]:
        with refused():
            found, pinned = await quick.read(agents, agent, lambda store: (ops.important(store, limit),
                                                                           ops.pinned(store)))
        return shapes.memories_result(found, "No important memories yet.", pinned)

    @server.tool(name="get", annotations=_READ, description=(
        "One memory by id, with every field (its version is what update takes to refuse a stale edit)."))
    async def get_memory(id: MemoryId, agent: AgentArg = None) -> Annotated[CallToolResult, shapes.MemoryResultOut]:
        with refused():
            found, pinned = await quick.read(agents, agent, lambda store: (ops.memory(store, id), ops.pinned(store)),
                                             keyed=True)
        return shapes.result(shapes.memory_line(found, pinned=pinned), {"memory": shapes.memory_out(found, pinned)})

    @server.tool(name="list", annotations=_READ, description=(
        "List memories page by page, newest first unless sorted otherwise, with filters (as "
        "'ora-desktop list'). Pass the returned cursor to get the next page (same sort). " + FIELDS))
    async def list_memories(
        type: Annotated[list[MemoryType] | None, Field(description="only these types")] = None,
        importance_min: Annotated[int | None, Field(strict=True, ge=1, le=10, description="at least")] = None,
        importance_max: Annotated[int | None, Field(strict=True, ge=1, le=10, description="at most")] = None,
        sort: Annotated[SortColumn, Field(description="column to sort by")] = "created_at",
        ascending: Annotated[bool, Field(strict=True, description="oldest/lowest first")] = False,
        include_superseded: Annotated[bool, Field(strict=True, description="also superseded memories")] = False,
        expired: Annotated[bool | None, Field(strict=True, description=(
            "true: only expired memories; false: none of them; omitted: both"))] = None,
        limit: Annotated[int, Field(strict=True, ge=1, le=ops.MAX_LIMIT, description="page size (1 to 1000)")] = 20,
        cursor: Annotated[str | None, Field(strict=True, max_length=2000,
                                            description="the cursor of the previous page")] = None,
        agent: AgentArg = None,
    ) -> Annotated[CallToolResult, shapes.PageOut]:
        def page_of(store: Store) -> tuple[ops.Page, frozenset[str]]:
            return ops.list_memories(store, types=type or (), importance_min=importance_min,
                                     importance_max=importance_max, sort=sort, descending=not ascending,
                                     superseded=include_superseded, expired=expired, limit=limit,
                                     cursor=cursor), ops.pinned(store)

        with refused():
            page, pinned = await quick.read(agents, agent, page_of)
        return shapes.page_result(page, pinned)


    @server.tool(annotations=_READ, description=(
        "A memory's links, both ways: typed ones (supports, contradicts, derived-from, see-also, or free "
        "text; set with link's type) and related_to (type 'related'); each with its direction (out: this "
        "memory --type--> other; in: other --type--> this memory)."))
    def links(id: MemoryId, agent: AgentArg = None) -> Annotated[CallToolResult, shapes.LinksOut]:
        with refused():
            found = links_of(agents.get(agent), id)
        return shapes.links_result(id, found)

    @server.tool(annotations=_READ, description=(
        "The versions of one memory, newest first, from the file's undo journal: when, who changed it "
        "(mcp:<client>, library, person, or a job), what the step was, and each changed field before and "
        "after. The journal keeps the file's last 50 steps; covers_since says how far back it reaches."))
    def history(id: MemoryId, agent: AgentArg = None) -> Annotated[CallToolResult, shapes.HistoryOut]:
        with refused():
            found = memory_history(agents.get(agent), id)
        return shapes.history_result(found)


def add_writing_tools(server: MCPServer, agents: Agents, notices: Notices) -> None:
    """remember, update, touch, supersede, link, forget, undelete: each one journalled transaction."""

    @server.tool(annotations=_WRITE, description=(
        "Store a new memory. Keep one idea per memory; say how much it matters (importance 1-10) so "
        "recall ranks it. An identical memory is not stored twice: its id comes back with status "
        "'already remembered' (copy=true stores another). A near duplicate is stored and its closest "
        "match named, so you can update or supersede instead."))
    def remember(
        content: Content,
        type: Annotated[MemoryType, Field(description="memory type")] = "fact",
        importance: Importance = 5,
        related: Related = None,
        expires_at: Expiry = None,
        tags: Tags = None,
        copy: Annotated[bool, Field(strict=True, description="store even if an identical memory exists")] = False,
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.RememberOut]:
        with refused():
            store = agents.get(agent)
            done = ops.remember(store, content, type, importance, related=related, expires_at=expires_at,
                                tags=tags, copy=copy, actor=actor_of(ctx))
        notices.log(ctx, "info", f"{done.memory.id}: " + ("already remembered" if done.already else "remembered"))
        return shapes.remember_result(done)

    @server.tool(annotations=_WRITE, description=(
        "Change a memory in place (only the fields given): content, type, importance, expiry, related "
        "ids, tags, or pin (pinned memories come first in every context). Give the version you read "
        "(get, list, recall...) to be refused if it changed since."))
    def update(
        id: MemoryId,
        content: Annotated[ContentText | None, Field(description="new text (one idea)")] = None,
        type: Annotated[MemoryType | None, Field(description="memory type")] = None,
        importance: Annotated[int | None, Field(strict=True, ge=1, le=10,
                                                description="1 (forgettable) to 10 (critical)")] = None,
        expires_at: Annotated[ExpiryText | None, Field(description=(
            f"the new expiry: {EXPIRY}; an empty string clears it"))] = None,
        related: Annotated[list[IdText] | None, Field(strict=True, max_length=1000, description=(
            "the new related ids (each must exist); [] clears them"))] = None,
        tags: Tags = None,
        version: Annotated[str | None, Field(strict=True, max_length=200, description=(
            "the memory's version as you read it: refused if it changed since"))] = None,
        pin: Annotated[bool | None, Field(strict=True, description=(
            "true: pin it (first in every context); false: unpin it"))] = None,
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.MemoryResultOut]:
        with refused():
            store = agents.get(agent)
            done = ops.update(store, id, content=content, type=type, importance=importance, expires_at=expires_at,
                              related=related, tags=tags, version=version, pin=pin, actor=actor_of(ctx))
            pinned = ops.pinned(store)
        notices.log(ctx, "info", f"{done.memory.id}: updated")
        return shapes.result(f"Updated {shapes.memory_line(done.memory, False, pinned)}",
                             {"memory": shapes.memory_out(done.memory, pinned)})

    @server.tool(annotations=_WRITE, description=(
        "Record that you used memories: access count +1, last access now, health +0.1 (at most 1.0). "
        "Used memories stay healthy and keep being recalled."))
    def touch(ids: IdList, agent: AgentArg = None) -> Annotated[CallToolResult, shapes.MemoriesOut]:
        with refused():
            store = agents.get(agent)
            done = ops.touch(store, ids)
            pinned = ops.pinned(store)
        text = "\n".join(f"Touched [{m.id}]: accessed {m.access_count} times, health {m.health_score:.2f}"
                         for m in done.memories)
        return shapes.result(text, {"count": len(done.memories),
                                    "memories": [shapes.memory_out(m, pinned) for m in done.memories]})

    @server.tool(annotations=_WRITE, description=(
        "Mark an outdated memory as replaced by a newer one (remember the new one first). Superseded "
        "memories drop out of recall, search and context; the chain is kept. A memory already "
        "superseded is refused, naming its current successor (supersede that one instead)."))
    def supersede(
        old_id: Annotated[str, Field(strict=True, min_length=1, max_length=512, description="the outdated memory")],
        new_id: Annotated[str, Field(strict=True, min_length=1, max_length=512,
                                     description="the memory that replaces it")],
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.ChangeOut]:
        with refused():
            store = agents.get(agent)
            done = ops.supersede(store, old_id, new_id, actor=actor_of(ctx))
        notices.log(ctx, "info", f"{old_id}: superseded by {new_id}")
        return shapes.result(f"[{old_id}] is now superseded by [{new_id}]", shapes.change_out(done.change))

    @server.tool(annotations=_WRITE, description=(
        "Relate two memories, or remove the link (remove=true). Without type: their related_to lists, both "
        "ways unless one_way (related memories come along in context). With type: the typed link id --type--> "
        "other_id (supports, contradicts, derived-from, see-also, or a few words of your own); 'links' lists them."))
    def link(
        id: MemoryId,
        other_id: Annotated[str, Field(strict=True, min_length=1, max_length=512,
                                       description="the memory to relate it to")],
        type: Annotated[str | None, Field(strict=True, min_length=1, max_length=40, description=(
            "how id relates to other_id: supports, contradicts, derived-from, see-also, or free text"),
            json_schema_extra={"examples": ["supports", "contradicts", "derived-from", "see-also"]})] = None,
        one_way: Annotated[bool, Field(strict=True, description="only change id's related_to (untyped only)")] = False,
        remove: Annotated[bool, Field(strict=True, description="remove the link instead of adding it")] = False,
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.ChangeOut]:
        with refused():
            store = agents.get(agent)
            done = ops.link(store, id, other_id, mutual=not one_way, remove=remove, actor=actor_of(ctx), type=type)
        how = f" ({type})" if type else ""
        notices.log(ctx, "info", f"{id}: {'unlinked from' if remove else 'linked to'} {other_id}{how}")
        verb = "Unlinked" if remove else "Linked"
        text = (f"{verb} [{id}] and [{other_id}]{how}" if done.change
                else f"Nothing to do: [{id}] and [{other_id}] were already {verb.lower()}{how}")
        return shapes.result(text, shapes.change_out(done.change))

    @server.tool(annotations=_DESTROY, description=(
        "Forget memories by id that are wrong or no longer useful. Recoverable: the rows are kept in the "
        "file's trash; 'undelete' brings them back. Every id must exist, or nothing is forgotten."))
    def forget(
        ids: IdList,
        reason: Annotated[str, Field(strict=True, max_length=2000,
                                     description="why (kept with the trash row)")] = "forgotten by the agent (MCP)",
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.ForgetOut]:
        with refused():
            store = agents.get(agent)
            done = ops.forget(store, ids, reason=reason, actor=actor_of(ctx))
        notices.log(ctx, "info", f"forgot {', '.join(m.id for m in done.removed)}")
        restore = f"ora-desktop undelete --db {shlex.quote(str(store.path))} {' '.join(map(str, done.trash_ids))}"
        return shapes.forget_result(done, restore)

    @server.tool(annotations=_WRITE, description=(
        "Bring forgotten memories back by id (the most recent forget of each), as they were. 'note' says "
        "when an undo or restore stopped part-way earlier was taken back first."))
    def undelete(
        ids: IdList,
        agent: AgentArg = None,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, shapes.UndeletedOut]:
        with refused():
            store = agents.get(agent)
            done = ops.undelete(store, ids, actor=actor_of(ctx))
            pinned = ops.pinned(store)
        notices.log(ctx, "info", f"restored {', '.join(m.id for m in done.restored)}")
        return shapes.undelete_result(done, pinned)
