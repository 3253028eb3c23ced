"""Health decay: the seed's daily job made idempotent and catch-up safe (ARCHITECTURE.md,
"Rules from the seed").

A memory whose last access (or creation, if never accessed) is more than 7 days old loses 0.01
health per whole day elapsed since the previous decay of this file, floored at 0. The time of
the previous decay lives in the file's plain ``ora_desktop_state`` table (key ``decay.last``).
Reading it and recording the decay it starts (key ``decay.pending``) happen in one ``BEGIN
IMMEDIATE`` transaction, so two processes decaying at once decay once; the ``UPDATE`` then runs
over rowid ranges in short transactions (see "in chunks" below) and the last one moves the mark
on. The first decay applies one day.

Catching up after ``N`` days off applies what ``N`` daily runs would have: a memory that
passed its 7-day grace during the gap loses only the days since it did.

The clock is checked before anything changes (:func:`_check_clock`): a run whose clock is more
than a day before the newest time in the file refuses. A mark more than a day in the future is
a clock error: said so and re-anchored to now when the file was written within the last day of
this clock (its own times vouch for it) or with ``--repair``, and otherwise refused.

A decay is journalled (:mod:`..operations.journal`) so ``ora-desktop undo`` takes it back
exactly: in each chunk's transaction, one statement keeps the previous health and grace start of
every memory of its range with health left in the plain table ``ora_desktop_decay_undo`` (rowid, id,
health, since; the latest decay's rows only; copying them is a tenth of the decay's own cost,
filtering them by the rule would double it), and the journal entry keeps the previous mark and
the rule's parameters. The undo recomputes from those which memories the decay lowered and what
it left them, so it puts exactly those back and refuses, changing nothing, when one of them was
changed since.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from .. import chunks, timestamps
from ..errors import Conflict, OraError
from ..operations import journal
from ..rawsql import run_sql
from ..records import Change, ChangeKind, Initiator
from ..store import Store, open_store
from .context import Cancelled, CancelledPartWay, JobContext, Outcome, read_state, summary, write_state
from .values import is_number, looks_like_time

STATE_KEY = "decay.last"
#: The token of the decay whose previous health values ``UNDO_TABLE`` holds (one decay at a time).
UNDO_KEY = "decay.undo"
UNDO_TABLE = journal.DECAY_UNDO_TABLE
DAY = timedelta(days=1)
GRACE_DAYS = 7
PER_DAY = 0.01
PREVIEW_LIMIT = 1000

# When each memory's grace began: its last access, or its creation if never accessed (as a Julian
# day; NULL for a time SQLite cannot read, which is then left alone and reported by `check`).
_SINCE = "julianday(coalesce(nullif(last_accessed_at, ''), created_at))"
# Due: health left, and the grace over (:cutoff = the Julian day of now minus 7 days). Odd values
# (text health such as 'NaN', a number where the time belongs) are left alone; `check` names them.
_GRACE_FROM = "coalesce(nullif(last_accessed_at, ''), created_at)"
_PAST_GRACE = f"{_SINCE} < :cutoff AND {looks_like_time(_GRACE_FROM)}"
# ``+health_score``: a scan, not the health index. Nearly every row with health left is visited
# anyway, and an index walk with a table lookup per row took twice as long (200k rows: 0.98 s
# against 0.54 s for the UPDATE; 0.73 s against 0.11 s for keeping the previous values).
_HEALTH_LEFT = f"{is_number('health_score')} AND +health_score > 0"
_DUE = f"{_HEALTH_LEFT} AND {_PAST_GRACE}"


def _new_health(days: int, health: str = "health_score", since: str = _SINCE) -> str:
    """The SET expression: one day off every due memory (the daily case, as cheap as the seed's
    own UPDATE), or for a catch-up ``min(days, ceil(days past its grace))`` days — what the missed
    daily runs would have taken (ceil with a 0.1 s tolerance for julianday's float rounding).
    ``health`` and ``since`` name the value it lowers and the Julian day its grace began (the
    undo recomputes it from the kept values)."""
    if days == 1:
        return f"MAX(0, {health} - :per)"
    return f"MAX(0, {health} - :per * MIN(:days, CAST(:cutoff - {since} + 0.999999 AS INTEGER)))"


def _params(days: int, now: datetime) -> dict:
    julian = now.timestamp() / 86400 + 2440587.5
    return {"cutoff": julian - GRACE_DAYS, "days": days, "per": PER_DAY}


def last_decay(store: Store) -> datetime | None:
    """When this file was last decayed (``None`` if never, or the record is unreadable)."""
    return timestamps.parse(read_state(store, STATE_KEY))


def _mark(last: datetime | None, days: int, now: datetime) -> datetime:
    """When the last of the ``days`` daily runs being made up was due (``now`` for a first decay)."""
    return now if last is None else last + timedelta(days=days)


def days_due(last: datetime | None, now: datetime) -> int:
    """Whole days to apply: 1 for a first decay, 0 if decayed less than a day ago."""
    if last is None:
        return 1
    return max(0, int((now - last).total_seconds() // 86400))


def run(ctx: JobContext) -> Outcome:
    """Decay one file (see the module docstring); on a dry run, list what would change."""
    now = ctx.clock
    ctx.step(0, 1)
    if ctx.dry_run:
        with open_store(ctx.path, readonly=True) as store:
            return _preview(ctx, store, now)
    with open_store(ctx.path) as store:
        with ctx.interruptible(store), store.write():
            store.ensure_engine_tables()  # in the same transaction: a failed decay leaves the file as it was
            last = last_decay(store)
            resumed = _pending(store)
            if resumed is None:
                ahead = _check_clock(store, last, now, ctx.repair)
                if ahead is not None:
                    write_state(store, STATE_KEY, timestamps.to_sql(now))
                    return Outcome({"days": 0, "decayed": 0}, f"clock error: the decay mark "
                                   f"({timestamps.to_sql(last)}) was {_span(ahead)} in the future; re-anchored to "
                                   "now, nothing decayed this run ('ora-desktop undo' takes back the decay that set "
                                   "it, if it was the last step)")
                days = days_due(last, now)
                if days == 0:
                    return Outcome({"days": 0, "decayed": 0},
                                   f"already decayed within the last day (at {timestamps.to_sql(last)})")
                # Move the mark on by whole days so a partial day is carried to the next run; the
                # missed daily runs are the ones at the mark and the days before it, so what is due
                # and for how many days is judged at the mark, not at "now" part-way into a day.
                _begin(store, last, days, _mark(last, days, now))
            else:
                days = resumed["days"]
            # The first chunk in the transaction that began the decay: if the file refuses the new
            # values (a STRICT column, a CHECK), nothing at all was written.
            sizer = chunks.new_sizer()
            _covered, decayed, finished = _chunk(store, sizer.size)
        try:
            with ctx.interruptible(store):
                decayed += 0 if finished else _apply_in_chunks(store, sizer)
        except Cancelled:
            raise CancelledPartWay(f"{ctx.path}: decay cancelled part-way; the next decay finishes it "
                                   "(no memory loses a day twice)") from None
    ctx.step(1, 1)
    first = " (first decay of this file: one day)" if last is None and resumed is None else ""
    again = " (finishing a decay that was interrupted)" if resumed is not None else ""
    return Outcome({"days": days, "decayed": decayed},
                   f"{decayed} memories lost health for {days} day(s){first}{again}")


# ----------------------------------------------------------------------------- in chunks
# One UPDATE of a large file holds the write lock for seconds, and an agent with a short busy
# timeout fails meanwhile. The decay goes over rowid ranges in short transactions
# (:mod:`..chunks`); what it is doing lives in ``ora_desktop_state`` (key ``decay.pending``: the
# days, the mark, the previous mark, the rowids done and the last rowid when it began), moved on
# in each chunk's transaction; the mark itself and the journal entry are written with the last
# chunk. A decay killed part-way is finished by the next run (never started again: no memory
# loses a day twice), and two processes decaying at once share the ranges left.
PENDING_KEY = "decay.pending"


def _pending(store: Store) -> dict | None:
    """The decay under way in this file (``None`` if none, or its record is unreadable)."""
    text = read_state(store, PENDING_KEY)
    try:
        record = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(record, dict) or timestamps.parse(record.get("mark")) is None:
        return None
    return record


def _begin(store: Store, last: datetime | None, days: int, mark: datetime) -> None:
    """Record a decay of ``days`` up to ``mark`` over every row there is now (inside a write); the
    previous decay can no longer be undone (its kept values are dropped)."""
    store.create_engine_tables(UNDO_TABLE)
    run_sql(store, f"DELETE FROM {UNDO_TABLE}")
    run_sql(store, "DELETE FROM ora_desktop_state WHERE key = ?", (UNDO_KEY,))
    top = run_sql(store, "SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0]
    write_state(store, PENDING_KEY, json.dumps({
        "days": days, "mark": timestamps.to_sql(mark), "previous": None if last is None else timestamps.to_sql(last),
        "after": 0, "upto": int(top)}))


def _chunk(store: Store, size: int) -> tuple[int, int, bool]:
    """Decay the next ``size`` rowids the pending record has left (inside a write); returns (rowids
    covered, memories decayed, whether the decay is finished)."""
    record = _pending(store)
    if record is None:  # another process finished it
        return 0, 0, True
    after, upto, days = int(record["after"]), int(record["upto"]), int(record["days"])
    upper = min(after + size, upto)
    mark = timestamps.parse(record["mark"])
    params = _params(days, mark)
    span = "rowid > :after AND rowid <= :upper"
    run_sql(store, f"INSERT INTO {UNDO_TABLE} (rid, id, health, since) SELECT rowid, id, health_score, "
                   f"{_GRACE_FROM} FROM memories WHERE {span} AND {_HEALTH_LEFT}", {"after": after, "upper": upper})
    decayed = run_sql(store, f"UPDATE memories SET health_score = {_new_health(days)} WHERE {span} AND {_DUE}",
                      {**params, "after": after, "upper": upper}).rowcount
    if upper >= upto:
        write_state(store, STATE_KEY, record["mark"])
        run_sql(store, "DELETE FROM ora_desktop_state WHERE key = ?", (PENDING_KEY,))
        _journal(store, timestamps.parse(record.get("previous")), mark, params,
                 decayed + int(record.get("decayed", 0)))
        return upper - after, decayed, True
    write_state(store, PENDING_KEY, json.dumps({**record, "after": upper,
                                                "decayed": decayed + int(record.get("decayed", 0))}))
    return upper - after, decayed, False


def _apply_in_chunks(store: Store, sizer: chunks.Sizer) -> int:
    """Decay the rowid ranges the pending record has left, one short transaction each; returns
    how many memories this process decayed."""
    decayed, finished = 0, False

    def chunk() -> int:
        nonlocal decayed, finished
        covered, count, finished = _chunk(store, sizer.size)
        decayed += count
        return covered

    while not finished:
        chunks.timed_write(store, sizer, chunk)
    return decayed


def _span(delta: timedelta) -> str:
    """``3 days``, ``5 hours``, ``12 minutes``: how far a clock is off, in words (rounded)."""
    seconds = abs(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{int(seconds)} seconds"


def newest_time(store: Store) -> datetime | None:
    """The file's newest time: created, updated or last accessed, compared as time (aggregates
    over text values only, a fraction of the decay's own cost), or ``None`` for no times."""
    cols = [c for c in ("created_at", "updated_at", "last_accessed_at") if c in store.columns]
    if not cols:
        return None
    maxima = ", ".join(f"max(CASE WHEN typeof({c}) = 'text' THEN julianday({c}) END)" for c in cols)
    found = [j for j in run_sql(store, f"SELECT {maxima} FROM memories").fetchone() if j is not None]
    return _from_julian(max(found)) if found else None


def _from_julian(day: float) -> datetime:
    return datetime.fromtimestamp((day - 2440587.5) * 86400, tz=UTC).replace(microsecond=0)


def _newest_id(store: Store, newest: datetime) -> str:
    """Which memory holds ``newest`` (for the refusal's message only: a second scan)."""
    cols = [c for c in ("created_at", "updated_at", "last_accessed_at") if c in store.columns]
    near = " OR ".join(f"abs(julianday({c}) - julianday(?)) < 1.0 / 86400" for c in cols)
    row = run_sql(store, f"SELECT id FROM memories WHERE {near} LIMIT 1",
                  [timestamps.to_sql(newest)] * len(cols)).fetchone()
    return "?" if row is None else str(row[0])


def _check_clock(store: Store, last: datetime | None, now: datetime, repair: bool) -> timedelta | None:
    """Refuse a clock that looks wrong (raises, nothing changed); return how far in the future a
    mark is that this clock outranks (to be re-anchored), or ``None`` when the mark is in the past
    or less than a day ahead (then the run decays nothing, as after any decay within the day)."""
    newest = newest_time(store)
    if newest is not None and now < newest - DAY:
        raise OraError(f"{store.path}: refusing to decay: this clock ({timestamps.to_sql(now)}) is "
                       f"{_span(newest - now)} before the newest time in the file ({timestamps.to_sql(newest)}, "
                       f"memory {_newest_id(store, newest)!r}); fix the clock and run it again; nothing changed")
    if last is None or last <= now + DAY:
        return None  # within a day ahead (a clock set back a little): as good as decayed today
    ahead = last - now
    vouched = newest is not None and newest >= now - DAY  # the file was written within a day of this clock
    if vouched or repair:
        return ahead
    raise OraError(f"{store.path}: refusing to decay: this clock ({timestamps.to_sql(now)}) is {_span(ahead)} before "
                   f"the file's last decay ({timestamps.to_sql(last)}), and nothing in the file says which clock was "
                   "right; nothing changed ('ora-desktop undo' takes that decay back; if this clock is right, "
                   "'ora-desktop run decay --repair' re-anchors the mark to now)")


def _journal(store: Store, last: datetime | None, mark: datetime, params: Mapping[str, Any], decayed: int) -> None:
    token = uuid.uuid4().hex
    write_state(store, UNDO_KEY, token)
    spec = {"token": token, "previous_mark": None if last is None else timestamps.to_sql(last),
            "mark": timestamps.to_sql(mark), **params}
    change = Change(kind=ChangeKind.JOB, initiator=Initiator.JOB, source="decay")
    journal.record(store, change, f"decay of {decayed} memories by {params['days']} day(s)", journal.Undo(decay=spec))


def take_back(store: Store, spec: Mapping[str, Any], label: str) -> None:
    """Undo a journalled decay (call inside the undo's write): every health value it lowered and
    the previous mark come back; refuses (:class:`Conflict`, nothing changed) when a later decay
    ran, or a memory it lowered was changed or removed since."""
    refuse = f"{store.path}: cannot undo “{label}”"
    if read_state(store, UNDO_KEY) != spec["token"] or not store.has_table(UNDO_TABLE):
        raise Conflict("", f"{refuse}: a later decay ran since; nothing undone")
    params = {k: spec[k] for k in ("cutoff", "days", "per")}
    # the memories it lowered: past their grace at the decay, by the grace start kept then
    lowered = f"julianday(u.since) < :cutoff AND {looks_like_time('u.since')}"
    left = _new_health(spec["days"], "u.health", "julianday(u.since)")
    stale = run_sql(store, f"SELECT u.id, m.id IS NULL FROM {UNDO_TABLE} u LEFT JOIN memories m ON m.rowid = u.rid "
                           f"WHERE {lowered} AND (m.id IS NOT u.id OR m.health_score IS NOT {left}) LIMIT 1",
                    params).fetchone()
    if stale is not None:
        what = "was deleted" if stale[1] else "was changed"
        raise Conflict(str(stale[0]), f"{refuse}: memory {stale[0]!r} {what} since; nothing undone")
    run_sql(store, f"UPDATE memories SET health_score = u.health FROM {UNDO_TABLE} u "
                   f"WHERE memories.rowid = u.rid AND {lowered} AND memories.health_score IS NOT u.health", params)
    if spec["previous_mark"] is None:
        run_sql(store, "DELETE FROM ora_desktop_state WHERE key = ?", (STATE_KEY,))
    else:
        write_state(store, STATE_KEY, spec["previous_mark"])
    run_sql(store, "DELETE FROM ora_desktop_state WHERE key = ?", (UNDO_KEY,))
    run_sql(store, f"DELETE FROM {UNDO_TABLE}")


def _health(value: float) -> str:
    """``0.85``, ``0.004``, ``0.00``: enough digits that a real change never reads "0.00 → 0.00"."""
    if abs(value - round(value, 2)) < 1e-9:
        return f"{value:.2f}"
    return f"{value:.4f}".rstrip("0")


def _preview(ctx: JobContext, store: Store, now: datetime) -> Outcome:
    last = last_decay(store)
    ahead = _check_clock(store, last, now, ctx.repair)
    if ahead is not None:
        return Outcome({"days": 0, "decayed": 0}, f"clock error: the decay mark ({timestamps.to_sql(last)}) is "
                       f"{_span(ahead)} in the future: a run would re-anchor it to now and decay nothing")
    days = days_due(last, now)
    if days == 0:
        return Outcome({"days": 0, "decayed": 0}, "already decayed within the last day: nothing would change")
    params = _params(days, _mark(last, days, now))
    total = run_sql(store, f"SELECT count(*) FROM memories WHERE {_DUE}", params).fetchone()[0]
    rows = run_sql(store, f"SELECT id, content, health_score, {_new_health(days)} FROM memories WHERE {_DUE} "
                         f"LIMIT {PREVIEW_LIMIT}", params).fetchall()
    changes = [summary(r[0], r[1], f"health {_health(r[2])} → {_health(r[3])}") for r in rows]
    more = f" (first {PREVIEW_LIMIT} listed)" if total > PREVIEW_LIMIT else ""
    return Outcome({"days": days, "decayed": total}, f"would lower the health of {total} memories "
                   f"by up to {days} day(s){more}", changes, would_change_total=total)

