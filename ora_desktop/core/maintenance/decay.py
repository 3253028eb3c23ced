"""Health decay: the seed's daily job made idempotent and catch-up safe (ARCHITECTURE.md,
"Rules from the seed").

A memory whose last access (or creation, if never accessed) is more than 7 days old loses 0.01
health per whole day elapsed since the previous decay of this file, floored at 0. The time of
the previous decay lives in the file's plain ``ora_desktop_state`` table (key ``decay.last``).
Reading it, the single ``UPDATE`` and moving it on happen in one ``BEGIN IMMEDIATE``
transaction, so two processes decaying at once decay once. The first decay applies one day.

Catching up after ``N`` days off applies what ``N`` daily runs would have: a memory that
passed its 7-day grace during the gap loses only the days since it did.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .. import timestamps
from ..rawsql import run_sql
from ..store import Store, open_store
from .context import JobContext, Outcome, read_state, summary, write_state
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
            days = days_due(last, now)
            if days == 0:
                return Outcome({"days": 0, "decayed": 0},
                               f"already decayed within the last day (at {timestamps.to_sql(last)})")
            # Move the mark on by whole days so a partial day is carried to the next run; the
            # missed daily runs are the ones at the mark and the days before it, so what is due
            # and for how many days is judged at the mark, not at "now" part-way into a day.
            mark = _mark(last, days, now)
            decayed = run_sql(store, f"UPDATE memories SET health_score = {_new_health(days)} WHERE {_DUE}",
                                    _params(days, mark)).rowcount
            write_state(store, STATE_KEY, timestamps.to_sql(mark))
    ctx.step(1, 1)
    first = " (first decay of this file: one day)" if last is None else ""
    return Outcome({"days": days, "decayed": decayed},
                   f"{decayed} memories lost health for {days} day(s){first}")


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

