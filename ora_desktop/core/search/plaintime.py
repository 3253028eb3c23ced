"""Plain-language time in a search: "deploy last week" searches ``deploy created:<7d``.

:func:`read_plain_time` finds the phrases below outside quotes, turns each into a ``created:``
filter of the query language (:mod:`ora_desktop.core.timefilter`), and gives back the remaining
words, the filters, and a note saying how each phrase was read. Days are UTC days, as every
stored time is UTC; a week starts on Monday. It is a pure function of the text and ``now``.

=====================  ========================================  (on Thursday 2026-11-26)
phrase                 reads as
=====================  ========================================  ================================
today                  created since midnight                    ``created:>=2026-11-26``
yesterday              created that day                          ``created:=2026-11-25``
last week, past week   the last 7 days                           ``created:<7d``
last N days/weeks      the last N days (weeks, months: 30 days)  ``created:<3d``
this week              since Monday                              ``created:>=2026-11-23``
since Monday (…Sunday) since the latest such day (today counts)  ``created:>=2026-11-23``
this month             since the 1st                             ``created:>=2026-11-01``
last month             the calendar month before                 ``created:2026-10-01..2026-10-31``
in November [2025]     that month (the latest one not to come)   ``created:2026-11-01..2026-11-30``
=====================  ========================================  ================================

A phrase in quotes (``"last week"``) is searched as words.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from .. import timestamps

_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december")
_DAYS = {name: number for number, name in enumerate(_DAY_NAMES)} | {
    name[:3]: number for number, name in enumerate(_DAY_NAMES)}
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)} | {
    name[:3]: number for number, name in enumerate(_MONTH_NAMES, start=1)} | {"sept": 9}
_UNITS = {"day": "d", "days": "d", "week": "w", "weeks": "w", "month": "mo", "months": "mo"}
_EDGE_BEFORE = r"(?<![\w:./\-\"'])"
_EDGE_AFTER = r"(?![\w:./\-])"
_PHRASE = re.compile(
    _EDGE_BEFORE + r"(?:"
    r"(?P<today>today)|(?P<yesterday>yesterday)"
    r"|(?:last|past)\s+(?P<count>\d{1,4})\s+(?P<unit>days?|weeks?|months?)"
    r"|(?P<lastweek>(?:last|past)\s+week)|(?P<thisweek>this\s+week)"
    r"|since\s+(?P<weekday>" + "|".join(sorted(_DAYS, key=len, reverse=True)) + r")"
    r"|(?P<thismonth>this\s+month)|(?P<lastmonth>last\s+month)"
    r"|in\s+(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")(?:\s+(?P<year>\d{4}))?"
    r")" + _EDGE_AFTER,
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class PlainTime:
    """The text with time phrases taken out, the filters they became, and a note (None: no phrase)."""

    text: str
    filters: tuple[str, ...] = ()
    note: str | None = None


def read_plain_time(text: str, now: datetime | None = None) -> PlainTime:
    """Read the plain-language time phrases of ``text`` (see the module doc); ``now`` is the clock."""
    clock = now or timestamps.now()
    today = (clock.astimezone(UTC) if clock.tzinfo else clock).date()
    filters: list[str] = []
    said: list[str] = []
    parts = text.split('"')
    for position in range(0, len(parts), 2):  # outside quotes only
        def replace(match: re.Match[str]) -> str:
            value = _filter(match, today)
            filters.append(value)
            said.append(f"“{' '.join(match.group(0).split())}” as {value}")
            return " "
        parts[position] = _PHRASE.sub(replace, parts[position])
    if not filters:
        return PlainTime(text)
    rest = " ".join('"'.join(parts).split())
    return PlainTime(rest, tuple(filters), "read " + ", ".join(said))


def _filter(match: re.Match[str], today: date) -> str:
    found = match.groupdict()
    if found["today"]:
        return f"created:>={today}"
    if found["yesterday"]:
        return f"created:={today - timedelta(days=1)}"
    if found["count"]:
        return f"created:<{int(found['count'])}{_UNITS[found['unit'].lower()]}"
    if found["lastweek"]:
        return "created:<7d"
    if found["thisweek"]:
        return f"created:>={today - timedelta(days=today.weekday())}"
    if found["weekday"]:
        back = (today.weekday() - _DAYS[found["weekday"].lower()]) % 7
        return f"created:>={today - timedelta(days=back)}"
    if found["thismonth"]:
        return f"created:>={today.replace(day=1)}"
    if found["lastmonth"]:
        end = today.replace(day=1) - timedelta(days=1)
        return f"created:{end.replace(day=1)}..{end}"
    month = _MONTHS[found["month"].lower()]
    year = int(found["year"]) if found["year"] else (today.year if month <= today.month else today.year - 1)
    last = calendar.monthrange(year, month)[1]
    return f"created:{date(year, month, 1)}..{date(year, month, last)}"


__all__ = ["PlainTime", "read_plain_time"]
