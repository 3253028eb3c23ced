"""The columns of the memory table: title, how to sort by it, how to show a value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...core import Memory
from ..formatting import exact, first_line, health_text, relative, sync_label


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    sort: str  # the ``ListQuery.order_by`` column ("dirty" is special-cased by the model)
    display: Callable[[Memory], str]
    tooltip: Callable[[Memory], str] | None = None
    numeric: bool = False
    width: int = 100
    default: bool = True  # shown unless the person hides it
    help: str = ""


def _dirty_tip(m: Memory) -> str:
    return m.sync_state[:1].upper() + m.sync_state[1:]


def _sync_tip(m: Memory) -> str:
    return f"{sync_label(m.sync_status)} ({_dirty_tip(m).lower()}); last synced {exact(m.synced_at) or 'never'}"


def _content_tip(m: Memory) -> str:
    text = m.content if len(m.content) <= 600 else m.content[:600] + "…"
    return f"{text}\n\nid: {m.id}"


def _access_tip(m: Memory) -> str:
    if m.last_accessed_at is None:
        return "Never accessed"
    return exact(m.last_accessed_at)


# Shown by default: the content and, in narrow columns beside it, what a curator scans for —
# importance, health and sync state together (they fit a 1366-pixel screen with the panes open).
# The rest are one right-click away (the header's menu).
COLUMNS: tuple[Column, ...] = (
    Column("content", "Content", "content", lambda m: first_line(m.content), _content_tip, width=330,
           help="The first line of the memory"),
    Column("type", "Type", "type", lambda m: m.type or "", width=84),
    Column("importance", "Imp.", "importance", lambda m: "" if m.importance is None else str(m.importance),
           numeric=True, width=46, help="Importance, 1 to 10"),
    Column("health", "Health", "health_score", lambda m: health_text(m.health_score),
           lambda m: f"Health {health_text(m.health_score)} (recall needs more than 0.30)", width=78,
           help="Health, 0 to 1: recall skips memories at 0.30 or less"),
    Column("access_count", "Accesses", "access_count", lambda m: str(m.access_count), numeric=True, width=72,
           default=False),
    Column("last_accessed", "Last accessed", "last_accessed_at",
           lambda m: relative(m.last_accessed_at) or "never", _access_tip, width=104, default=False),
    Column("created", "Created", "created_at", lambda m: relative(m.created_at), lambda m: exact(m.created_at),
           width=96, default=False),
    Column("expires", "Expires", "expires_at", lambda m: relative(m.expires_at), lambda m: exact(m.expires_at),
           width=90, default=False),
    Column("sync", "Sync", "sync_status", lambda m: sync_label(m.sync_status),
           _sync_tip, width=92, help="Sync status (the tooltip says whether it changed since the last sync)"),
    Column("dirty", "Dirty", "dirty", lambda m: "●" if m.is_dirty else "", _dirty_tip, width=48, default=False,
           help="Changed since the last sync"),
    Column("updated", "Updated", "updated_at", lambda m: relative(m.updated_at), lambda m: exact(m.updated_at),
           width=110, default=False),
    Column("id", "Id", "id", lambda m: m.id, width=200, default=False),
    # Last, so a layout saved before it keeps its columns; shown beside Content (MemoryTable).
    Column("snippet", "Matched", "content", lambda m: "", width=280, default=False,
           help="The searched words in context (empty without a search)"),
)
KEYS = tuple(c.key for c in COLUMNS)


def column_index(key: str) -> int:
    return KEYS.index(key)

