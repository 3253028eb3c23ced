"""peewee models for the engine's own ``ora_desktop_*`` tables.

Models are bound per store (a subclass per database), so several files can be open at once
from several threads. The seed tables have no models: they are created by the seed's own SQL
and read and written with plain statements, never created or altered through peewee.
"""

from __future__ import annotations

from dataclasses import dataclass

import peewee as pw


class TrashRow(pw.Model):
    """Rows removed by a delete, expiry cleanup or retention run, kept to be restored."""

    memory_id = pw.TextField(index=True)
    deleted_at = pw.TextField()
    reason = pw.TextField()
    batch = pw.TextField(index=True)
    row_json = pw.TextField()

    class Meta:
        table_name = "ora_desktop_trash"


class StateRow(pw.Model):
    """Small key/value facts the engine keeps in a file (e.g. when decay last ran)."""

    key = pw.TextField(primary_key=True)
    value = pw.TextField()

    class Meta:
        table_name = "ora_desktop_state"


class TrashLinkRow(pw.Model):
    """Links a delete edited in other memories (``related_to``, ``superseded_by``), before and
    after, kept with the delete's trash batch so an undelete puts them back exactly."""

    batch = pw.TextField(index=True)
    memory_id = pw.TextField()
    related_before = pw.TextField(null=True)
    related_after = pw.TextField(null=True)
    superseded_before = pw.TextField(null=True)
    superseded_after = pw.TextField(null=True)

    class Meta:
        table_name = "ora_desktop_trash_links"


@dataclass(frozen=True)
class BoundModels:
    """The models of one store, bound to its database."""
    trash: type[TrashRow]
    state: type[StateRow]
    trash_links: type[TrashLinkRow]


def bind(db: pw.Database) -> BoundModels:
    """Subclasses of every model bound to ``db`` (leaves the base classes untouched)."""

    def sub(model: type[pw.Model]) -> type:
        meta = type("Meta", (), {"database": db, "table_name": model._meta.table_name})
        return type(model.__name__, (model,), {"Meta": meta, "__module__": __name__})

    return BoundModels(sub(TrashRow), sub(StateRow), sub(TrashLinkRow))
