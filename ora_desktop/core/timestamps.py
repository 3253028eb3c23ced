"""Timestamps: write SQLite's own UTC format, read every format a foreign writer produces.

Writes use ``YYYY-MM-DD HH:MM:SS`` (what ``datetime('now')`` writes). Reads accept ISO 8601
with ``T``, fractional seconds, ``Z`` or ``+HH:MM`` offsets, and date-only values. Comparisons in
SQL go through ``julianday(col)`` (see :func:`sql_time`), never through string order.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

SQL_FORMAT = "%Y-%m-%d %H:%M:%S"
_fromisoformat = datetime.fromisoformat

_ISO = re.compile(
    r"^\s*(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|z|[+-]\d{2}:?\d{2}|UTC)?\s*$"
)


def now() -> datetime:
    """The current time as an aware UTC datetime, truncated to whole seconds."""
    return datetime.now(UTC).replace(microsecond=0)


def to_sql(value: datetime) -> str:
    """Format an aware (or naive-UTC) datetime the way SQLite's ``datetime('now')`` does."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime(SQL_FORMAT)


def now_sql() -> str:
    """``datetime('now')`` computed in Python."""
    return to_sql(now())


def parse(text: str | None) -> datetime | None:
    """Parse any timestamp format found in Ora files into an aware UTC datetime.

    Returns ``None`` for ``None``/empty input and for text that is not a timestamp
    (callers that need to report unparseable values use :func:`is_parseable`).
    Numeric values are read as Unix seconds (or milliseconds when large).
    """
    if text is None:
        return None
    if text.__class__ is str and len(text) == 19 and text[10] == " " and text[16] == ":":
        try:  # fast path: SQLite's own format, by far the most common (~0.1 µs)
            return _fromisoformat(text + "+00:00")
        except ValueError:
            pass
    elif text.__class__ is str and len(text) > 19 and text[-1] == "Z" and text[10] == "T" and text[16] == ":":
        try:  # fast path: the other common writer, ``2025-01-14T10:30:00.000Z``
            return _fromisoformat(text)
        except ValueError:
            pass
    if isinstance(text, (int, float)):
        return _from_epoch(float(text))
    text = str(text)
    match = _ISO.match(text)
    if not match:
        try:
            return _from_epoch(float(text))
        except ValueError:
            return None
    year, month, day, hour, minute, second, frac, zone = match.groups()
    try:
        value = datetime(
            int(year), int(month), int(day),
            int(hour or 0), int(minute or 0), int(second or 0),
            int((frac or "0")[:6].ljust(6, "0")),
        )
    except ValueError:
        return None
    offset = timedelta(0)
    if zone and zone not in ("Z", "z", "UTC"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return (value - offset).replace(tzinfo=UTC)


def _from_epoch(seconds: float) -> datetime | None:
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def is_parseable(text: str | None) -> bool:
    """True when ``text`` is empty or a timestamp :func:`parse` understands."""
    return text in (None, "") or parse(text) is not None


#: The years a person may give (a bare number read as Unix seconds gave 1970-01-01 00:00:07 or 2286).
YEARS = (1970, 2200)
_NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_SPAN = re.compile(r"^\s*(\d+)\s*(min|[mhdw])\s*$", re.IGNORECASE)
_SPAN_SECONDS = {"min": 60, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_TIME_HINT = "a time (YYYY-MM-DD HH:MM:SS in UTC, or ISO 8601 with an offset)"
_HINT = f"give a date (YYYY-MM-DD) or {_TIME_HINT}"
_SPAN_HINT = f"give a span from now (30m, 3h, 7d, 2w), a date (YYYY-MM-DD) or {_TIME_HINT}"


def coerce(value: datetime | str | None, field: str = "timestamp", *, from_now: bool = False,
           at: datetime | None = None) -> str | None:
    """Turn a time a person (or an agent) gave into SQLite's format, or raise ``InvalidValue``.

    Accepted: a ``datetime``; a date, SQLite's format or ISO 8601 (an offset is honoured, none
    means UTC); with ``from_now``, a span after ``at`` (default now) such as ``30m``, ``3h``,
    ``7d`` or ``2w``. Refused, with a hint: a bare number (``7`` would be 1970-01-01 00:00:07),
    anything else, and years outside :data:`YEARS`. Reading a file's own values is :func:`parse`.
    """
    from .errors import InvalidValue

    if value is None or value == "":
        return None
    hint = _SPAN_HINT if from_now else _HINT
    if isinstance(value, datetime):
        parsed: datetime | None = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, (bool, int, float)) or (isinstance(value, str) and _NUMBER.match(value)):
        raise InvalidValue(field, f"{value!r} is a bare number, not a timestamp: {hint}")
    elif not isinstance(value, str):
        raise InvalidValue(field, f"{value!r} is not a timestamp: {hint}")
    elif from_now and (span := _SPAN.match(value)):
        seconds = int(span.group(1)) * _SPAN_SECONDS[span.group(2).lower()]
        try:
            parsed = (at or now()) + timedelta(seconds=seconds)
        except OverflowError:
            raise InvalidValue(field, f"{value!r} is too far from now (years {YEARS[0]} to {YEARS[1]})") from None
    else:
        parsed = parse(value) if _ISO.match(value) else None
        if parsed is None:
            raise InvalidValue(field, f"{value!r} is not a timestamp: {hint}")
    if not YEARS[0] <= parsed.astimezone(UTC).year <= YEARS[1]:
        raise InvalidValue(field, f"{value!r} is out of range: give a time in the years {YEARS[0]} to {YEARS[1]}")
    return to_sql(parsed)


def sql_time(column: str) -> str:
    """SQL expression that orders/compares ``column`` as time, whatever its text format.

    ``julianday`` understands both ``2025-01-14 10:30:00`` and ``2025-01-14T10:30:00.000Z``
    (and offsets); plain string comparison would not sort the two together.
    """
    return f"julianday({column})"
