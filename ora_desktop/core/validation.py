"""Checks of field values against the seed's CHECK constraints, before any SQL runs."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from . import timestamps
from .errors import InvalidValue
from .schema import HEALTH_RANGE, IMPORTANCE_RANGE, MEMORY_TYPES, SYNC_STATUSES

EDITABLE_FIELDS = frozenset({
    "content", "type", "importance", "health_score", "related_to", "superseded_by",
    "expires_at", "sync_status", "access_count", "last_accessed_at", "synced_at",
})
#: Most characters one memory's content may hold (16 MiB of text: far past any agent's note,
#: far below SQLite's one-gigabyte value limit, small enough to index, highlight and send).
MAX_CONTENT_CHARS = 16 * 1024 * 1024


def check_type(value: Any) -> str:
    """A memory type of the seed, or ``InvalidValue``."""
    if value not in MEMORY_TYPES:
        raise InvalidValue("type", f"{value!r} is not one of {', '.join(MEMORY_TYPES)}")
    return value


def check_importance(value: Any) -> int:
    """A whole number from 1 to 10, or ``InvalidValue``."""
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise InvalidValue("importance", f"{value!r} is not a whole number from 1 to 10")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidValue("importance", f"{value!r} is not a whole number from 1 to 10") from None
    if isinstance(value, float) and not value.is_integer():
        raise InvalidValue("importance", f"{value!r} is not a whole number from 1 to 10")
    low, high = IMPORTANCE_RANGE
    if not low <= number <= high:
        raise InvalidValue("importance", f"{number} is outside the allowed range {low} to {high}")
    return number


def check_health(value: Any) -> float:
    """A number from 0.0 to 1.0, or ``InvalidValue``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidValue("health_score", f"{value!r} is not a number from 0.0 to 1.0") from None
    low, high = HEALTH_RANGE
    if isinstance(value, bool) or math.isnan(number) or not low <= number <= high:
        raise InvalidValue("health_score", f"{value!r} is outside the allowed range 0.0 to 1.0")
    return number


def check_sync_status(value: Any) -> str:
    """pending, synced or local_only, or ``InvalidValue``."""
    if value not in SYNC_STATUSES:
        raise InvalidValue("sync_status", f"{value!r} is not one of {', '.join(SYNC_STATUSES)}")
    return value


def check_content(value: Any) -> str:
    """Non-blank text without NUL, or ``InvalidValue``."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidValue("content", "must not be empty")
    if "\x00" in value:
        raise InvalidValue("content", "must not contain NUL characters")
    if len(value) > MAX_CONTENT_CHARS:
        raise InvalidValue("content", f"holds {len(value):,} characters; a memory holds at most {MAX_CONTENT_CHARS:,}")
    return value


def check_id(value: Any, field: str = "id") -> str:
    """A non-empty id of at most 512 characters, or ``InvalidValue``."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidValue(field, "must be a non-empty text id")
    if "\x00" in value or len(value) > 512:
        raise InvalidValue(field, "must be at most 512 characters with no NUL")
    return value


def check_related(value: Any) -> str | None:
    """Validate a list of ids and return its JSON text (``None`` for an empty list)."""
    if value is None:
        return None
    if isinstance(value, str):
        raise InvalidValue("related_to", "must be a list of memory ids, not a string")
    if not isinstance(value, Iterable):
        raise InvalidValue("related_to", f"{value!r} is not a list of memory ids")
    ids = [check_id(item, "related_to") for item in value]
    unique = list(dict.fromkeys(ids))
    return json.dumps(unique) if unique else None


def check_count(value: Any) -> int:
    """A whole number of 0 or more, or ``InvalidValue``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidValue("access_count", f"{value!r} is not a whole number of 0 or more")
    return value


def clean_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Validate user-supplied memory fields and convert them to column values.

    Raises ``InvalidValue`` naming the first bad field; unknown fields are refused too.
    """
    unknown = set(fields) - EDITABLE_FIELDS
    if unknown:
        name = sorted(unknown)[0]
        raise InvalidValue(name, f"is not an editable field (editable: {', '.join(sorted(EDITABLE_FIELDS))})")
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "content":
            out[name] = check_content(value)
        elif name == "type":
            out[name] = check_type(value)
        elif name == "importance":
            out[name] = check_importance(value)
        elif name == "health_score":
            out[name] = check_health(value)
        elif name == "sync_status":
            out[name] = check_sync_status(value)
        elif name == "related_to":
            out[name] = check_related(value)
        elif name == "superseded_by":
            out[name] = None if value in (None, "") else check_id(value, "superseded_by")
        elif name == "access_count":
            out[name] = check_count(value)
        else:  # timestamps
            out[name] = timestamps.coerce(value, name, from_now=name == "expires_at")
    return out
