"""How usage merges between machines (access count, last access, health).

Usage is its own stream, never a content conflict. With ``base`` the values this file last
synced, ``ours`` its values now and ``theirs`` the server's:

- **access_count**: the server's plus our touches since the last sync (``ours - base``): every
  machine's touches add up.
- **last_accessed_at**: the later of the two.
- **health_score**: a rise here (touches) is added to the server's, capped at 1.0. A fall here
  (decay) is the same daily schedule every machine runs, so it is not added to a fall another
  machine already sent: the server's health drops by our fall only as far as it is still above our
  own value (``max(theirs + fall, min(theirs, ours))``), floored at 0. So no touch is undone and a
  day's decay counts once. A machine that both touched and decayed a memory between two syncs
  sends the net of the two.
"""

from __future__ import annotations

from typing import Any

from .. import timestamps

Usage = tuple[Any, Any, Any]  # (access_count, last_accessed_at, health_score)


def _later(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return b if a is None else a
    ta, tb = timestamps.parse(a), timestamps.parse(b)
    if ta is None or tb is None:
        return a if tb is None else b
    return b if tb > ta else a


def merge(theirs: Usage, ours: Usage, base: Usage | None) -> Usage:
    """The usage every machine ends with (see the module's rules). Without a ``base`` (a memory both
    sides hold that never synced between them) the larger count and health and the later access win."""
    t_count, t_last, t_health = theirs
    o_count, o_last, o_health = ours
    last = _later(t_last, o_last)
    if base is None:
        count = max(int(t_count or 0), int(o_count or 0)) if t_count is not None or o_count is not None else None
        healths = [h for h in (t_health, o_health) if h is not None]
        return count, last, max(healths) if healths else None
    b_count, _, b_health = base
    count: Any = t_count
    gained = int(o_count or 0) - int(b_count or 0)
    if gained > 0:
        count = int(t_count or 0) + gained
    health: Any = t_health
    if o_health is not None and b_health is not None and o_health != b_health:
        now = float(t_health if t_health is not None else b_health)
        change = float(o_health) - float(b_health)
        if change > 0:
            health = round(min(1.0, now + change), 6)
        else:
            health = round(max(0.0, max(now + change, min(now, float(o_health)))), 6)
    return count, last, health
