"""The ``Store`` agents use: the engine's store plus the operations as methods.

:class:`ora_desktop.core.store.Store` holds one open file with its reads and writes and sits
below search, context and the operations (ARCHITECTURE.md, "Layers"). This subclass sits above
them all and adds the conveniences a library user expects (``store.search(...)``,
``store.context(...)``, ``store.export(...)`` …); each method is one call into the layer that
owns the rule. ``ora_desktop.open_store`` returns this class.

A store opened with ``journal_as`` (``ora_desktop.open_store`` gives ``"library"``) journals
its own ``add``, ``update`` and ``delete`` as that actor, as the agent operations do
(:mod:`.operations.edits`): a person sees them in ``ora-desktop undo --list`` (BY column) and
can undo them. A write made inside the caller's own ``store.write()`` transaction, or by an
operation that journals itself, is not journalled again.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import store as engine
from . import timestamps
from .records import Initiator, Memory, Removed
from .validation import clean_fields

# The operations are imported when first called, as before the split: importing the library (and
# so starting the CLI or the window) does not load the exchange formats, purge or numpy.


def open_store(path: str | Path, readonly: bool = False, *, timeout: float | None = None,
               journal_as: str | None = None) -> Store:
    """Open an Ora memory file; raises an ``OraError`` subclass naming the file on failure.

    ``readonly=True`` writes nothing to the file or its folder. ``timeout`` is how many seconds
    to wait for another program's lock before :class:`DatabaseLocked` (default 5).
    ``journal_as`` (e.g. ``"library"``) journals this store's ``add``/``update``/``delete`` as
    that actor (see the module docstring); ``None`` does not.
    """
    return Store(Path(path), readonly=readonly, timeout=timeout, journal_as=journal_as)


class Store(engine.Store):
    """An open memory database (see :class:`ora_desktop.core.store.Store`), with search,
    context, duplicates, export, import and purge as methods."""

    def __init__(self, path: Path, readonly: bool = False, timeout: float | None = None, *,
                 journal_as: str | None = None) -> None:
        super().__init__(path, readonly=readonly, timeout=timeout)
        #: Who this store's own add/update/delete are journalled as (``None``: not journalled).
        self.journal_as = journal_as

    def _journals(self) -> bool:
        """Whether a write called now is the caller's own, to journal (not inside a transaction)."""
        return self.journal_as is not None and not self.readonly and not self.db.in_transaction()

    def add(self, content: str, type: str = "fact", importance: int = 5, *, id: str | None = None,
            on_duplicate: str = "add", **fields: Any) -> Memory:
        """See :meth:`ora_desktop.core.store.Store.add`; journalled with ``journal_as``."""
        from .sametext import identical_live

        if not self._journals() or (on_duplicate != "add" and identical_live(self, content) is not None):
            return super().add(content, type, importance, id=id, on_duplicate=on_duplicate, **fields)
        from .operations import edits

        self._new_row(timestamps.now_sql(), content, type, importance, id, **fields)  # bad values: before any SQL
        return edits.add(self, content, type, importance, initiator=Initiator.EXTERNAL, actor=self.journal_as,
                         id=id, on_duplicate=on_duplicate, **fields).memory

    def update(self, memory_id: str, *, expected_version: str | None = None, **fields: Any) -> Memory:
        """See :meth:`ora_desktop.core.store.Store.update`; journalled with ``journal_as``."""
        if not fields or not self._journals():
            return super().update(memory_id, expected_version=expected_version, **fields)
        from .operations import edits

        clean_fields(fields)  # bad values: refused before any SQL
        return edits.edit(self, memory_id, fields, expected_version=expected_version, initiator=Initiator.EXTERNAL,
                          actor=self.journal_as).memory

    def delete(self, ids: str | Iterable[str], reason: str = "deleted", **kw: Any) -> Removed:
        """See :meth:`ora_desktop.core.store.Store.delete`; journalled with ``journal_as`` (one
        undo brings every memory back)."""
        wanted = [ids] if isinstance(ids, str) else list(dict.fromkeys(ids))
        present = list(self.get_many(wanted)) if wanted and not kw and self._journals() else []
        if not present:  # unknown ids are ignored, as by the engine's delete
            return super().delete(wanted, reason, **kw)
        from .operations import edits

        done = edits.delete(self, present, reason, initiator=Initiator.EXTERNAL, actor=self.journal_as)
        return Removed(done.removed, done.batch, len(done.removed), done.change)

    def search(self, query: Any, limit: int = 50, *, mode: str | None = None, **kw: Any) -> Any:
        """Search this file (see :func:`ora_desktop.core.operations.searching.search_file`)."""
        from .operations.searching import search_file

        return search_file(self, query, limit, mode=mode, **kw)

    def duplicates(self, threshold: float | None = None, **kw: Any) -> Any:
        """Exact and near duplicate groups (see :mod:`ora_desktop.core.operations.duplicates`)."""
        from .operations.duplicates import DEFAULT_THRESHOLD, find_duplicates

        return find_duplicates(self, DEFAULT_THRESHOLD if threshold is None else threshold, **kw)

    def export(self, out: Any = None, format: str = "jsonl", **kw: Any) -> Any:
        """Export this file's memories (see :func:`ora_desktop.core.operations.export.export_memories`)."""
        from .operations.export import export_memories

        return export_memories([self], out, format, **kw)

    def import_from(self, source: str | Path, format: str = "auto", **kw: Any) -> Any:
        """Import memories into this file (see :func:`ora_desktop.core.operations.importing.import_memories`)."""
        from .operations.importing import import_memories

        return import_memories(self, source, format, **kw)

    def purge(self, ids: str | Iterable[str], rewrite_backups: bool = False) -> Any:
        """Forget memories for good, everywhere (see :mod:`ora_desktop.core.operations.purge`)."""
        from .operations.purge import purge

        return purge(self, ids if isinstance(ids, str) else list(ids), rewrite_backups=rewrite_backups)

    def pin(self, ids: str | Iterable[str]) -> Any:
        """Pin memories: first in every context (see :mod:`ora_desktop.core.operations.pins`)."""
        from .operations.pins import pin

        return pin(self, ids)

    def unpin(self, ids: str | Iterable[str]) -> Any:
        """Unpin memories (see :mod:`ora_desktop.core.operations.pins`)."""
        from .operations.pins import unpin

        return unpin(self, ids)

    def pinned(self) -> list[str]:
        """Ids of the pinned memories, oldest pin first."""
        from .pins import pinned_ids

        return pinned_ids(self)

    def context(self, query: str, token_budget: int = 2000, **kw: Any) -> Any:
        """Context for an agent's turn within a token budget (see :mod:`ora_desktop.core.context`)."""
        from .context import build_context

        return build_context(self, query, token_budget, **kw)
