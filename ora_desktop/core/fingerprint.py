"""A memory row's fingerprint: the one version token every comparison uses.

A digest of every seed column as stored (types included: ``7`` and ``'7'`` differ; a column the
file lacks counts as NULL), so a change by any program is seen even within the same second or
when it leaves ``updated_at`` alone. ``Memory.version`` is this digest of the row it was read
from; edits, bulk edits, merges, undo, the MCP server and sync all compare rows through
:func:`row_fingerprint` of the same values (``Store.versions`` reads them). Columns a foreign
writer added beyond the seed's are left out: the engine never writes them, so no edit of ours
can overwrite a change to them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from .errors import InvalidValue

_TOKEN = re.compile(r"[0-9a-f]{40}")


def row_fingerprint(row: Sequence[Any]) -> str:
    """The hex digest of one row's values, in ``MEMORY_COLUMNS`` order."""
    return hashlib.sha1(repr(tuple(row)).encode("utf-8", "surrogatepass")).hexdigest()


def check_version(token: object, name: str = "expected_version") -> str:
    """``token`` if it has the shape of a version (40 hex digits), else ``InvalidValue``."""
    if isinstance(token, str) and _TOKEN.fullmatch(token):
        return token
    raise InvalidValue(name, f"{str(token)[:60]!r} is not a version: give the 40-hex-digit 'version' the "
                             "memory had when you read it (every memory 'ora-desktop show', a search or the "
                             "MCP tools return carries it)")
