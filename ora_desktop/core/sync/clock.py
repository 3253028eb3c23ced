"""Whose clock decides: each machine's offset from the server's, measured at every sync.

Edits are compared in the server's time (PostgreSQL's ``now()``): a machine's ``updated_at`` plus
the offset measured at the start of its sync. A clock more than :data:`WARN_AFTER` off is said
out loud. A clock that is off still decides nothing by itself: its edits are moved into server time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .. import timestamps

WARN_AFTER = 60.0  # seconds
#: Timestamps have whole seconds: a clock within this of the server's is taken as right (offset 0),
#: so the noise of measuring does not decide between edits a second apart.
RESOLUTION = 2.0


@dataclass(frozen=True, slots=True)
class Clock:
    """This machine's clock against the server's: ``offset`` seconds to add to local time."""

    offset: float = 0.0

    def to_server(self, text: str | datetime | None) -> datetime | None:
        """A local timestamp (as the file holds it) in server time; ``None`` when unreadable."""
        value = text if isinstance(text, datetime) else timestamps.parse(text)
        return None if value is None else value + timedelta(seconds=self.offset)

    @property
    def off(self) -> bool:
        return abs(self.offset) > WARN_AFTER

    def warning(self) -> str | None:
        """One line when this clock is more than a minute off the server's, else ``None``."""
        if not self.off:
            return None
        return (f"this machine's clock is {span(self.offset)} {'behind' if self.offset > 0 else 'ahead of'} "
                "the server's: edits are compared in the server's time; set the clock right (NTP)")


def measure(server_now: datetime, before: datetime, after: datetime) -> Clock:
    """The offset from a server reading taken between two local readings of whole seconds
    (their midpoint, plus the half second truncation takes off on average), in whole seconds."""
    local = before + (after - before) / 2 + timedelta(seconds=0.5)
    offset = (server_now - local).total_seconds()
    return Clock(0.0 if abs(offset) < RESOLUTION else float(round(offset)))


def span(seconds: float) -> str:
    """``86400`` -> ``"1 day"``, ``-90`` -> ``"1 min 30 s"``: a duration people read at a glance."""
    left = int(abs(round(seconds)))
    if left >= 3600:  # past an hour, seconds are noise; past most of a day, minutes are
        left = round(left / 60) * 60
    if left >= 86400 - 1800:
        left = round(left / 3600) * 3600
    days, left = divmod(left, 86400)
    hours, left = divmod(left, 3600)
    minutes, secs = divmod(left, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}" if days else "", f"{hours} h" if hours else "",
             f"{minutes} min" if minutes else "", f"{secs} s" if secs and not days else ""]
    return " ".join(p for p in parts if p) or "0 s"
