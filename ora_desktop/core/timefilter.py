"""Time filters: ``created:>=2026-11-01``, ``accessed:<30d`` and the list's ``--created-after``.

One parser for every face. A value is an optional comparison (``>``, ``>=``, ``<``, ``<=``,
``=``) and then either

* an absolute date or time — ``2026-11-01``, ``2026-11-01T09:30``, ``2026-11-01 09:30:00Z``
  (UTC unless an offset says otherwise). A bare date means the whole day: ``>2026-11-01`` is
  from 2 November on, ``<=2026-11-01`` up to the end of 1 November, ``=2026-11-01`` that day;
  ``2026-11-01..2026-11-30`` is both days and everything between; or
* a relative age — a number and a unit: ``90min``, ``12h``, ``7d``, ``2w``, ``3mo`` (30 days),
  ``1y`` (365 days). The comparison is on the age: ``accessed:<30d`` is "accessed less than 30
  days ago", ``created:>=7d`` "created at least 7 days ago". For ``expires`` it is the time
  left: ``expires:<7d`` is "expires within 7 days" (already expired included). A bare age
  (``created:7d``) means "at most that old".

Each filter becomes a :data:`TimeBound` ``(column, operator, 'YYYY-MM-DD HH:MM:SS')`` compared
in SQL through ``julianday()`` (both sides), so every stored timestamp format orders as time.
Rows whose column is NULL (never accessed, never expires) match no time filter.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from . import timestamps
from .errors import InvalidValue

#: Query-language field -> memories column.
TIME_FIELDS = {
    "created": "created_at",
    "updated": "updated_at",
    "accessed": "last_accessed_at",
    "expires": "expires_at",
}
#: (column, operator, UTC time in SQLite's format).
TimeBound = tuple[str, str, str]

_OP = re.compile(r"^(>=|<=|=>|=<|==|>|<|=)?\s*(.+)$")
_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(min|mins|minutes?|h|hours?|d|days?|w|weeks?|mo|months?|y|years?)$", re.I)
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RANGE = re.compile(r"^(\d{4}-\d{2}-\d{2}[^.]*)\.\.(\d{4}-\d{2}-\d{2}.*)$")
_UNIT = {"min": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0, "mo": 30 * 86400.0, "y": 365 * 86400.0}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}

EXAMPLE = "a date such as {name}:>=2026-11-01 or an age such as {name}:<7d"


def _unit(word: str) -> float:
    word = word.lower()
    if word.startswith("mo"):
        return _UNIT["mo"]
    if word.startswith("mi"):
        return _UNIT["min"]
    return _UNIT[word[0]]


def _moment(text: str) -> tuple[datetime, bool] | None:
    """(UTC time, whether it was a bare date) or None when ``text`` is not a date or time."""
    text = text.strip()
    parsed = timestamps.parse(text) if re.match(r"^\d{4}-\d{2}-\d{2}", text) else None
    return (parsed, bool(_DATE_ONLY.match(text))) if parsed else None


def time_bounds(name: str, value: str, now: datetime | None = None) -> list[TimeBound]:
    """The SQL bounds of ``name:value`` (``name`` a key of :data:`TIME_FIELDS`).

    Raises :class:`InvalidValue` naming the field and what was expected when ``value`` is
    neither a date/time nor an age. ``now`` defaults to the current time.
    """
    column = TIME_FIELDS.get(name)
    if column is None:
        raise InvalidValue(name, f"not a time field (one of {', '.join(TIME_FIELDS)})")
    value = value.strip()
    expected = f"{value!r} is neither a date nor an age (try {EXAMPLE.format(name=name)})"
    span = _RANGE.match(value)
    if span:
        low, high = _moment(span.group(1)), _moment(span.group(2))
        if not low or not high:
            raise InvalidValue(name, expected)
        if low[0] > high[0]:
            low, high = high, low
        end = high[0] + timedelta(days=1) if high[1] else high[0]
        return [(column, ">=", timestamps.to_sql(low[0])), (column, "<" if high[1] else "<=", timestamps.to_sql(end))]
    match = _OP.match(value)
    if not match:
        raise InvalidValue(name, expected)
    op = {"=>": ">=", "=<": "<=", "==": "="}.get(match.group(1) or "", match.group(1) or "")
    rest = match.group(2).strip()
    age = _AGE.match(rest)
    if age:
        seconds = float(age.group(1)) * _unit(age.group(2))
        clock = now or timestamps.now()
        op = op if op not in ("", "=") else "<="  # a bare age: at most that old (or that far off)
        if column == "expires_at":  # time left: expires_at - now  <op>  seconds
            return [(column, op, timestamps.to_sql(clock + timedelta(seconds=seconds)))]
        # age: now - column  <op>  seconds, i.e. column  <flipped op>  now - seconds
        return [(column, _FLIP[op], timestamps.to_sql(clock - timedelta(seconds=seconds)))]
    moment = _moment(rest)
    if moment is None:
        raise InvalidValue(name, expected)
    when, whole_day = moment
    if not whole_day:
        return [(column, op or "=", timestamps.to_sql(when))]
    start, end = timestamps.to_sql(when), timestamps.to_sql(when + timedelta(days=1))
    if op == ">":
        return [(column, ">=", end)]
    if op == ">=":
        return [(column, ">=", start)]
    if op == "<":
        return [(column, "<", start)]
    if op == "<=":
        return [(column, "<", end)]
    return [(column, ">=", start), (column, "<", end)]


def bounds_sql(bounds: tuple[TimeBound, ...] | list[TimeBound], available: object = None) -> list[tuple[str, tuple]]:
    """``(sql, params)`` conditions for ``bounds``; a column missing from ``available`` is NULL."""
    out = []
    for column, op, when in bounds:
        col = column if available is None or column in available else "NULL"  # type: ignore[operator]
        out.append((f"julianday({col}) {op} julianday(?)", (when,)))
    return out


def after(name: str, value: str, now: datetime | None = None) -> list[TimeBound]:
    """``name`` at or after a date/time, or (an age) at most that old: ``--created-after 7d``."""
    return _edge(name, value, "<=", ">=", now)


def before(name: str, value: str, now: datetime | None = None) -> list[TimeBound]:
    """``name`` strictly before a date/time, or (an age) older than that: ``--created-before 1y``."""
    return _edge(name, value, ">", "<", now)


def _edge(name: str, value: str, age_op: str, date_op: str, now: datetime | None) -> list[TimeBound]:
    value = value.strip()
    if not _AGE.match(value) and _moment(value) is None:
        raise InvalidValue(name, f"{value!r} is neither a date nor an age (try 2026-11-01, 2026-11-01T09:30 or 7d)")
    return time_bounds(name, (age_op if _AGE.match(value) else date_op) + value, now)


def check_created_after(value: str) -> list[TimeBound]:
    """``--created-after`` as bounds (raises :class:`InvalidValue` for a bad value)."""
    return after("created", value)


def check_created_before(value: str) -> list[TimeBound]:
    """``--created-before`` as bounds (raises :class:`InvalidValue` for a bad value)."""
    return before("created", value)


#: The window's time facet: (label, youngest age in days, oldest age in days or None).
AGE_BUCKETS: tuple[tuple[str, float, float | None], ...] = (
    ("last 24 hours", 0, 1), ("1-7 days ago", 1, 7), ("1-4 weeks ago", 7, 30),
    ("1-12 months ago", 30, 365), ("over a year ago", 365, None),
)


def age_bucket(when: datetime | None, now: datetime | None = None) -> str | None:
    """The :data:`AGE_BUCKETS` label of a time (None for no time; the future counts as now)."""
    if when is None:
        return None
    days = max(0.0, ((now or timestamps.now()) - when).total_seconds() / 86400.0)
    return next(label for label, low, high in AGE_BUCKETS if high is None or low <= days < high)


def bucket_bounds(label: str, field: str = "created", now: datetime | None = None) -> list[TimeBound]:
    """Bounds selecting one of :data:`AGE_BUCKETS` on ``field`` (age in [youngest, oldest))."""
    for name, low, high in AGE_BUCKETS:
        if name == label:
            column, clock = TIME_FIELDS[field], now or timestamps.now()
            bounds = [(column, "<=", timestamps.to_sql(clock - timedelta(days=low)))]
            if high is not None:
                bounds.append((column, ">", timestamps.to_sql(clock - timedelta(days=high))))
            return bounds
    raise InvalidValue(field, f"{label!r} is not one of {', '.join(b[0] for b in AGE_BUCKETS)}")


def any_of(choices: list[list[TimeBound]]) -> tuple[str, tuple]:
    """One ``(sql, params)`` condition true when any of ``choices`` (each ANDed bounds) holds."""
    parts, params = [], []
    for bounds in choices:
        conditions = bounds_sql(bounds)
        parts.append("(" + " AND ".join(sql for sql, _ in conditions) + ")")
        params.extend(value for _, values in conditions for value in values)
    return (" OR ".join(parts) or "0"), tuple(params)

