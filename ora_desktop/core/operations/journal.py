"""The undo journal: the last user operations on a file, kept in the file so any process can undo them.

Each journalled operation (edit, bulk edit, delete, restore, add, merge, supersede, link) writes
one row to the plain table ``ora_desktop_journal`` in the agent's own file, in the same
``BEGIN IMMEDIATE`` transaction as the operation itself, so a rolled-back write leaves no entry.
The table is created by the first journalled write (DESIGN contract 2: only plain
``ora_desktop_*`` tables, only when the person asked for a write) and holds the last
:data:`KEEP` entries.

An entry holds what the undo needs (see :mod:`.undo`):

- ``added``: ids the operation created, which the undo deletes again (recoverably);
- ``batch``: the trash batch a delete filled, which the undo restores;
- ``rows``: the previous values of the columns the operation changed, per id, written back as
  they were (``updated_at`` and ``sync_status`` included, so an undo leaves the rows as before);
- ``review``: for a review mark or flag, the reviewer and every mark and flag they had before;
- ``decay``: for a decay (the one journalled job), its previous mark and rule parameters; the
  previous health values stay in the file's ``ora_desktop_decay_undo`` table
  (:mod:`..maintenance.decay`), not here, so a decay of a million memories adds one small entry;

and a fingerprint of every touched row as the operation left it (``None``: the row is gone),
and who made it (``actor``: ``mcp:<client name>`` for an MCP client, ``library`` for an agent's
library call; none for a person's or a job's write). Files journalled before the ``actor``
column existed get it at their next journalled write; their old entries read as ``None``.
An undo is refused when a fingerprint no longer matches: someone changed the memory since.

An undone entry stays, marked ``undone``, holding what redoes it (the same shape: an
:class:`Undo` of the undo) and the fingerprints the undo left, until a new journalled write drops
every undone entry (a new step after an undo ends the redo branch, as in an editor). This one
history per file is what ``ora-desktop undo``/``redo`` and the window's Undo/Redo walk.
A purge forgets every entry that touched a purged memory (:func:`forget_memories`): the
previous values an entry keeps may be the very text being purged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import engine_tables, timestamps
from ..rawsql import run_sql
from ..records import Change, ChangeKind, Initiator
from ..writes import IDS_JSON

if TYPE_CHECKING:
    from ..store import Store

TABLE = engine_tables.JOURNAL
#: The previous health values of the latest decay (written by :mod:`..maintenance.decay`).
DECAY_UNDO_TABLE = engine_tables.DECAY_UNDO
#: How many entries a file keeps (older ones are forgotten: they can no longer be undone).
KEEP = 50


@dataclass(frozen=True, slots=True)
class Undo:
    """What reverses an operation: ids to delete again, a trash batch to restore, previous values,
    a reviewer's previous marks (``{"reviewer": name, "rows": [...]}``), or a decay's previous
    mark and parameters."""

    added: tuple[str, ...] = ()
    batch: str | None = None
    rows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    decay: Mapping[str, Any] | None = None
    review: Mapping[str, Any] | None = None

    def to_json(self, rows: Ahead | None = None) -> str:
        """The JSON kept in the journal; ``rows``: more previous values encoded ahead (:class:`Ahead`)."""
        data: dict[str, Any] = {"added": list(self.added), "batch": self.batch, "rows": self.rows}
        data.update({k: v for k, v in (("decay", self.decay), ("review", self.review)) if v is not None})
        if rows is None:
            return json.dumps(data)
        data["rows"] = None
        return json.dumps(data).replace('"rows": null', f'"rows": {rows.text(self.rows)}', 1)

    @classmethod
    def from_json(cls, text: str) -> Undo:
        data = json.loads(text)
        return cls(tuple(data.get("added") or ()), data.get("batch"), data.get("rows") or {}, data.get("decay"),
                   data.get("review"))


@dataclass(frozen=True, slots=True)
class Entry:
    """One journalled operation."""

    id: int
    at: datetime | None
    kind: ChangeKind
    initiator: Initiator
    label: str
    undo: Undo
    #: id -> fingerprint of the row as the operation left it (``None``: the row was removed).
    after: Mapping[str, str | None]
    #: Who made it when not a person or a job: ``mcp:<client name>``, ``library``.
    actor: str | None = None
    #: Undone (``undo`` then holds what redoes it); a new journalled write forgets it.
    undone: bool = False

    @property
    def who(self) -> str:
        """The actor, else ``person`` for a user's write, else the initiator's name."""
        return self.actor or ("person" if self.initiator is Initiator.USER else self.initiator.value)


def capture(store: Store, ids: Iterable[str], columns: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The current values of ``columns`` (those the file has) for ``ids`` that exist (one statement)."""
    cols = [c for c in dict.fromkeys(columns) if c in store.columns and c != "id"]
    ids = list(dict.fromkeys(ids))
    if not ids or not cols:
        return {}
    select = ", ".join(f'"{c}"' for c in cols)
    rows = run_sql(store, f"SELECT id, {select} FROM memories WHERE id IN {IDS_JSON}", [json.dumps(ids)])
    return {r[0]: dict(zip(cols, r[1:], strict=True)) for r in rows}


def fingerprints(store: Store, ids: Iterable[str]) -> dict[str, str | None]:
    """Each row's ``version`` (the fingerprint of every column; ``None`` for an id not in the file)."""
    return store.versions(ids)


@dataclass
class Ahead:
    """Members of a JSON object (id -> value) encoded ahead, outside the write lock, for the
    journal entry a chunked write makes in its last chunk (which holds the lock: encoding
    100,000 ids there held it for a second and more)."""

    ids: set[str] = field(default_factory=set)
    parts: list[str] = field(default_factory=list)

    def add(self, values: Mapping[str, Any]) -> None:
        if values:
            self.ids.update(values)
            self.parts.append(json.dumps(dict(values))[1:-1])

    def text(self, rest: Mapping[str, Any]) -> str:
        """The whole object: what was added, then ``rest``."""
        return "{" + ", ".join(p for p in (*self.parts, json.dumps(dict(rest))[1:-1]) if p) + "}"


def absent(ids: Iterable[str]) -> Ahead:
    """The ``after`` of ids a delete is about to remove (each absent), encoded ahead."""
    ahead = Ahead()
    ahead.add(dict.fromkeys(sorted(set(ids))))
    return ahead


def record(store: Store, change: Change, label: str, undo: Undo, actor: str | None = None,
           after: Ahead | None = None, rows: Ahead | None = None) -> int:
    """Journal an operation that just wrote ``change`` (call inside its write transaction).

    The rows it removed are gone by its own hand: they are recorded as absent without being
    looked up. A chunked write passes what its earlier chunks prepared: ``after``, the versions
    they left (or absent ids), and ``rows``, the previous values they kept (``undo.rows`` then
    holds the last chunk's only); only the rest is read and encoded here."""
    if after is None or not after.ids <= change.ids:
        after = Ahead()
    rest = change.ids - after.ids
    gone = (change.removed - change.added - change.changed) & rest
    versions = {**dict.fromkeys(gone), **fingerprints(store, rest - gone)}
    text = after.text(versions)
    store.create_engine_tables(TABLE)  # actor and undone come with the table, or its migrations (3, 4)
    run_sql(store, f"DELETE FROM {TABLE} WHERE undone = 1")  # a new step ends the redo branch
    cursor = run_sql(store,
        f"INSERT INTO {TABLE} (at, kind, initiator, label, undo, after, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [timestamps.now_sql(), change.kind.value, change.initiator.value, label, undo.to_json(rows), text, actor],
    )
    entry_id = int(cursor.lastrowid)
    run_sql(store, f"DELETE FROM {TABLE} WHERE id <= ?", [entry_id - KEEP])
    return entry_id


def _entry(row: Sequence[Any]) -> Entry:
    entry_id, at, kind, initiator, label, undo, after, actor, undone = row
    return Entry(int(entry_id), timestamps.parse(at), ChangeKind(kind), Initiator(initiator), label,
                 Undo.from_json(undo), json.loads(after), actor, bool(undone))


def _columns(store: Store) -> str:
    """The entry's columns; a file journalled by an older version (read-only) lacks the newer ones."""
    have = {r[1] for r in run_sql(store, f"PRAGMA table_info({TABLE})")}
    return (f"id, at, kind, initiator, label, undo, after, {'actor' if 'actor' in have else 'NULL'}, "
            f"{'undone' if 'undone' in have else '0'}")


def entries(store: Store, limit: int = KEEP) -> list[Entry]:
    """The steps that can be undone, newest first (empty when nothing was ever journalled in this file)."""
    return _select(store, "= 0", "DESC", limit)


def redoable(store: Store, limit: int = KEEP) -> list[Entry]:
    """The undone steps, the next to redo first (the one undone last)."""
    return _select(store, "= 1", "ASC", limit)


def _select(store: Store, undone: str, order: str, limit: int) -> list[Entry]:
    if not store.has_table(TABLE):
        return []
    columns = _columns(store)
    state = columns.rsplit(", ", 1)[1]
    rows = run_sql(store, f"SELECT {columns} FROM {TABLE} WHERE {state} {undone} ORDER BY id {order} LIMIT ?",
                   [int(limit)])
    return [_entry(r) for r in rows]


def get(store: Store, entry_id: int) -> Entry | None:
    """One entry, or ``None`` when the journal no longer holds it."""
    if not store.has_table(TABLE):
        return None
    row = run_sql(store, f"SELECT {_columns(store)} FROM {TABLE} WHERE id = ?", [int(entry_id)]).fetchone()
    return None if row is None else _entry(row)


def undone_now(store: Store, entry_id: int) -> bool | None:
    """Whether entry ``entry_id`` is undone now (``None``: the journal no longer holds it), without
    reading the entry itself (a large step's is megabytes)."""
    if not store.has_table(TABLE):
        return None
    row = run_sql(store, f"SELECT {_columns(store).rsplit(', ', 1)[1]} FROM {TABLE} WHERE id = ?",
                  [int(entry_id)]).fetchone()
    return None if row is None else bool(row[0])


def forget(store: Store, entry_id: int) -> None:
    """Drop an entry (it cannot be redone, or was refused); call inside a write."""
    run_sql(store, f"DELETE FROM {TABLE} WHERE id = ?", [int(entry_id)])


def flip(store: Store, entry: Entry, reverse: Undo, ids: Iterable[str], after: Ahead | None = None,
         rows: Ahead | None = None) -> None:
    """Mark ``entry`` undone (or done again) with ``reverse``, what takes this step back, and the
    fingerprints of ``ids`` as it left them; call inside the write that undid (redid) it. An undo
    in chunks passes what its chunks kept (``after``: the fingerprints they left; ``rows``: more
    previous values, beside ``reverse.rows``): only the other ids are read here."""
    after = after or Ahead()
    text = after.text(fingerprints(store, set(ids) - after.ids))
    run_sql(store, f"UPDATE {TABLE} SET undone = ?, undo = ?, after = ? WHERE id = ?",
            [int(not entry.undone), reverse.to_json(rows), text, entry.id])


def write_back(store: Store, rows: Mapping[str, Mapping[str, Any]]) -> None:
    """Put previous column values back exactly (no sync rule), one ``executemany`` per set of
    columns; call inside a write. Tells no listener (the caller does)."""
    groups: dict[tuple[str, ...], list[list[object]]] = {}
    for memory_id, values in rows.items():
        cols = tuple(c for c in values if c in store.columns)
        groups.setdefault(cols, []).append([values[c] for c in cols] + [memory_id])
    for cols, params in groups.items():
        if cols:
            sets = ", ".join(f'"{c}" = ?' for c in cols)
            store.db.cursor().executemany(f"UPDATE memories SET {sets} WHERE id = ?", params)


def forget_memories(store: Store, ids: Iterable[str]) -> int:
    """Drop every entry that touched one of ``ids`` (a purge: the journal may hold their old
    text, which must go with them), and their rows of a decay's kept values; call inside a
    write. Returns how many entries went."""
    ids = list(dict.fromkeys(ids))
    if ids and store.has_table(DECAY_UNDO_TABLE):  # a decay's undo then leaves them out
        run_sql(store, f"DELETE FROM {DECAY_UNDO_TABLE} WHERE id IN {IDS_JSON}", [json.dumps(ids)])
    if not ids or not store.has_table(TABLE):
        return 0
    return run_sql(store,
        f"DELETE FROM {TABLE} WHERE EXISTS (SELECT 1 FROM json_each({TABLE}.after) j WHERE j.key IN {IDS_JSON})",
        [json.dumps(ids)]).rowcount


@dataclass(frozen=True, slots=True)
class NextSteps:
    """What Undo and Redo would take next in a file (``None``: nothing), as every face names them."""

    undo: Entry | None
    redo: Entry | None

    @property
    def undo_text(self) -> str:
        """``Undo edit importance of m004`` (empty when there is nothing to undo)."""
        return f"Undo {self.undo.label}" if self.undo else ""

    @property
    def redo_text(self) -> str:
        return f"Redo {self.redo.label}" if self.redo else ""


def next_steps(store: Store) -> NextSteps:
    """The step Undo takes back next and the step Redo does again next, in ``store``'s file."""
    undo_next, redo_next = entries(store, limit=1), redoable(store, limit=1)
    return NextSteps(undo_next[0] if undo_next else None, redo_next[0] if redo_next else None)
