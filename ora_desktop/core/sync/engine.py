"""One sync of one file with the server: pull, settle conflicts, push, send tombstones.

Order and crash safety:

1. Connect and check (or create, or migrate) the server schema. Bad URL, server down, refused
   login or a foreign table stop here, before anything local is touched.
2. Take the server's (site, agent) lock, so two machines syncing the same agent take turns, and
   measure this machine's clock against the server's (:mod:`.clock`).
3. Pull pages of rows changed since the file's last pull; each page is applied in one local
   ``BEGIN IMMEDIATE`` transaction together with the new "last pull" mark (:mod:`.pull`: content
   settled in server time, usage merged, the synced baseline of each row recorded).
4. Push every memory that differs from its baseline (:mod:`.baseline`; the change feed of a
   store open here (:mod:`.heard`) or the file's log (:mod:`.logged`) narrows the rows
   compared), page by page: one server transaction (COPY + upsert) carrying the content's edit
   time in server time, then one local transaction marking exactly the versions sent as
   ``synced``, recording them as the baseline and moving the mark past our own changes (safe: we
   hold the lock, nobody else wrote in between). Under the lock the server holds exactly our
   baselines, so the merged values are pushed whole.
5. Send tombstones (id and deletion time only) for memories deleted here since the last sync.
6. Pins and typed links (:mod:`.marks`): pull, the later of two changes wins, push.

A sync killed anywhere re-runs to the same end: a page pulled but not marked is pulled again
(writing the same values); a page pushed but not marked comes back on the next pull carrying this
run's push id, and is taken as the baseline (so usage is not counted twice); tombstones are idempotent.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from .. import feedreaders, timestamps
from ..rawsql import all_rows
from ..records import Change, Initiator
from ..store import Store
from . import baseline, clock, heard, local, logged
from .clock import Clock
from .local import Decision, SyncState
from .marks import sync_marks
from .pull import apply_pull, edit_time
from .redact import SyncError
from .server import COLUMNS, Server

PULL_PAGE = 10000
PUSH_PAGE = 20000
_AT = COLUMNS.index("updated_at")


@dataclass(frozen=True)
class SyncResult:
    """What one sync of one file did (or, for a dry run, would do)."""

    path: Path
    server: str  # the URL without its password
    site: str
    agent: str
    pushed: int = 0
    pulled: int = 0
    deleted_here: int = 0  # memories deleted here because they were deleted on the server
    tombstones: int = 0  # deletions sent to the server
    conflicts: tuple[Decision, ...] = ()
    pending_after: int = 0
    dry_run: bool = False
    created_schema: bool = False
    change: Change = Change()
    clock_offset: float | None = None  # seconds this machine's clock is behind the server's
    warnings: tuple[str, ...] = ()
    marks_pulled: int = 0  # pins and typed links made or removed here from the server
    marks_pushed: int = 0  # pins and typed links sent

    @property
    def summary(self) -> str:
        verb = "would push" if self.dry_run else "pushed"
        pull = "to pull" if self.dry_run else "pulled"
        text = (f"{self.site}/{self.agent} with {self.server}: {verb} {self.pushed}, {pull} {self.pulled}, "
                f"deletions sent {self.tombstones}, deleted by the server {self.deleted_here}, "
                f"conflicts {len(self.conflicts)}")
        if self.marks_pulled or self.marks_pushed:
            text += f", pins and typed links pushed {self.marks_pushed}, pulled {self.marks_pulled}"
        text += f", {self.pending_after} still pending" if self.pending_after else ""
        return "; ".join((text, *self.warnings))


def identity(path: Path) -> tuple[str, str]:
    """(site, agent) of a file: its folder's name and its name without ``.site.db``."""
    name = path.name
    agent = name[: -len(".site.db")] if name.endswith(".site.db") else path.stem
    return path.parent.name, agent


def sync_file(path: str | Path, url: str, *, dry_run: bool = False,
              check_cancel: Callable[[], None] | None = None,
              progress: Callable[[int, int], None] | None = None) -> SyncResult:
    """Sync one ``.site.db`` file with the PostgreSQL server at ``url``.

    Raises :class:`SyncError` (one line, password redacted) for a server that cannot be used, and
    the usual ``OraError``\\ s for a file that cannot be; in both cases the file is unchanged.
    """
    path = Path(path).expanduser().resolve()
    site, agent = identity(path)
    tick = check_cancel or (lambda: None)
    # The server first: a bad URL, a server that is down or a refused login stop before the file is opened.
    # (its commits are heard by the window's store of the file as a sync's: feedreaders.claim)
    with Server(url) as server, Store(path, readonly=dry_run) as store, feedreaders.initiated(Initiator.SYNC):
        local.require_columns(store)
        if not server.prepare(create=not dry_run):
            return SyncResult(path, server.name, site, agent, pushed=local.pending_count(store, None), dry_run=True,
                              created_schema=True)
        state = local.state_for(store, server.server_id)
        if dry_run:
            return _preview(store, server, state, site, agent)
        server.lock(site, agent)
        return _run(store, server, state, site, agent, tick, progress)


def _preview(store: Store, server: Server, state: SyncState | None, site: str, agent: str) -> SyncResult:
    last = state.last_pull if state else 0
    mark = state.tomb_mark if state else None
    pending = local.pending_count(store, state.server_id if state else None)
    if state is None and "sync_status" in store.columns:
        pending += all_rows(store, "SELECT count(*) FROM memories WHERE sync_status = 'synced'")[0][0]
    return SyncResult(store.path, server.name, site, agent, pushed=pending,
                      pulled=server.count_changes(site, agent, last),
                      tombstones=len(local.tombstones(store, mark)), dry_run=True)


def _measure(server: Server) -> Clock:
    before = timestamps.now()
    server_now = server.now()
    return clock.measure(server_now, before, timestamps.now())


def _edited(values: tuple, base_fp: str | None, base_updated: str | None, offset: Clock,
            since: datetime | None, server_now: datetime) -> datetime | None:
    """When a pushed row's content was edited, in server time (``None``: only its usage changed)."""
    if base_fp is not None and baseline.fingerprint(values) == base_fp:
        return None
    return edit_time(values[_AT], base_updated, offset, since) or server_now


def _run(store: Store, server: Server, state: SyncState | None, site: str, agent: str,
         tick: Callable[[], None], progress: Callable[[int, int], None] | None) -> SyncResult:
    started = timestamps.now_sql()
    # What the feed heard since the last sync read the file (None: compare every row), then a
    # cursor for the next sync, taken before this one writes or reads anything: a commit not
    # looked at yet is heard by it, so one made meanwhile is pushed by this sync or the next.
    named = heard.changed(store.path, server.server_id)
    cursor = heard.start(store.path, server.server_id)
    # Without a feed (no store of the file open here all along), the file's log since the last
    # sync's place in it: that place first, then what the log wrote since the saved one.
    place = logged.now(store)
    rowids = logged.changed(store, server.server_id) if named is None and state is not None else None
    origin = socket.gethostname()
    offset = _measure(server)
    server_now = server.now()
    since = offset.to_server(state.last_sync) if state and state.last_sync else None
    with store.write():
        local.ensure_tables(store)
        if state is None:
            state = SyncState(server.server_id, server.name, site, agent)
            local.reset_for_new_server(store)
        elif not baseline.has_rows(store, state.server_id):
            baseline.adopt_synced(store, state.server_id)  # a file synced before baselines were kept
        state = replace(state, clock_offset=offset.offset)
        local.save_state(store, state)
        logged.forget(store, state.server_id)  # kept again only once this sync succeeds
    server_id = state.server_id
    added: set[str] = set()
    changed: set[str] = set()
    removed: set[str] = set()
    decisions: list[Decision] = []
    pulled = 0
    # ---- pull
    while True:
        tick()
        page = server.changes(site, agent, state.last_pull, PULL_PAGE)
        if not page:
            break
        with store.write():
            done = apply_pull(store, page, server_id=server_id, mark=state.tomb_mark, stamp=timestamps.now_sql(),
                              clock=offset, since=since, own_push=state.push_id)
            state = replace(state, last_pull=page[-1].change, server=server.name)
            local.save_state(store, state)
        added |= done.added
        changed |= done.changed
        removed |= done.removed
        decisions += done.decisions
        pulled += len(page)
    # ---- push
    pushed = 0
    tick()
    todo = local.outgoing(store, server_id, named, rowids)  # one pass over the file, or over what was named
    # Nothing of this agent on the server yet (and we hold its lock): every page is new rows, so
    # they are COPYed straight in. Ids are unique in the file, so pages never collide.
    fresh = bool(todo) and server.is_empty(site, agent)
    push_id = uuid.uuid4().hex
    for start in range(0, len(todo), PUSH_PAGE):
        tick()
        version = local.data_version(store)
        batch = local.rows_at(store, server_id, todo[start:start + PUSH_PAGE])
        if not batch:
            continue
        if state.push_id != push_id:
            with store.write():  # a run stopped after the push below finds its own rows by this id
                state = replace(state, push_id=push_id)
                local.save_state(store, state)
        values = [row for _, row, _, _ in batch]
        edited = [_edited(row, fp, upd, offset, since, server_now) for _, row, fp, upd in batch]
        top = server.push(site, agent, origin, values, edited, push_id, fresh=fresh)
        with store.write():
            local.mark_pushed(store, [(rowid, row) for rowid, row, _, _ in batch], timestamps.now_sql(),
                              unchanged_since=version)
            baseline.record(store, server_id, values)
            state = replace(state, last_pull=max(state.last_pull, top))
            local.save_state(store, state)
        pushed += len(values)
        changed |= {row[0] for row in values}
        if progress is not None:
            progress(pushed, max(len(todo), pushed))
    # ---- deletions
    tick()
    stones = local.tombstones(store, state.tomb_mark)
    sent, top = server.push_tombstones(site, agent, origin,
                                       [(i, at, offset.to_server(at)) for i, at in stones])
    with store.write():
        local.clear_queued(store, [memory_id for memory_id, _ in stones])
        baseline.forget(store, server_id, [memory_id for memory_id, _ in stones])
        state = replace(state, last_pull=max(state.last_pull, top), tomb_mark=started,
                        last_sync=timestamps.parse(timestamps.now_sql()), pushed=pushed, pulled=pulled,
                        conflicts=len(decisions), push_id=None)
        local.save_state(store, state)
    # ---- pins and typed links
    tick()
    marked = sync_marks(store, server, server_id, site, agent, origin, offset)
    with store.write():
        logged.keep(store, server_id, place)
    heard.keep(store.path, server_id, cursor)
    changed |= marked.ids
    change = Change(frozenset(added), frozenset(changed - added - removed), frozenset(removed), source="sync",
                    initiator=Initiator.SYNC)
    store._emit(change)
    return SyncResult(store.path, server.name, site, agent, pushed=pushed, pulled=pulled,
                      deleted_here=len(removed), tombstones=sent, conflicts=tuple(decisions),
                      pending_after=local.pending_count(store), created_schema=server.created_schema,
                      change=change, clock_offset=offset.offset,
                      warnings=tuple(w for w in (offset.warning(),) if w), marks_pulled=marked.pulled,
                      marks_pushed=marked.pushed)


__all__ = ["SyncError", "SyncResult", "identity", "sync_file"]
