"""Why a memory's health is what it is, and when it falls below the recall threshold (no Qt)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from ...core import Memory, timestamps
from ...core.schema import RECALL_THRESHOLD

DECAY_PER_DAY = 0.01
GRACE_DAYS = 7
ACCESS_BOOST = 0.1


def decay_start(memory: Memory) -> datetime | None:
    """When decay begins: 7 days after the last access (or creation, if never accessed)."""
    last = memory.last_accessed_at or memory.created_at
    return None if last is None else last + timedelta(days=GRACE_DAYS)


def falls_below_at(memory: Memory, now: datetime | None = None) -> datetime | None:
    """When health reaches the recall threshold at the current decay rate (``None``: it already
    has, or its health is unknown). Recall needs health above 0.3."""
    now = now or timestamps.now()
    health = memory.health_score
    start = decay_start(memory)
    if health is None or start is None or health <= RECALL_THRESHOLD:
        return None
    days = math.ceil(round((health - RECALL_THRESHOLD) / DECAY_PER_DAY, 6))
    return max(start, now) + timedelta(days=days)


def explain(memory: Memory, now: datetime | None = None) -> str:
    """A few sentences: where the value comes from and what happens next."""
    now = now or timestamps.now()
    health = memory.health_score
    if health is None:
        return "This memory has no health value (the file left it empty); recall treats it as 0."
    lines = [
        f"Health {health:.2f}. A memory starts at 1.00; each access adds {ACCESS_BOOST:.1f} (up to 1.00); "
        f"after {GRACE_DAYS} days without access it loses {DECAY_PER_DAY:.2f} a day."
    ]
    if memory.last_accessed_at is not None:
        idle = (now - memory.last_accessed_at).days
        stamp = timestamps.to_sql(memory.last_accessed_at)
        lines.append(f"Accessed {memory.access_count} time{'s' if memory.access_count != 1 else ''}, "
                     f"last {idle} day{'s' if idle != 1 else ''} ago ({stamp} UTC).")
    elif memory.created_at is not None:
        idle = (now - memory.created_at).days
        lines.append(f"Never accessed; created {idle} day{'s' if idle != 1 else ''} ago.")
    start = decay_start(memory)
    if start is not None:
        if start > now:
            lines.append(f"Decay starts {_date(start)} unless it is accessed before then.")
        else:
            elapsed = (now - start).days
            lines.append(f"Decaying since {_date(start)} ({elapsed} day{'s' if elapsed != 1 else ''}; "
                         f"at most {min(1.0, elapsed * DECAY_PER_DAY):.2f} lost so far).")
    if health <= RECALL_THRESHOLD:
        needed = math.floor(round((RECALL_THRESHOLD - health) / ACCESS_BOOST, 6)) + 1
        lines.append(f"At or below the recall threshold {RECALL_THRESHOLD}: recall no longer returns it. "
                     f"{needed} access{'es' if needed != 1 else ''} would bring it back.")
    else:
        when = falls_below_at(memory, now)
        if when is not None:
            days = (when - now).days
            lines.append(f"At {DECAY_PER_DAY:.2f} a day it falls to the recall threshold {RECALL_THRESHOLD} on "
                         f"{_date(when)} (in {days} day{'s' if days != 1 else ''}) unless it is accessed.")
    return "\n".join(lines)


def _date(when: datetime) -> str:
    return when.strftime("%Y-%m-%d")
