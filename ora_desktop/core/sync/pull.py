"""Applying a page of server rows to the file: content settled by edit time in server time,
usage merged, deletions against edits recorded as conflicts.

For each pulled memory the file compares three versions: its own row, the server's, and what it
last synced (:mod:`.baseline`). Content changed on one side only takes that side. Content changed
on both sides is a conflict: the later edit *in server time* (:mod:`.clock`) wins, the other is
kept in the trash with reason "sync conflict", and the decision and its basis are logged
(:mod:`.conflict_log`). Usage (access count, last access, health) is never a conflict: it merges
(:mod:`.usage`). A deletion against an edit is a conflict too, logged on both machines.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .. import timestamps
from ..rawsql import all_rows, run_sql
from ..writes import IDS_JSON
from . import baseline, conflict_log, usage
from .clock import Clock
from .local import CONFLICT, REMOTE_DELETE, TOMBSTONE_TABLE, Decision, _select
from .server import COLUMNS, ServerRow

if TYPE_CHECKING:
    from ..store import Store

_OLDEST = datetime.min.replace(tzinfo=UTC)
_AT = COLUMNS.index("updated_at")
_USAGE_AT = tuple(COLUMNS.index(c) for c in baseline.USAGE)
_KEPT_NOW = -1  # in a log entry: the losing version is the trash row this pull just kept


@dataclass
class PullOutcome:
    """What applying a page did: memory ids added, changed and removed here, and the conflicts."""

    added: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    decisions: list[Decision] = field(default_factory=list)


@dataclass(frozen=True)
class _Context:
    server_id: str
    clock: Clock
    since: datetime | None
    own_push: str | None


def _fmt(value: datetime | None) -> str:
    return timestamps.to_sql(value) if value else "unknown"


def _with_usage(values: Sequence[Any], merged: Sequence[Any]) -> tuple[Any, ...]:
    out = list(values)
    for i, v in zip(_USAGE_AT, merged, strict=True):
        out[i] = v
    return tuple(out)


def edit_time(updated_at: Any, synced_updated_at: Any, clock: Clock, since: datetime | None) -> datetime | None:
    """When a row changed here, in server time: its ``updated_at`` moved into server time. A
    writer that changed the row without moving ``updated_at`` (it equals the synced one) changed
    it after the last sync (``since``, in server time), so it counts from then."""
    at = clock.to_server(updated_at)
    if updated_at == synced_updated_at and since is not None:
        return max(at, since) if at is not None else since
    return at


class _Judge:
    """Settles an edit (or deletion) here against one on the server, in server time."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx

    def local_time(self, values: Sequence[Any], base: tuple | None) -> datetime:
        """When our edit happened, in server time (see :func:`edit_time`)."""
        return edit_time(values[_AT], base[1] if base else None, self.ctx.clock, self.ctx.since) or _OLDEST

    def local_deletion(self, deleted_at: str) -> datetime:
        return self.ctx.clock.to_server(deleted_at) or _OLDEST

    @staticmethod
    def server_time(row: ServerRow) -> datetime:
        if row.edited_at is not None:
            return row.edited_at if row.edited_at.tzinfo else row.edited_at.replace(tzinfo=UTC)
        return timestamps.parse(row.updated_at) or _OLDEST

    def server_wins(self, row: ServerRow, ours: datetime, values: Sequence[Any] | None) -> tuple[bool, str]:
        """Whether the server's version wins, and the basis in words. A tie goes to the larger
        canonical JSON of the versions, so every machine settles the same pair the same way."""
        theirs = self.server_time(row)
        if theirs != ours:
            wins = theirs > ours
        else:
            wins = json.dumps(row.values, default=str) > json.dumps(values, default=str)
        source = ("" if row.edited_at is not None
                  else " (the server's time is its updated_at: written before edit times were kept)")
        offset = self.ctx.clock.offset
        basis = (f"{'server' if wins else 'this file'} {'newer' if theirs != ours else 'chosen on a tie'} in server "
                 f"time: here {_fmt(ours)} (this clock {offset:+.0f} s from the server's), server "
                 f"{_fmt(theirs)}{source}")
        return wins, basis


def apply_pull(store: Store, page: Sequence[ServerRow], *, server_id: str, mark: str | None, stamp: str,
               clock: Clock, since: datetime | None, own_push: str | None = None) -> PullOutcome:
    """Apply a page of server rows (inside a write transaction); see the module's rules.
    ``since`` is the last sync in server time; ``own_push`` the run id of a push this file made but
    did not mark (a sync stopped mid-push)."""
    ctx = _Context(server_id, clock, since, own_push)
    judge = _Judge(ctx)
    ids = [row.id for row in page]
    local = {r[0]: (r[1], tuple(r[2:])) for r in all_rows(store,
        f"SELECT id, sync_status, {_select(store)} FROM memories WHERE id IN {IDS_JSON}", (json.dumps(ids),))}
    bases = baseline.load(store, server_id, ids)
    own_deletes = _own_deletions(store, [i for i in ids if i not in local], mark)
    out = PullOutcome()
    write: list[tuple[tuple[Any, ...], str]] = []
    to_trash_local: list[str] = []
    server_losers: list[ServerRow] = []
    remove: list[str] = []
    remove_conflict: list[str] = []
    record: list[tuple[Any, ...]] = []
    forget: list[str] = []
    log: list[tuple[str, str, str, str, int | None]] = []
    revived: list[int] = []
    for row in page:
        status, values = local.get(row.id, (None, None))
        if values is None:
            if row.deleted:
                forget.append(row.id)
                continue
            own = own_deletes.get(row.id)
            if own is not None:
                trash_id, deleted_at, unsent = own
                ours = judge.local_deletion(deleted_at)
                wins, basis = judge.server_wins(row, ours, None)
                if unsent and not wins:
                    continue  # deleted here after the server's edit: our tombstone goes up next
                # Our deletion lost to a newer edit elsewhere: the memory comes back, and we say so.
                out.decisions.append(Decision(row.id, "server", deleted_at, row.updated_at, False,
                                              conflict_log.DELETE, basis))
                log.append((row.id, conflict_log.DELETE, "server", "deleted here, edited later elsewhere: " + basis,
                            trash_id))
                if trash_id is not None:
                    revived.append(trash_id)
            write.append((row.values, "synced"))
            record.append(row.values)
            out.added.add(row.id)
            continue
        if status == "local_only":
            continue
        base = bases.get(row.id)
        if own_push is not None and row.push_id == own_push:
            base = (baseline.fingerprint(row.values), row.updated_at, baseline.usage(row.values))
        l_fp = baseline.fingerprint(values)
        l_changed = status in (None, "pending") or base is None or l_fp != base[0]
        if row.deleted:
            forget.append(row.id)
            if not l_changed:
                remove.append(row.id)
                continue
            wins, basis = judge.server_wins(row, judge.local_time(values, base), values)
            if wins:
                remove_conflict.append(row.id)
                out.decisions.append(Decision(row.id, "server", values[_AT], row.updated_at, True,
                                              conflict_log.DELETE, basis))
                log.append((row.id, conflict_log.DELETE, "server", "edited here, deleted later elsewhere: " + basis,
                            _KEPT_NOW))
            else:
                out.decisions.append(Decision(row.id, "this file", values[_AT], row.updated_at, True,
                                              conflict_log.DELETE, basis))
                log.append((row.id, conflict_log.DELETE, "this file",
                            "deleted elsewhere, edited later here (it comes back there): " + basis, None))
            continue
        s_fp = baseline.fingerprint(row.values)
        s_changed = base is None or s_fp != base[0]
        merged = usage.merge(baseline.usage(row.values), baseline.usage(values), base[2] if base else None)
        if l_fp == s_fp or not l_changed:
            new, new_status = _with_usage(row.values, merged), "synced"
        elif not s_changed:
            new, new_status = _with_usage(values, merged), "pending"
        else:
            wins, basis = judge.server_wins(row, judge.local_time(values, base), values)
            if wins:
                to_trash_local.append(row.id)
                new, new_status = _with_usage(row.values, merged), "synced"
                out.decisions.append(Decision(row.id, "server", values[_AT], row.updated_at, False,
                                              conflict_log.EDIT, basis))
            else:
                server_losers.append(row)
                new, new_status = _with_usage(values, merged), "pending"
                out.decisions.append(Decision(row.id, "this file", values[_AT], row.updated_at, False,
                                              conflict_log.EDIT, basis))
            log.append((row.id, conflict_log.EDIT, out.decisions[-1].winner, basis, _KEPT_NOW))
        record.append(row.values)
        if new != values or status != new_status:
            write.append((new, new_status))
            if new != values:
                out.changed.add(row.id)
    _apply(store, ctx, stamp, out, write, to_trash_local, server_losers, remove, remove_conflict, revived)
    baseline.record(store, server_id, record)
    baseline.forget(store, server_id, forget)
    if log:
        kept = _kept_conflicts(store, [m for m, *_, t in log if t == _KEPT_NOW])
        conflict_log.record(store, [(m, k, w, b, kept.get(m) if t == _KEPT_NOW else t) for m, k, w, b, t in log],
                            stamp)
    return out


def _apply(store: Store, ctx: _Context, stamp: str, out: PullOutcome, write: list, to_trash_local: list[str],
           server_losers: list[ServerRow], remove: list[str], remove_conflict: list[str], revived: list[int]) -> None:
    batch = uuid.uuid4().hex[:12]
    if to_trash_local or server_losers or revived:
        store.ensure_engine_tables()
    if to_trash_local:
        pairs = ", ".join(f"'{c}', \"{c}\"" for c in store.columns)
        run_sql(store,
            "INSERT INTO ora_desktop_trash (memory_id, deleted_at, reason, batch, row_json) "
            f"SELECT id, ?, ?, ?, json_object({pairs}) FROM memories WHERE id IN {IDS_JSON}",
            (stamp, CONFLICT, batch, json.dumps(to_trash_local)),
        )
    if server_losers:
        store.db.cursor().executemany(
            "INSERT INTO ora_desktop_trash (memory_id, deleted_at, reason, batch, row_json) VALUES (?, ?, ?, ?, ?)",
            [(r.id, stamp, CONFLICT, batch, _row_json(r, stamp)) for r in server_losers],
        )
    if revived:  # the deletion that lost is no longer a plain deletion: it is kept as the conflict's loser
        run_sql(store, f"UPDATE ora_desktop_trash SET reason = ? WHERE id IN {IDS_JSON}",
                (CONFLICT, json.dumps(revived)))
    if write:
        _upsert(store, write, stamp)
    for ids_, reason in ((remove, REMOTE_DELETE), (remove_conflict, CONFLICT)):
        if ids_:
            store.remove_where_recoverably(f"id IN {IDS_JSON}", [json.dumps(ids_)], reason, return_records=False)
            out.removed |= set(ids_)


def _row_json(row: ServerRow, stamp: str) -> str:
    data = dict(zip(COLUMNS, row.values, strict=True))
    data.update(synced_at=stamp, sync_status="synced")
    return json.dumps(data)


def _upsert(store: Store, rows: Sequence[tuple[tuple[Any, ...], str]], stamp: str) -> None:
    present = [c for c in COLUMNS if c in store.columns]
    at = [COLUMNS.index(c) for c in present]
    names = [*present, "synced_at", "sync_status"]
    sets = ", ".join(f"{c} = excluded.{c}" for c in names if c != "id")
    sql = (f"INSERT INTO memories ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
           f"ON CONFLICT(id) DO UPDATE SET {sets}")
    store.db.cursor().executemany(sql, [[values[i] for i in at] + [stamp, status] for values, status in rows])


def _own_deletions(store: Store, ids: Sequence[str], mark: str | None) -> dict[str, tuple[int | None, str, bool]]:
    """Of ``ids`` (absent here), those this file deleted itself -> (trash id or None for a purge,
    deleted at, whether the deletion is newer than ``mark``: its tombstone not sent yet)."""
    found: dict[str, tuple[int | None, str, bool]] = {}
    if not ids:
        return found
    since = timestamps.parse(mark) if mark else None
    if store.has_table("ora_desktop_trash"):
        for memory_id, trash_id, when in all_rows(store,
            f"SELECT memory_id, max(id), deleted_at FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON} "
            "AND reason NOT IN (?, ?) GROUP BY memory_id", (json.dumps(list(ids)), CONFLICT, REMOTE_DELETE),
        ):
            at = timestamps.parse(when)
            found[memory_id] = (trash_id, when, since is None or (at is not None and at >= since))
    if store.has_table(TOMBSTONE_TABLE):
        for memory_id, when in all_rows(store,
            f"SELECT memory_id, deleted_at FROM {TOMBSTONE_TABLE} WHERE memory_id IN {IDS_JSON}",
            (json.dumps(list(ids)),),
        ):
            found[memory_id] = (found.get(memory_id, (None,))[0], when, True)
    return found


def _kept_conflicts(store: Store, ids: Sequence[str]) -> dict[str, int]:
    """memory id -> the newest "sync conflict" trash row of it: the one this pull just kept."""
    if not ids:
        return {}
    return {m: t for m, t in all_rows(store,
        f"SELECT memory_id, max(id) FROM ora_desktop_trash WHERE reason = ? AND memory_id IN {IDS_JSON} "
        "GROUP BY memory_id", (CONFLICT, json.dumps(list(ids))))}
