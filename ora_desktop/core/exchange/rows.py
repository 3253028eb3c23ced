"""Rows on their way into a memory file: where each came from, and the checks each must pass.

Every reader (our JSONL/CSV, another ``.site.db``, the neighbouring stores) yields
:class:`Incoming` rows; :func:`check_row` turns one into the column values of ``memories`` or
raises :class:`BadRow` naming the line (or source row) and the field. The rules are the engine's
own validators (``core.validation``), so an import accepts exactly what an edit would.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from .. import timestamps
from ..errors import InvalidValue, OraError
from ..schema import MEMORY_COLUMNS, MEMORY_TYPES, SYNC_STATUSES
from ..validation import (
    check_content,
    check_count,
    check_health,
    check_id,
    check_importance,
    check_sync_status,
    check_type,
)

_TYPES = frozenset(MEMORY_TYPES)
_SYNCS = frozenset(SYNC_STATUSES)
_NUMBER = (float, int)
_parse = timestamps.parse
TIME_COLUMNS = ("last_accessed_at", "created_at", "updated_at", "expires_at", "synced_at")
_REQUIRED_TIMES = ("created_at", "updated_at")


@dataclass(frozen=True, slots=True)
class Incoming:
    """One memory read from a source: column values and where it was found (``line 7``)."""

    values: dict[str, Any]
    where: str
    #: Another row of the source may carry the same id on purpose (a duplicate to collapse).
    may_repeat: bool = False


@dataclass(frozen=True, slots=True)
class Skipped:
    """A row left out by ``skip_bad``: where it was, which field, and why."""

    where: str
    field: str
    problem: str

    def __str__(self) -> str:
        return f"{self.where}, field {self.field}: {self.problem}"


class BadRow(OraError):
    """A source row that cannot become a memory (the message names line and field)."""

    def __init__(self, where: str, field: str, problem: str) -> None:
        self.skipped = Skipped(where, field, problem)
        super().__init__(str(self.skipped))


class BadSource(OraError):
    """A source that none of the import formats can read."""


def derived_id(kind: str, *parts: object) -> str:
    """A stable memory id for a row of a neighbouring store: ``imp-<kind>-<hash>``.

    The same (kind, file identity, source row) always gives the same id, so importing the
    same source twice adds nothing the second time.
    """
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"imp-{kind}-{digest[:24]}"


def check_row(row: Incoming) -> tuple[Any, ...]:
    """The values of ``row`` in ``MEMORY_COLUMNS`` order, validated; raises :class:`BadRow`.

    Values are kept exactly as given (timestamps verbatim, whatever their format) once they
    pass: ``id`` and ``content`` present, ``type``/``importance``/``health_score``/
    ``sync_status`` inside the seed's CHECKs (or empty), counts whole, times readable.
    A row that passes the inline checks (nearly all) skips the field-by-field walk, which
    then runs only to name the first bad field.
    """
    get = row.values.get
    (id_, content, type_, importance, count, accessed, health, related, superseded, created, updated, expires,
     synced, sync) = values = tuple([get(c) for c in MEMORY_COLUMNS])
    if (id_.__class__ is str and 0 < len(id_) <= 512 and "\x00" not in id_ and not id_.isspace()
            and content.__class__ is str and content and not content.isspace() and "\x00" not in content
            and (type_ is None or (type_.__class__ is str and type_ in _TYPES))
            and (importance is None or (importance.__class__ is int and 1 <= importance <= 10))
            and (count is None or (count.__class__ is int and count >= 0))
            and (health is None or (health.__class__ in _NUMBER and 0.0 <= health <= 1.0))
            and (sync is None or (sync.__class__ is str and sync in _SYNCS))
            and (related is None or related.__class__ is str) and (superseded is None or superseded.__class__ is str)
            and created.__class__ is str and _parse(created) is not None
            and (updated == created or (updated.__class__ is str and _parse(updated) is not None))
            and (accessed is None or (accessed.__class__ is str and _parse(accessed) is not None))
            and (expires is None or (expires.__class__ is str and _parse(expires) is not None))
            and (synced is None or (synced.__class__ is str and _parse(synced) is not None))):
        return values
    return _check_fields(row)


def _check_fields(row: Incoming) -> tuple[Any, ...]:
    """:func:`check_row` field by field, raising :class:`BadRow` at the first bad one."""
    values = row.values
    field = "id"
    try:
        out = []
        for field in MEMORY_COLUMNS:
            value = values.get(field)
            if field == "id":
                value = check_id(value)
            elif field == "content":
                if isinstance(value, bytes):  # kept bytes of a text that was not UTF-8, or a BLOB
                    if not value:
                        raise InvalidValue(field, "must not be empty")
                else:
                    value = check_content(value)
            elif value is None:
                if field in _REQUIRED_TIMES:
                    raise InvalidValue(field, "must not be empty")
            elif field == "type":
                value = check_type(value)
            elif field == "importance":
                check_importance(value)
                if not isinstance(value, int):
                    raise InvalidValue(field, f"{value!r} is not a whole number from 1 to 10")
            elif field == "health_score":
                check_health(value)
                if not isinstance(value, (int, float)):
                    raise InvalidValue(field, f"{value!r} is not a number from 0.0 to 1.0")
            elif field == "access_count":
                value = check_count(value)
            elif field == "sync_status":
                value = check_sync_status(value)
            elif field in TIME_COLUMNS:
                if not isinstance(value, (str, int, float)) or isinstance(value, bool) or (
                        timestamps.parse(value) is None):
                    raise InvalidValue(field, f"{value!r} is not a timestamp")
            elif not isinstance(value, str):  # related_to, superseded_by: text as stored
                raise InvalidValue(field, f"{value!r} is not text")
            out.append(value)
    except InvalidValue as exc:
        raise BadRow(row.where, exc.field, str(exc).split(": ", 1)[-1]) from None
    return tuple(out)
