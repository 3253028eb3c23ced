"""How values read in the window: relative times, health, sync status, short content."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ..core import timestamps

_UNITS = ((3600, 60, "min"), (86400, 3600, "h"), (86400 * 31, 86400, "day"),
          (86400 * 365, 86400 * 30.44, "month"), (float("inf"), 86400 * 365.25, "year"))


def relative(when: datetime | None, now: datetime | None = None) -> str:
    """``3 min ago``, ``in 2 days``, ``5 months ago``; empty for ``None``."""
    if when is None:
        return ""
    seconds = ((now or timestamps.now()) - when).total_seconds()
    future, seconds = seconds < 0, abs(seconds)
    if seconds < 45:
        return "just now"
    count, unit = 1, "min"
    for limit, size, name in _UNITS:
        if seconds < limit:
            count, unit = max(1, int(seconds // size)), name
            break
    label = unit if unit in ("min", "h") or count == 1 else f"{unit}s"
    return f"in {count} {label}" if future else f"{count} {label} ago"


def exact(when: datetime | None) -> str:
    """The full timestamp in UTC and local time, for tooltips."""
    if when is None:
        return ""
    utc = when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    local = when.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    return utc if utc.endswith(local[-3:]) and local.startswith(utc[:19]) else f"{utc}\n{local} (local)"


def health_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


SYNC_LABELS = {"pending": "Pending", "synced": "Synced", "local_only": "Local only"}


def sync_label(status: str | None) -> str:
    return SYNC_LABELS.get(status or "", status or "Unknown")


_NOT_SPACE = re.compile(r"\S")


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line, stripped, shortened with an ellipsis past ``limit`` characters.

    Reads only as far as that line needs (about ``limit`` characters), not the whole text: the
    table, the title and the chain list call it on memories of megabytes.
    """
    found = _NOT_SPACE.search(text)  # the first non-empty line starts here, its indent skipped
    if found is None:
        return ""
    start, window = found.start(), limit + 1
    while True:
        piece = text[start:start + window]
        line = piece.splitlines()[0]
        if len(line) < len(piece) or start + window >= len(text):
            line = line.rstrip()  # the line ends within the piece
            break
        if not piece[-1].isspace():  # over ``limit`` characters whatever follows
            break
        window *= 4  # only trailing blanks so far: read further to know where the line ends
    return line if len(line) <= limit else line[: limit - 1] + "…"
