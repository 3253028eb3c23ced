"""Typed links between memories: ``supports``, ``contradicts``, ``derived-from``, ``see-also`` or
any short free text, kept beside the seed's ``related_to`` (which stays the untyped set agents know).

A typed link points one way (``A contradicts B``) and lives in the plain table
``ora_desktop_links`` of the agent's own file (its DDL is in :mod:`.engine_tables`), created by
the first typed link and never by reading (DESIGN contract 2): a file nobody typed a link in has
none. This module reads them and
checks a link type; :mod:`ora_desktop.core.operations.links` writes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import engine_tables
from .errors import InvalidValue
from .rawsql import all_rows

if TYPE_CHECKING:
    from .store import Store

TABLE = engine_tables.LINKS
#: The link types people reason with (any other short text is accepted too).
LINK_TYPES = ("supports", "contradicts", "derived-from", "see-also")
CONTRADICTS = "contradicts"
MAX_TYPE = 40
_TYPE_TEXT = re.compile(r"^[^\x00-\x1f\x7f]+$")


@dataclass(frozen=True, slots=True)
class TypedLink:
    """``source`` --type--> ``target``."""

    source: str
    target: str
    type: str


def check_type(value: object) -> str:
    """A link type: one of :data:`LINK_TYPES` or free text of 1 to 40 characters on one line
    (spaces around it dropped, the known types matched whatever their case)."""
    text = str(value or "").strip()
    if not text or not _TYPE_TEXT.match(text):
        raise InvalidValue("type", f"{value!r}: give a link type ({', '.join(LINK_TYPES)}, or a few words)")
    if len(text) > MAX_TYPE:
        raise InvalidValue("type", f"{len(text)} characters; keep a link type to {MAX_TYPE}")
    lowered = text.lower().replace("_", "-").replace(" ", "-")
    return lowered if lowered in LINK_TYPES else text


def typed_links(store: Store, ids: Iterable[str] | None = None) -> list[TypedLink]:
    """Typed links touching ``ids`` (either end), or every typed link of the file (``None``)."""
    if not store.has_table(TABLE):
        return []
    if ids is None:
        rows = all_rows(store, f"SELECT source, target, type FROM {TABLE} ORDER BY rowid")
    else:
        wanted = json.dumps(list(dict.fromkeys(ids)))
        rows = all_rows(store, f"SELECT source, target, type FROM {TABLE} WHERE source IN "
                               "(SELECT value FROM json_each(?)) OR target IN (SELECT value FROM json_each(?)) "
                               "ORDER BY rowid", (wanted, wanted))
    return [TypedLink(str(s), str(t), str(k)) for s, t, k in rows]


__all__ = ["CONTRADICTS", "LINK_TYPES", "TABLE", "TypedLink", "check_type", "typed_links"]
