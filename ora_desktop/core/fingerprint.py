"""A memory row's fingerprint: the one version token every comparison uses.

A digest of every column as stored (types included: ``7`` and ``'7'`` differ), so a change by any
program is seen even within the same second or when it leaves ``updated_at`` alone. Edits, undo,
merge, the MCP server and sync all compare rows through :func:`row_fingerprint`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any


def row_fingerprint(row: Sequence[Any]) -> str:
    """The hex digest of one row's values, in the order the file's columns have."""
    return hashlib.sha1(repr(tuple(row)).encode("utf-8", "surrogatepass")).hexdigest()
