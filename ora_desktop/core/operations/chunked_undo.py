"""Undo, redo and restores from the trash of many memories, in short transactions (:mod:`..chunks`).

An agent waits for our write lock at most its busy timeout, then loses its write. So a step
touching more than :data:`~..chunks.FIRST` memories — undoing or redoing a large delete, bulk edit,
restore or merge, or bringing many memories back from the trash — writes in chunks, and stays
one step:

- each chunk checks the memories it is about to touch against the fingerprints the journal keeps
  (what the file holds *then*: an agent may write between chunks), and a conflict or any failure
  part-way takes back the chunks already written (the file as before; the step still undoable);
- each chunk records what it did in ``ora_desktop_state`` (keys ``undo.pending`` and
  ``undo.pending.<n>``) in its own transaction, so what is written is always known;
- the last chunk puts back the links of the memories restored, moves the journal entry (undo →
  redo list, or journals the restore) and drops those records: listeners hear the whole step
  then, as one ``Change``.

A process killed part-way leaves those records. The next undo, redo or restore of the file (any
process, any face) finds them, takes back what the stopped step wrote, chunk by chunk, says so in
its result, then does what it was asked. The mark names the step's process (host and pid, as an
import's does, :func:`..processes.owner_runs`): while that process runs — whichever OS user runs
it — another undo, redo or restore of the file is refused, and its writes are never taken back;
a mark written on another machine counts as running. The first chunk claims the mark inside its
transaction, so two steps never share it. A step also holds the file's ``undo`` lock
(:func:`..locks.job_lock`, under the user's data folder): the same user's processes wait for
each other there before reading the mark, so a step's records are never dropped under another's.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import filelock

from .. import chunks, engine_tables, feedreaders, locks, processes, timestamps
from ..errors import Conflict, DatabaseLocked, FileProblem, OraError
from ..rawsql import run_sql
from ..records import Change, Initiator
from ..trash_links import forget_batches, linkers, restore_links
from . import journal

if TYPE_CHECKING:
    from ..store import Store

MARK = engine_tables.UNFINISHED_STEP
_STATE = engine_tables.STATE
_PARTS = f"{MARK}.%"  # (LIKE: "." is no wildcard)
#: The steps in chunks running in this process (their marks are not stopped ones).
_here: set[str] = set()


@dataclass(frozen=True)
class Plan:
    """What a step writes, in this order: memories moved to the trash again, trash rows put back,
    previous values written back; each memory checked against ``expect`` (its fingerprint,
    ``None``: absent) in the chunk that touches it."""

    verb: str  # "undo", "redo", "restore": messages say "cannot undo …; nothing undone"
    label: str
    again: Sequence[str] = ()
    reason: str = ""
    trash: Sequence[int] = ()
    rows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    expect: Mapping[str, str | None] = field(default_factory=dict)
    #: A memory present again stays in the trash, reported as skipped (a restore), instead of refusing.
    skip_present: bool = False
    #: Whose step it is: this process's other stores of the file hear each chunk's commit as theirs.
    initiator: Initiator = Initiator.USER


@dataclass
class Progress:
    """What the committed chunks did, kept between them."""

    batch: str | None = None  # the trash batch ``again`` filled
    run: str = ""  # the step's id in its mark
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)
    batches: set[str] = field(default_factory=set)  # the batches restored from (their links go back last)
    #: The values the rows written back had (what redoes them), and the fingerprints the chunks left.
    previous: journal.Ahead = field(default_factory=journal.Ahead)
    after: journal.Ahead = field(default_factory=journal.Ahead)
    #: Memories a chunk changed on the way (one that lost a link): the fingerprint it left them at.
    left: dict[str, str | None] = field(default_factory=dict)
    #: Their values before that, for the columns the step writes back later (what redoes them).
    first: dict[str, dict[str, Any]] = field(default_factory=dict)
    parts: int = 0

    def change(self) -> Change:
        """What the chunks did to memories, as one ``Change`` (kind and initiator: the caller's)."""
        added, removed = frozenset(self.added), frozenset(self.removed)
        return Change(added=added, changed=frozenset(self.changed) - added - removed, removed=removed)


def stopped(store: Store) -> dict[str, Any] | None:
    """The mark of a step in chunks not finished (running, or its process ended), else ``None``."""
    if not store.has_table(_STATE):
        return None
    row = run_sql(store, f"SELECT value FROM {_STATE} WHERE key = ?", [MARK]).fetchone()
    return None if row is None else json.loads(row[0])


def runs(mark: dict[str, Any]) -> bool:
    """Whether the step of ``mark`` still runs: in this process, or in a process of this machine
    that has not ended, or on another machine (which cannot be seen from here)."""
    return mark.get("run") in _here or processes.owner_runs(mark)


def stopped_elsewhere(store: Store) -> dict[str, Any] | None:
    """The mark of a step stopped part-way whose process ended (not one running now), else ``None``."""
    mark = stopped(store)
    return None if mark is None or runs(mark) else mark


def recover(store: Store) -> str | None:
    """Take back what a step stopped part-way wrote (its process ended), if the file has one;
    returns what to tell the person (``None``: nothing stopped). ``DatabaseLocked`` when the
    step is still running in another process."""
    mark = stopped(store)
    if mark is None:
        if store.has_table(_STATE) and _parts(store, 1):
            with _running(store):  # a finished step's records its process had no time to drop
                _drop_parts(store, chunks.Sizer())
        return None
    _refuse_running(store, mark)
    with _running(store):
        mark = stopped(store)
        if mark is None:
            return None
        _refuse_running(store, mark)
        left = _take_back(store, chunks.Sizer())
    note = (f"{store.path}: “{mark['verb']} {mark['label']}” had stopped part-way (its process ended); "
            "what it had written was taken back")
    if left:
        note += f", except memor{'y' if len(left) == 1 else 'ies'} {', '.join(map(repr, left[:5]))} " \
                "another program changed since (left as they are)"
    return note


def apply(store: Store, plan: Plan, finish: Callable[[Progress], Change]) -> Progress:
    """Write ``plan`` in chunks; ``finish(progress)`` runs inside the last one (it journals the
    step) and returns the ``Change`` listeners hear, once, at its commit. On any failure the
    chunks written are taken back and the failure raised, saying so."""
    progress = Progress(batch=uuid.uuid4().hex[:12] if plan.again else None, run=uuid.uuid4().hex[:12])
    with _running(store), _ours(progress.run), feedreaders.initiated(plan.initiator):
        among = linkers(store, plan.again) if plan.again else None  # (read once, before the first chunk)
        linked = [i for i in among[0] if i in plan.expect] if among else []
        sizer = chunks.new_sizer()
        try:
            # (the links of the memories put back return before any previous value is written
            # back, as in one transaction: a value written back is the last word)
            for kind in ("again", "trash", "links", "rows"):
                keys = {"again": plan.again, "trash": plan.trash, "rows": list(plan.rows),
                        "links": ["links"] if progress.batches else []}[kind]
                for part in chunks.slices(keys, sizer):
                    kept: dict[str, Any] = {"among": among, "linked": linked}
                    chunks.timed_write(store, sizer, lambda k=kind, p=part, kept=kept: _chunk(store, plan, progress,
                                                                                            k, p, kept))
                    _keep(progress, kept)  # (encoded here, between two chunks)
            chunks.timed_write(store, sizer, lambda: _last(store, plan, progress, finish))
        except BaseException as exc:
            if not progress.parts:
                raise
            left = _take_back(store, sizer)
            said = "the chunks already written were taken back"
            if left:
                said += f" except memories {', '.join(map(repr, left[:5]))} another program changed since"
            if isinstance(exc, Conflict):
                raise Conflict(exc.memory_id, f"{exc} ({said})") from exc
            if isinstance(exc, FileProblem):
                raise type(exc)(exc.path, f"{exc.problem} ({said}; nothing changed)") from exc
            raise
        with contextlib.suppress(OraError):  # (done: what is left is dropped by the next step)
            _drop_parts(store, sizer)
    return progress


_BUSY = "an undo, redo or restore of many memories is running on this file"


@contextlib.contextmanager
def _running(store: Store) -> Iterator[None]:
    """Hold the file's ``undo`` lock (``DatabaseLocked`` at once when another step holds it)."""
    lock = locks.job_lock("undo", store.path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise DatabaseLocked(store.path, f"{_BUSY}; try again when it ends (nothing changed)") from None
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def _ours(run: str) -> Iterator[None]:
    """The step ``run`` runs in this process meanwhile (its mark is not a stopped one)."""
    _here.add(run)
    try:
        yield
    finally:
        _here.discard(run)


def _refuse_running(store: Store, mark: dict[str, Any]) -> None:
    """``DatabaseLocked`` naming the step of ``mark`` and its process while that step runs."""
    if runs(mark):
        where = f"process {mark.get('pid')} on {mark.get('host', 'this machine')}"
        raise DatabaseLocked(store.path, f"{_BUSY} (“{mark.get('verb')} {mark.get('label')}”, {where}); "
                             "try again when it ends (nothing changed)")


def _check(store: Store, plan: Plan, progress: Progress, ids: Sequence[str]) -> None:
    """Refuse (``Conflict``) when a memory of ``ids`` no longer has the fingerprint ``plan`` expects
    (or, one an earlier chunk changed on the way, the one that chunk left)."""
    expected = {i: progress.left.get(i, plan.expect[i]) for i in ids if i in plan.expect}
    if not expected:
        return
    now = store.versions(expected)
    for memory_id, fingerprint in expected.items():
        if now.get(memory_id) != fingerprint:
            what = "was added again" if fingerprint is None else (
                "was deleted" if now.get(memory_id) is None else "was changed")
            raise Conflict(memory_id, f"{store.path}: cannot {plan.verb} “{plan.label}”: memory {memory_id!r} {what} "
                           f"by another program or a later step since; {_NOTHING[plan.verb]}")


_NOTHING = {"undo": "nothing undone", "redo": "nothing redone", "restore": "nothing restored"}


def _chunk(store: Store, plan: Plan, progress: Progress, kind: str, part: Sequence[Any], kept: dict[str, Any]) -> int:
    """One chunk's writes (inside its transaction) and the record of them."""
    store.ensure_engine_tables()
    if not progress.parts:  # claimed in this transaction: a step another user began meanwhile refuses this one
        other = stopped(store)
        if other is not None:
            _refuse_running(store, other)
            raise DatabaseLocked(store.path, f"“{other.get('verb')} {other.get('label')}” stopped part-way on this "
                                 "file meanwhile; try again: it is taken back first (nothing changed)")
        run_sql(store, f"INSERT OR REPLACE INTO {_STATE} (key, value) VALUES (?, ?)", [MARK, json.dumps(
            {"verb": plan.verb, "label": plan.label, "batch": progress.batch, "run": progress.run,
             **processes.owner(), "at": timestamps.now_sql()})])
    if kind == "again":
        _check(store, plan, progress, [*part, *kept["linked"]])  # (and the memories this chunk may unlink)
        first = [i for i in kept["linked"] if i in plan.rows and i not in progress.first]
        kept["first"] = journal.capture(store, first, {c for i in first for c in plan.rows[i]})
        gone, relinked = store.trash_part(part, plan.reason, progress.batch or "", kept["among"])
        record: dict[str, Any] = {"again": list(part), "batch": progress.batch}
        kept.update(removed=sorted(gone), changed=relinked, after=dict.fromkeys(part),
                    left=store.versions([i for i in relinked if i in plan.expect]))
    elif kind == "trash":
        records = store.put_back_part(part)
        back = {r[0] for r in records}
        missing = [t for t in part if t not in back]
        skipped: list[str] = []
        if missing:
            present = dict(run_sql(store, "SELECT id, memory_id FROM ora_desktop_trash WHERE id IN "
                                          "(SELECT value FROM json_each(?))", [json.dumps(missing)]).fetchall())
            for trash_id in missing:
                if trash_id not in present:
                    raise Conflict("", f"{store.path}: cannot {plan.verb} “{plan.label}”: trash row {trash_id} is "
                                   f"no longer in the trash (purged since); {_NOTHING[plan.verb]}")
                if not plan.skip_present:
                    _check(store, plan, progress, [present[trash_id]])  # (refuses: a memory with that id exists again)
                skipped.append(present[trash_id])
        ids = [r[1] for r in records]
        after = store.versions(ids)
        record = {"restored": [list(r) for r in records], "after": after}
        kept.update(added=ids, skipped=skipped, batches={r[4] for r in records}, after=after)
    elif kind == "links":
        record = _links(store, plan, progress, kept)
        part = ()  # (one chunk whatever its size: the sizer learns nothing from it)
    else:
        _check(store, plan, progress, part)
        values = {i: plan.rows[i] for i in part}
        previous = journal.capture(store, part, {c for v in values.values() for c in v})
        journal.write_back(store, values)
        after = store.versions(part)
        record = {"rows": previous, "after": after}
        kept.update(changed=set(part), after=after,
                    previous={**previous, **{i: progress.first[i] for i in part if i in progress.first}})
    run_sql(store, f"INSERT OR REPLACE INTO {_STATE} (key, value) VALUES (?, ?)",
            [f"{MARK}.{progress.parts + 1:07d}", json.dumps(record)])
    return len(part)


_LINK_COLUMNS = ("related_to", "superseded_by", "updated_at", "sync_status")


def _links(store: Store, plan: Plan, progress: Progress, kept: dict[str, Any]) -> dict[str, Any]:
    """Put back the links the restored memories' delete took from other memories (one chunk,
    ``trash_links.restore_links``); returns its record: those memories' values and the link
    records as they were."""
    batches = json.dumps(sorted(progress.batches))
    links = run_sql(store, "SELECT id, memory_id, related_after, superseded_after FROM ora_desktop_trash_links "
                           "WHERE batch IN (SELECT value FROM json_each(?))", [batches]).fetchall()
    linking = list(dict.fromkeys(r[1] for r in links))
    _check(store, plan, progress, linking)
    before = journal.capture(store, linking, _LINK_COLUMNS)
    first = [i for i in linking if i in plan.rows and i not in progress.first]
    kept["first"] = journal.capture(store, first, {c for i in first for c in plan.rows[i]})
    changed = restore_links(store, progress.batches, progress.added)
    after = store.versions(changed)
    kept.update(changed=changed, left={i: v for i, v in after.items() if i in plan.expect})
    return {"links": {i: before[i] for i in changed if i in before}, "after": after,
            "records": [[r[0], r[2], r[3]] for r in links]}


def _keep(progress: Progress, kept: Mapping[str, Any]) -> None:
    """A chunk committed: count what it did."""
    progress.parts += 1
    progress.added += kept.get("added", ())
    progress.removed += kept.get("removed", ())
    progress.changed |= kept.get("changed", set())
    progress.skipped += kept.get("skipped", ())
    progress.batches |= kept.get("batches", set())
    progress.previous.add(kept.get("previous", {}))
    progress.after.add(kept.get("after", {}))
    progress.left.update(kept.get("left", {}))
    progress.first.update(kept.get("first", {}))


def _last(store: Store, plan: Plan, progress: Progress, finish: Callable[[Progress], Change]) -> int:
    """The last chunk: the memories no chunk touched are checked, the links of the memories put back
    return, the step is journalled and the records dropped."""
    store.ensure_engine_tables()
    _check(store, plan, progress, [i for i in plan.expect if i not in progress.after.ids])
    if progress.batches:
        forget_batches(store)  # (the links records of the batches emptied)
    store.announce(finish(progress))
    # (the records of the chunks, as large as the journal entry, are dropped after this chunk: a
    # record without its mark is a finished step's)
    run_sql(store, f"DELETE FROM {_STATE} WHERE key = ? AND value ->> '$.run' = ?", [MARK, progress.run])
    return 0


def _parts(store: Store, limit: int, order: str = "ASC") -> list[str]:
    """The keys of the chunks' records, first (or last) ``limit`` of them."""
    return [k for (k,) in run_sql(store, f"SELECT key FROM {_STATE} WHERE key LIKE ? ORDER BY key {order} LIMIT ?",
                                  [_PARTS, limit])]


def _drop_parts(store: Store, sizer: chunks.Sizer, each: int = 4) -> None:
    """Drop a finished step's records, ``each`` to a short transaction, until none is left or
    another step (another OS user's) has claimed the mark: the records are then its own."""
    left = [True]

    def drop() -> int:
        keys = [] if stopped(store) is not None else _parts(store, each)
        run_sql(store, f"DELETE FROM {_STATE} WHERE key IN (SELECT value FROM json_each(?))", [json.dumps(keys)])
        left[0] = bool(keys)
        return 0  # (not rows: the sizer keeps its size)

    while left[0] and _parts(store, 1):
        chunks.timed_write(store, sizer, drop)


def _take_back(store: Store, sizer: chunks.Sizer) -> list[str]:
    """Undo the recorded chunks, newest first, each in a short transaction, then drop the mark;
    returns the memories left as they are because another program changed them since."""
    mark = stopped(store) or {}
    keys = _parts(store, -1, "DESC")
    left: list[str] = []
    for key in keys:
        chunks.timed_write(store, sizer, lambda key=key: _take_back_part(store, key, mark.get("batch"), left))

    def unmark() -> int:
        if mark.get("batch"):  # the links the memories moved to the trash again had took
            restore_links(store, [mark["batch"]], ())
            forget_batches(store)
        run_sql(store, f"DELETE FROM {_STATE} WHERE key = ? OR key LIKE ?", [MARK, _PARTS])
        return 1

    chunks.timed_write(store, sizer, unmark)
    return left


def _take_back_part(store: Store, key: str, batch: str | None, left: list[str]) -> int:
    row = run_sql(store, f"SELECT value FROM {_STATE} WHERE key = ?", [key]).fetchone()
    if row is None:
        return 0
    part = json.loads(row[0])
    if "again" in part:  # moved to the trash again: back from the trash, unless added again since
        ids = part["again"]
        present = {i for i, v in store.versions(ids).items() if v is not None}
        left += sorted(present)
        rows = run_sql(store, "SELECT id FROM ora_desktop_trash WHERE batch = ? AND memory_id IN "
                              "(SELECT value FROM json_each(?))", [batch, json.dumps(ids)]).fetchall()
        store.put_back_part([r[0] for r in rows])
        count = len(ids)
    else:
        after = part["after"]
        now = store.versions(after)
        moved = [i for i, fp in after.items() if now.get(i) != fp]
        left += moved
        if "links" in part:
            journal.write_back(store, {i: v for i, v in part["links"].items() if i not in moved})
            store.db.cursor().executemany(
                "UPDATE ora_desktop_trash_links SET related_after = ?, superseded_after = ? WHERE id = ?",
                [r[1:] + r[:1] for r in part["records"]])
        elif "rows" in part:
            journal.write_back(store, {i: v for i, v in part["rows"].items() if i not in moved})
        else:  # put back from the trash: into the trash again, as it was
            store.take_back_part([r for r in part["restored"] if r[1] not in moved])
        count = len(after)
    run_sql(store, f"DELETE FROM {_STATE} WHERE key = ?", [key])
    return count
