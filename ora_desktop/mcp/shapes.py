"""What the MCP tools return: a JSON shape per tool (published as its output schema) and the
readable text a model reads beside it. Presentation only; every value comes from core."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult, TextContent
from typing_extensions import TypedDict

from ..core import timestamps
from ..core.operations.agent_memory import Forgotten, Found, Page, Remembered, Undeleted
from ..core.operations.links import LinkView
from ..core.operations.memory_history import MemoryHistory
from ..core.records import Change, Memory

if TYPE_CHECKING:
    from ..core.context import ContextBundle

#: The memory fields an agent sees (the seed's columns, timestamps as UTC ``YYYY-MM-DD HH:MM:SS``,
#: and ``version``, the token ``update`` takes to refuse a stale edit).
MEMORY_FIELDS = ("id", "content", "type", "importance", "health_score", "access_count", "last_accessed_at",
                 "created_at", "updated_at", "expires_at", "related_to", "superseded_by", "sync_status", "version")

_TIME_FIELDS = ("last_accessed_at", "created_at", "updated_at", "expires_at")

#: One memory, published as a plain object: the output schemas stay small (a client validates
#: every result against them), and the fields are listed in each tool's description instead.
MemoryOut = dict[str, Any]


class RememberOut(TypedDict):
    memory: MemoryOut
    status: str
    closest: str | None


class MemoryResultOut(TypedDict):
    memory: MemoryOut


class MemoriesOut(TypedDict):
    count: int
    memories: list[MemoryOut]


class UndeletedOut(TypedDict):
    count: int
    memories: list[MemoryOut]
    note: str | None


class PageOut(TypedDict):
    count: int
    memories: list[MemoryOut]
    cursor: str | None


class SearchOut(TypedDict):
    query: str
    mode: str
    count: int
    hits: list[dict[str, Any]]
    notes: list[str]


class ContextOut(TypedDict):
    query: str
    text: str
    tokens: int
    token_budget: int
    sections: list[dict[str, Any]]
    notes: list[str]


class ChangeOut(TypedDict):
    added: list[str]
    changed: list[str]
    removed: list[str]


class LinksOut(TypedDict):
    id: str
    count: int
    links: list[dict[str, Any]]


class HistoryOut(TypedDict):
    id: str
    covers_since: str | None
    changed_outside_the_journal: bool
    steps: list[dict[str, Any]]


class ForgetOut(TypedDict):
    removed: list[str]
    trash_ids: list[int]
    restore_command: str


def result(text: str, structured: dict[str, Any]) -> CallToolResult:
    """A tool result: readable ``text`` for the model and ``structured`` content for programs."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def memory_out(memory: Memory, pinned: AbstractSet[str] = frozenset()) -> MemoryOut:
    """A memory as JSON-ready values (timestamps in SQLite's UTC text, related ids as a list,
    ``pinned``: whether its id is among ``pinned``)."""
    out: dict[str, Any] = {name: getattr(memory, name) for name in MEMORY_FIELDS}  # in this order
    for name in _TIME_FIELDS:
        out[name] = memory.sql_time(name)
    out["related_to"] = list(memory.related_to)
    out["pinned"] = memory.id in pinned
    return out


def memory_line(memory: Memory, full: bool = True, pinned: AbstractSet[str] = frozenset()) -> str:
    """``[id] type, importance N, health H[, pinned]: content`` (first line only unless ``full``)."""
    health = "-" if memory.health_score is None else f"{memory.health_score:.2f}"
    text = memory.content if full else memory.title
    pin = ", pinned" if memory.id in pinned else ""
    return f"[{memory.id}] {memory.type}, importance {memory.importance}, health {health}{pin}: {text}"


def memories_result(memories: Sequence[Memory], empty: str, pinned: AbstractSet[str] = frozenset(),
                    verb: str = "") -> CallToolResult:
    text = "\n".join(verb + memory_line(m, not verb, pinned) for m in memories) if memories else empty
    return result(text, {"count": len(memories), "memories": [memory_out(m, pinned) for m in memories]})


def undelete_result(done: Undeleted, pinned: AbstractSet[str] = frozenset()) -> CallToolResult:
    """The memories restored, after ``Note:`` saying what was taken back first (a step in chunks
    stopped part-way), if anything was."""
    answer = memories_result(done.restored, "Nothing restored.", pinned, verb="Restored ")
    text = answer.content[0].text  # type: ignore[union-attr]
    return result(f"Note: {done.note}\n{text}" if done.note else text,
                  {**(answer.structured_content or {}), "note": done.note})


def search_result(found: Found, pinned: AbstractSet[str] = frozenset()) -> CallToolResult:
    result_ = found.result
    lines = [f"{i}. [{h.memory.id}] {h.memory.type}, importance {h.memory.importance}, score {h.score:.3f}"
             f"{' (expired)' if h.expired else ''}: {' '.join(h.snippet.split())}"
             for i, h in enumerate(result_.hits, 1)]
    text = "\n".join(lines) if lines else "No memories match."
    text += f"\n(mode: {found.mode})"
    if found.notes:
        text += "\n" + "\n".join(f"Note: {n}" for n in found.notes)
    hits = [{"id": h.memory.id, "score": round(h.score, 4), "snippet": h.snippet, "expired": h.expired,
             "superseded": h.superseded, "memory": memory_out(h.memory, pinned)} for h in result_.hits]
    return result(text, {"query": result_.query, "mode": found.mode, "count": len(hits), "hits": hits,
                         "notes": list(found.notes)})


def remember_result(done: Remembered) -> CallToolResult:
    line = memory_line(done.memory, full=False)
    if done.already:
        text = f"Already remembered: {line} (nothing added; copy=true stores another copy)"
        status = "already remembered"
    else:
        text, status = f"Remembered {line}", "remembered"
    closest = done.closest[0] if done.closest else None
    if done.closest:
        text += (f"\nNear duplicate of [{done.closest[0]}] (similarity {done.closest[1]:.2f}): consider update "
                 "or supersede")
    return result(text, {"memory": memory_out(done.memory), "status": status, "closest": closest})


def page_result(page: Page, pinned: AbstractSet[str] = frozenset()) -> CallToolResult:
    text = "\n".join(memory_line(m, False, pinned) for m in page.memories) or "No memories match."
    if page.cursor:
        text += f"\n(more: call list again with cursor {page.cursor!r})"
    return result(text, {"count": len(page.memories), "memories": [memory_out(m, pinned) for m in page.memories],
                         "cursor": page.cursor})


def context_result(bundle: ContextBundle) -> CallToolResult:
    text = bundle.text or "(nothing fits the budget, or nothing to say)"
    text += f"\n\n({bundle.tokens} of {bundle.token_budget} tokens)"
    if bundle.notes:
        text += "\n" + "\n".join(f"Note: {n}" for n in bundle.notes)
    sections = [{"name": s.name, "tokens": s.tokens, "ids": [m.id for m in s.memories]} for s in bundle.sections]
    return result(text, {"query": bundle.query, "text": bundle.text, "tokens": bundle.tokens,
                         "token_budget": bundle.token_budget, "sections": sections, "notes": list(bundle.notes)})


def change_out(change: Change) -> ChangeOut:
    return {"added": sorted(change.added), "changed": sorted(change.changed), "removed": sorted(change.removed)}


def forget_result(done: Forgotten, restore_command: str) -> CallToolResult:
    lines = [f"Forgot {memory_line(m, full=False)}" for m in done.removed]
    lines.append(f"Kept in the trash (trash ids {', '.join(map(str, done.trash_ids))}); "
                 f"a person can bring them back with: {restore_command}")
    return result("\n".join(lines), {"removed": [m.id for m in done.removed], "trash_ids": list(done.trash_ids),
                                     "restore_command": restore_command})


def links_result(memory_id: str, found: list[LinkView]) -> CallToolResult:
    """A memory's links: typed ones and ``related_to`` (type ``related``), each with its direction."""
    lines = [(f"[{memory_id}] {v.type} [{v.other_id}]" if v.direction == "out" else
              f"[{v.other_id}] {v.type} [{memory_id}]") + f": {v.other.title if v.other else '(not in this file)'}"
             for v in found]
    links = [{"other_id": v.other_id, "type": v.type, "direction": v.direction, "missing": v.other is None,
              "title": v.other.title if v.other else None} for v in found]
    return result("\n".join(lines) or f"[{memory_id}] has no links.",
                  {"id": memory_id, "count": len(links), "links": links})


def history_result(history: MemoryHistory) -> CallToolResult:
    """A memory's journalled versions, newest first: when, who, what changed (before -> after)."""
    covers = timestamps.to_sql(history.covers) if history.covers else None
    lines = []
    if history.unexplained:
        lines.append("Changed since by a program that does not journal its writes.")
    for step in history.steps:
        at = timestamps.to_sql(step.at) if step.at else "unknown time"
        changed = "; ".join(f"{column}: {_short(before)} -> {_short(after)}"
                            for column, (before, after) in step.changes.items())
        lines.append(f"{at} UTC by {step.by}: {step.label}" + (f" ({changed})" if changed else ""))
    if not history.steps:
        lines.append(f"No journalled change of [{history.memory_id}]"
                     + (f" since {covers} UTC." if covers else " (nothing journalled in this file)."))
    elif covers:
        lines.append(f"(the journal reaches back to {covers} UTC)")
    steps = [{"entry": step.entry, "at": timestamps.to_sql(step.at) if step.at else None, "by": step.by,
              "what": step.label, "created": step.created,
              "changes": {c: {"before": _json_value(b), "after": _json_value(a)} for c, (b, a) in step.changes.items()}}
             for step in history.steps]
    return result("\n".join(lines), {"id": history.memory_id, "covers_since": covers,
                                     "changed_outside_the_journal": history.unexplained, "steps": steps})


def _json_value(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float) else str(value)


def _short(value: Any, width: int = 60) -> str:
    shown = " ".join(str(value).split()) if value is not None else "(none)"
    return shown if len(shown) <= width else shown[: width - 1] + "…"
