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
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .. import chunks, timestamps
from ..rawsql import run_sql
from ..store import Store, open_store
from .context import Cancelled, CancelledPartWay, JobContext, Outcome, read_state, summary, write_state
from .values import is_number, looks_like_time

STATE_KEY = "decay.last"
GRACE_DAYS = 7
PER_DAY = 0.01
PREVIEW_LIMIT = 1000

# When each memory's grace began: its last access, or its creation if never accessed (as a Julian
# day; NULL for a time SQLite cannot read, which is then left alone and reported by `check`).
_SINCE = "julianday(coalesce(nullif(last_accessed_at, ''), created_at))"
# Due: health left, and the grace over (:cutoff = the Julian day of now minus 7 days). Odd values
# (text health such as 'NaN', a number where the time belongs) are left alone; `check` names them.
_GRACE_FROM = "coalesce(nullif(last_accessed_at, ''), created_at)"
_DUE = (f"{is_number('health_score')} AND health_score > 0 AND {_SINCE} < :cutoff "
        f"AND {looks_like_time(_GRACE_FROM)}")


def _new_health(days: int) -> str:
    """The SET expression: one day off every due memory (the daily case, as cheap as the seed's
    own UPDATE), or for a catch-up ``min(days, ceil(days past its grace))`` days — what the missed
    daily runs would have taken (ceil with a 0.1 s tolerance for julianday's float rounding)."""
    if days == 1:
        return "MAX(0, health_score - :per)"
    return f"MAX(0, health_score - :per * MIN(:days, CAST(:cutoff - {_SINCE} + 0.999999 AS INTEGER)))"


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
                days = days_due(last, now)
                if days == 0:
                    return Outcome({"days": 0, "decayed": 0},
                                   f"already decayed within the last day (at {timestamps.to_sql(last)})")
                # Move the mark on by whole days so a partial day is carried to the next run; the
                # missed daily runs are the ones at the mark and the days before it, so what is due
                # and for how many days is judged at the mark, not at "now" part-way into a day.
                mark = _mark(last, days, now)
                _begin(store, days, mark)
            else:
                days = resumed["days"]
        try:
            with ctx.interruptible(store):
                decayed = _apply_in_chunks(store)
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
# days, the mark, the rowids done and the last rowid when it began), moved on in each chunk's
# transaction, and the mark itself is written with the last chunk. A decay killed part-way is
# finished by the next run (never started again: no memory loses a day twice), and two
# processes decaying at once share the ranges left.
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


def _begin(store: Store, days: int, mark: datetime) -> None:
    """Record a decay of ``days`` up to ``mark`` over every row there is now (inside a write)."""
    top = run_sql(store, "SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0]
    write_state(store, PENDING_KEY, json.dumps({"days": days, "mark": timestamps.to_sql(mark), "after": 0,
                                                "upto": int(top)}))


def _apply_in_chunks(store: Store) -> int:
    """Decay the rowid ranges the pending record has left, one short transaction each; returns
    how many memories this process decayed."""
    sizer, decayed, finished = chunks.new_sizer(), 0, False

    def chunk() -> int:
        nonlocal decayed, finished
        record = _pending(store)
        if record is None:  # another process finished it
            finished = True
            return 0
        after, upto = int(record["after"]), int(record["upto"])
        upper = min(after + sizer.size, upto)
        mark = timestamps.parse(record["mark"])
        params = {**_params(int(record["days"]), mark), "after": after, "upper": upper}
        decayed += run_sql(store, f"UPDATE memories SET health_score = {_new_health(int(record['days']))} "
                                  f"WHERE rowid > :after AND rowid <= :upper AND {_DUE}", params).rowcount
        if upper >= upto:
            write_state(store, STATE_KEY, record["mark"])
            run_sql(store, "DELETE FROM ora_desktop_state WHERE key = ?", (PENDING_KEY,))
            finished = True
        else:
            write_state(store, PENDING_KEY, json.dumps({**record, "after": upper}))
        return upper - after

    while not finished:
        chunks.timed_write(store, sizer, chunk)
    return decayed


def _health(value: float) -> str:
    """``0.85``, ``0.004``, ``0.00``: enough digits that a real change never reads "0.00 → 0.00"."""
    if abs(value - round(value, 2)) < 1e-9:
        return f"{value:.2f}"
    return f"{value:.4f}".rstrip("0")


def _preview(ctx: JobContext, store: Store, now: datetime) -> Outcome:
    last = last_decay(store)
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
                   f"by up to {days} day(s){more}", changes)

