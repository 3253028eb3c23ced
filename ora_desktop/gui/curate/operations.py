"""The store work behind each curating command, as plain functions run on a worker thread.

No Qt here: each function takes a ``Store`` and returns what the command needs to undo itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...core import Change, Memory, Store, timestamps

#: The fields an edit can change and that an undo puts back.
RESTORABLE = ("content", "type", "importance", "health_score", "sync_status", "expires_at", "superseded_by",
              "related_to")


def values_of(memory: Memory, fields: Sequence[str]) -> dict[str, Any]:
    """Column values of ``memory`` for ``fields``, in the form ``store.update`` accepts."""
    out: dict[str, Any] = {}
    for name in fields:
        value = getattr(memory, name)
        if name in ("expires_at",):
            raw = dict(memory.unparsed).get(name)
            value = raw if raw is not None else (None if value is None else timestamps.to_sql(value))
        elif name == "related_to":
            value = list(value) if value else None
        out[name] = value
    return out


def edit(store: Store, memory_id: str, fields: Mapping[str, Any], expected_version: str | None) -> Memory:
    """One memory's fields, refused with ``Conflict`` if it changed since ``expected_version``."""
    return store.update(memory_id, expected_version=expected_version, **fields)


def bulk_before(store: Store, ids: Sequence[str], fields: Sequence[str]) -> list[tuple[dict[str, Any], list[str]]]:
    """The current values of ``fields`` for ``ids``, grouped: [(values, ids having them)]."""
    groups: dict[tuple, tuple[dict[str, Any], list[str]]] = {}
    for memory in store.get_many(ids).values():
        values = values_of(memory, [*fields, "sync_status"] if "sync_status" not in fields else fields)
        key = tuple(sorted((k, repr(v)) for k, v in values.items()))
        groups.setdefault(key, (values, []))[1].append(memory.id)
    return list(groups.values())


def bulk_apply(store: Store, groups: Sequence[tuple[Mapping[str, Any], Sequence[str]]]) -> Change:
    """Set each group's values on its ids (one statement per group)."""
    changed: set[str] = set()
    for values, ids in groups:
        changed |= store.update_many(ids, **values).changed
    return Change(changed=frozenset(changed), source="bulk")


def delete(store: Store, ids: Sequence[str], reason: str) -> tuple[tuple[Memory, ...], str | None]:
    """Delete recoverably; returns (removed records, trash batch)."""
    removed = store.delete(list(ids), reason)
    return removed, getattr(store, "last_trash_batch", None)


def restore_ids(store: Store, ids: Sequence[str]) -> Change:
    """Bring ``ids`` back from the trash (the newest copy of each: what the last delete removed)."""
    trash_ids: list[int] = []
    ids = list(ids)
    for start in range(0, len(ids), 30000):
        chunk = ids[start:start + 30000]
        rows = store.execute(
            f"SELECT max(id) FROM ora_desktop_trash WHERE memory_id IN ({','.join('?' * len(chunk))}) "
            "GROUP BY memory_id", chunk)
        trash_ids.extend(r[0] for r in rows)
    change, _skipped = store.restore_deleted(trash_ids)
    return change


def restore(store: Store, trash_ids: Sequence[int]) -> tuple[Change, tuple[str, ...]]:
    return store.restore_deleted(trash_ids)


def add(store: Store, fields: Mapping[str, Any]) -> Memory:
    return store.add(**fields)


def merge(store: Store, first: str, second: str, fields: Mapping[str, Any]) -> tuple[Memory, dict[str, Any]]:
    """A new memory superseding both; returns it and the old ``superseded_by`` values."""
    before = {m.id: m.superseded_by for m in store.get_many([first, second]).values()}
    with store.write():
        merged = store.add(**fields)
        store.supersede(first, merged.id)
        store.supersede(second, merged.id)
    return merged, before


def unmerge(store: Store, merged_id: str, before: Mapping[str, Any]) -> Change:
    """Undo a merge: the two originals back as they were, the merged memory to the trash."""
    with store.write():
        for memory_id, superseded_by in before.items():
            store.update(memory_id, superseded_by=superseded_by)
        store.delete([merged_id], "undo merge")
    return Change(changed=frozenset(before), removed=frozenset({merged_id}), source="unmerge")


def set_superseded(store: Store, memory_id: str, superseded_by: str | None) -> Change:
    if superseded_by:
        return store.supersede(memory_id, superseded_by)
    store.update(memory_id, superseded_by=None)
    return Change(changed=frozenset({memory_id}), source="unsupersede")
